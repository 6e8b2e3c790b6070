# scan: a running sum. The carry keeps init's type, the per-step outputs
# are stacked along the scanned dim; the combine function sees one slice.
# pipeline: dynamo:
ExportedProgram:
    class GraphModule(torch.nn.Module):
        def forward(self, init: "f32[2]", xs: "f32[s0, 2]"):
            scan_combine_graph_0 = self.scan_combine_graph_0
            scan = torch.ops.higher_order.scan(scan_combine_graph_0, [init], [xs], []);  scan_combine_graph_0 = init = xs = None
            getitem: "f32[2]" = scan[0]
            getitem_1: "f32[s0, 2]" = scan[1];  scan = None
            return (getitem, getitem_1)

        class scan_combine_graph_0(torch.nn.Module):
            def forward(self, carry: "f32[2]", x: "f32[2]"):
                add: "f32[2]" = torch.ops.aten.add.Tensor(carry, x);  carry = x = None
                clone: "f32[2]" = torch.ops.aten.clone.default(add)
                return [add, clone]

Graph signature:
    # inputs
    init: USER_INPUT
    xs: USER_INPUT

    # outputs
    getitem: USER_OUTPUT
    getitem_1: USER_OUTPUT

Range constraints: {s0: VR[0, int_oo]}
