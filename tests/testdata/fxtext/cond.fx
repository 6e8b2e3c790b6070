# cond: an ExportedProgram print (readable form) with a symbolic predicate.
# The branches are nested subgraph classes; getitem on the cond node names
# its result. The parameter is passed to the branches as an operand.
# pipeline: dynamo:
ExportedProgram:
    class GraphModule(torch.nn.Module):
        def forward(self, p_scale: "f32[4]", x: "f32[s0, 4]"):
             # File: model.py:10 in forward, code: return torch.cond(x.shape[0] > 4, big, small, (x, self.scale))
            sym_size_int: "Sym(s0)" = torch.ops.aten.sym_size.int(x, 0)
            gt: "Sym(s0 > 4)" = sym_size_int > 4;  sym_size_int = None
            true_graph_0 = self.true_graph_0
            false_graph_0 = self.false_graph_0
            cond = torch.ops.higher_order.cond(gt, true_graph_0, false_graph_0, (x, p_scale));  gt = true_graph_0 = false_graph_0 = x = p_scale = None
            getitem: "f32[s0, 4]" = cond[0];  cond = None
            return (getitem,)

        class true_graph_0(torch.nn.Module):
            def forward(self, x: "f32[s0, 4]", p_scale: "f32[4]"):
                 # File: model.py:4 in big, code: return x * scale
                mul: "f32[s0, 4]" = torch.ops.aten.mul.Tensor(x, p_scale);  x = p_scale = None
                return (mul,)

        class false_graph_0(torch.nn.Module):
            def forward(self, x: "f32[s0, 4]", p_scale: "f32[4]"):
                 # File: model.py:7 in small, code: return x.sin()
                sin: "f32[s0, 4]" = torch.ops.aten.sin.default(x);  x = None
                return (sin,)

Graph signature:
    # inputs
    p_scale: PARAMETER target='scale'
    x: USER_INPUT

    # outputs
    getitem: USER_OUTPUT

Range constraints: {s0: VR[2, int_oo]}
# -----
# A data-dependent predicate, two results per branch. The branch classes
# carry no annotations: their inputs take the types of cond's operands and
# every result type comes from shape inference.
class GraphModule(torch.nn.Module):
    def forward(self, x: "f32[3, 2]"):
        sum_1 = torch.ops.aten.sum.default(x)
        gt = torch.ops.aten.gt.Scalar(sum_1, 0.5);  sum_1 = None
        true_graph_0 = self.true_graph_0
        false_graph_0 = self.false_graph_0
        cond = torch.ops.higher_order.cond(gt, true_graph_0, false_graph_0, [x]);  gt = true_graph_0 = false_graph_0 = x = None
        getitem = cond[0]
        getitem_1 = cond[1];  cond = None
        return (getitem, getitem_1)

    class true_graph_0(torch.nn.Module):
        def forward(self, x):
            cos = torch.ops.aten.cos.default(x)
            amax = torch.ops.aten.amax.default(x, [1]);  x = None
            return (cos, amax)

    class false_graph_0(torch.nn.Module):
        def forward(self, x):
            neg = torch.ops.aten.neg.default(x)
            amin = torch.ops.aten.amin.default(x, [1]);  x = None
            return (neg, amin)
