# while_loop: a counter and a state carried through the loop, a weight as an
# additional input. torch prints aten.add.Tensor(i, 1) with a Python number
# for a Tensor argument; it reads as the op's Scalar overload.
# pipeline: dynamo:
ExportedProgram:
    class GraphModule(torch.nn.Module):
        def forward(self, p_w: "f32[4, 4]", x: "f32[s0, 4]"):
            full: "i64[]" = torch.ops.aten.full.default([], 0, dtype = torch.int64, device = device(type='cpu'), pin_memory = False)
            while_loop_cond_graph_0 = self.while_loop_cond_graph_0
            while_loop_body_graph_0 = self.while_loop_body_graph_0
            while_loop = torch.ops.higher_order.while_loop(while_loop_cond_graph_0, while_loop_body_graph_0, (full, x), (p_w,));  while_loop_cond_graph_0 = while_loop_body_graph_0 = full = x = p_w = None
            getitem: "i64[]" = while_loop[0]
            getitem_1: "f32[s0, 4]" = while_loop[1];  while_loop = None
            return (getitem, getitem_1)

        class while_loop_cond_graph_0(torch.nn.Module):
            def forward(self, i: "i64[]", x: "f32[s0, 4]", p_w: "f32[4, 4]"):
                lt: "b8[]" = torch.ops.aten.lt.Scalar(i, 3);  i = None
                return lt

        class while_loop_body_graph_0(torch.nn.Module):
            def forward(self, i: "i64[]", x: "f32[s0, 4]", p_w: "f32[4, 4]"):
                add: "i64[]" = torch.ops.aten.add.Tensor(i, 1);  i = None
                mm: "f32[s0, 4]" = torch.ops.aten.mm.default(x, p_w);  x = p_w = None
                tanh: "f32[s0, 4]" = torch.ops.aten.tanh.default(mm);  mm = None
                return (add, tanh)

Graph signature:
    # inputs
    p_w: PARAMETER target='w'
    x: USER_INPUT

    # outputs
    getitem: USER_OUTPUT
    getitem_1: USER_OUTPUT

Range constraints: {s0: VR[2, 1024]}
# -----
# The same loop in gm.code style inside classes (no annotations below the
# inputs): the subgraph inputs are the carried and additional inputs.
class GraphModule(torch.nn.Module):
    def forward(self, i: "i64[]", x: "f32[8]"):
        while_loop_cond_graph_0 = self.while_loop_cond_graph_0
        while_loop_body_graph_0 = self.while_loop_body_graph_0
        while_loop = torch.ops.higher_order.while_loop(while_loop_cond_graph_0, while_loop_body_graph_0, (i, x), ())
        getitem = while_loop[0]
        getitem_1 = while_loop[1];  while_loop = None
        return (getitem, getitem_1)

    class while_loop_cond_graph_0(torch.nn.Module):
        def forward(self, arg0_1, arg1_1):
            sum_1 = torch.ops.aten.sum.default(arg1_1);  arg1_1 = None
            lt = torch.ops.aten.lt.Scalar(sum_1, 10);  sum_1 = None
            return lt

    class while_loop_body_graph_0(torch.nn.Module):
        def forward(self, arg0_1, arg1_1):
            sub = torch.ops.aten.sub.Tensor(arg0_1, 1);  arg0_1 = None
            add = torch.ops.aten.add.Tensor(arg1_1, 1);  arg1_1 = None
            return (sub, add)
