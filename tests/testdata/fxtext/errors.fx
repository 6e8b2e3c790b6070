# Dumps that lack what the IR needs fail with an error that names the file,
# line, column and node, and says what is missing. What a dump does not type
# reads as unknown; lowering refuses it, naming the first unknown value.
# pipeline: dynamo:
# error: values have an unknown type, first %x (input of graph forward)
def forward(self, x):
    relu = torch.ops.aten.relu.default(x)
    return (relu,)
# -----
# error: first %getitem: node %getitem (opaque.call.default) in graph forward is an opaque call of "torch.ops.higher_order.cond" (kept opaque: the dump does not print the subgraphs
graph():
    %x : "f32[2]" [num_users=1] = placeholder[target=x]
    %p : "b8[]" [num_users=1] = placeholder[target=p]
    %true_graph_0 : [num_users=1] = get_attr[target=true_graph_0]
    %false_graph_0 : [num_users=1] = get_attr[target=false_graph_0]
    %cond : [num_users=1] = call_function[target=torch.ops.higher_order.cond](args = (%p, %true_graph_0, %false_graph_0, [%x]), kwargs = {})
    %getitem : [num_users=1] = call_function[target=operator.getitem](args = (%cond, 0), kwargs = {})
    return (getitem,)
# -----
# error: node %custom (opaque.call.default) in graph forward is an opaque call of "torch.ops.mylib.custom.default" (kept opaque: not in the op table
def forward(self, x: "f32[2]"):
    custom = torch.ops.mylib.custom.default(x)
    return (custom,)
# -----
# error: no type for %add: the dump does not annotate it and shape inference failed
def forward(self, x: "f32[2]", y: "f32[3]"):
    add = torch.ops.aten.add.Tensor(x, y)
    return (add,)
