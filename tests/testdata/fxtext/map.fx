# map: map_impl over the leading dim of xs. The body sees one slice of xs
# and the broadcast positional argument; its results come back stacked.
# pipeline: dynamo:
ExportedProgram:
    class GraphModule(torch.nn.Module):
        def forward(self, xs: "f32[s0, 3]", y: "f32[3]"):
            body_graph_0 = self.body_graph_0
            map_impl = torch.ops.higher_order.map_impl(body_graph_0, [xs], [y]);  body_graph_0 = xs = y = None
            getitem: "f32[s0, 3]" = map_impl[0]
            getitem_1: "f32[s0]" = map_impl[1];  map_impl = None
            return (getitem, getitem_1)

        class body_graph_0(torch.nn.Module):
            def forward(self, xs: "f32[3]", y: "f32[3]"):
                add: "f32[3]" = torch.ops.aten.add.Tensor(xs, y);  xs = y = None
                sum_1: "f32[]" = torch.ops.aten.sum.default(add)
                return (add, sum_1)

Graph signature:
    # inputs
    xs: USER_INPUT
    y: USER_INPUT

    # outputs
    getitem: USER_OUTPUT
    getitem_1: USER_OUTPUT

Range constraints: {s0: VR[1, 64]}
