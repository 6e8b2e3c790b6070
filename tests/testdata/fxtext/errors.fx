# Dumps that lack what the IR needs fail with an error that names the file,
# line, column and node, and says what is missing.
# pipeline: dynamo:
# error: input x has no type
def forward(self, x):
    relu = torch.ops.aten.relu.default(x)
    return (relu,)
# -----
# error: the dump has no subgraph class true_graph_0
graph():
    %x : "f32[2]" [num_users=1] = placeholder[target=x]
    %p : "b8[]" [num_users=1] = placeholder[target=p]
    %true_graph_0 : [num_users=1] = get_attr[target=true_graph_0]
    %false_graph_0 : [num_users=1] = get_attr[target=false_graph_0]
    %cond : [num_users=1] = call_function[target=torch.ops.higher_order.cond](args = (%p, %true_graph_0, %false_graph_0, [%x]), kwargs = {})
    %getitem : [num_users=1] = call_function[target=operator.getitem](args = (%cond, 0), kwargs = {})
    return (getitem,)
# -----
# error: unknown operator torch.ops.mylib.custom.default
def forward(self, x: "f32[2]"):
    custom = torch.ops.mylib.custom.default(x)
    return (custom,)
# -----
# error: no type for %add: the dump does not annotate it and shape inference failed
def forward(self, x: "f32[2]", y: "f32[3]"):
    add = torch.ops.aten.add.Tensor(x, y)
    return (add,)
