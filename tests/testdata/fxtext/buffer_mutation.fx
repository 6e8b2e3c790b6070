# Buffer mutation: the updated buffers are extra leading outputs marked
# BUFFER_MUTATION in the signature. Parameters and buffers become weights
# with their types and no data (a text dump has none).
# pipeline: dynamo:
ExportedProgram:
    class GraphModule(torch.nn.Module):
        def forward(self, p_weight: "f32[4]", b_running_mean: "f32[4]", b_num_batches_tracked: "i64[]", x: "f32[s0, 4]"):
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
    b_running_mean: BUFFER target='running_mean' persistent=True
    b_num_batches_tracked: BUFFER target='num_batches_tracked' persistent=True
    x: USER_INPUT

    # outputs
    lerp: BUFFER_MUTATION target='running_mean'
    add: BUFFER_MUTATION target='num_batches_tracked'
    mul: USER_OUTPUT

Range constraints: {s0: VR[2, int_oo]}
# -----
# The graph form followed by a printed graph signature (str(ep.graph_signature)
# under a "Graph signature:" line): a non-persistent buffer and a user input
# mutation.
graph():
    %b_counter : "i64[]" [num_users=1] = placeholder[target=b_counter]
    %x : "f32[3]" [num_users=1] = placeholder[target=x]
    %add : [num_users=1] = call_function[target=torch.ops.aten.add.Tensor](args = (%b_counter, 1), kwargs = {})
    %mul : [num_users=2] = call_function[target=torch.ops.aten.mul.Tensor](args = (%x, 2), kwargs = {})
    %cos : [num_users=1] = call_function[target=torch.ops.aten.cos.default](args = (%mul,), kwargs = {})
    return (add, mul, cos)
Graph signature:
# inputs
b_counter: BUFFER target='counter' persistent=False
x: USER_INPUT

# outputs
add: BUFFER_MUTATION target='counter'
mul: USER_INPUT_MUTATION target='x'
cos: USER_OUTPUT
