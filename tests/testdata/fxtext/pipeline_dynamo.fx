# The default dynamo pipeline on a dump: an unused buffer's weight is dropped.
# target: dynamo
ExportedProgram:
    class GraphModule(torch.nn.Module):
        def forward(self, p_weight: "f32[4]", b_unused: "f32[4]", b_running_mean: "f32[4]", b_num_batches_tracked: "i64[]", x: "f32[s0, 4]"):
             # File: m.py:8 in forward, code: self.num_batches_tracked.add_(1)
            add: "i64[]" = torch.ops.aten.add.Tensor(b_num_batches_tracked, 1);  b_num_batches_tracked = None

             # File: m.py:9 in forward, code: mean = x.mean(0)
            mean: "f32[4]" = torch.ops.aten.mean.dim(x, [0])

             # File: m.py:10 in forward, code: self.running_mean.lerp_(mean, 0.1)
            lerp: "f32[4]" = torch.ops.aten.lerp.Scalar(b_running_mean, mean, 0.1);  b_running_mean = mean = None

             # File: m.py:11 in forward, code: return (x - self.running_mean) * self.weight
            sub: "f32[s0, 4]" = torch.ops.aten.sub.Tensor(x, lerp);  x = None
            mul: "f32[s0, 4]" = torch.ops.aten.mul.Tensor(sub, p_weight);  sub = p_weight = None
            return (lerp, add, mul)

Graph signature:
    # inputs
    p_weight: PARAMETER target='weight'
    b_unused: BUFFER target='unused' persistent=True
    b_running_mean: BUFFER target='running_mean' persistent=True
    b_num_batches_tracked: BUFFER target='num_batches_tracked' persistent=True
    x: USER_INPUT

    # outputs
    lerp: BUFFER_MUTATION target='running_mean'
    add: BUFFER_MUTATION target='num_batches_tracked'
    mul: USER_OUTPUT

Range constraints: {s0: VR[2, int_oo]}
