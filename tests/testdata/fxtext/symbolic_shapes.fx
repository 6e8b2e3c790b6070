# Symbolic shapes: sym_size nodes, SymInt arithmetic printed infix (read as
# operator.* nodes), a view with a symbolic size, a runtime assertion whose
# message torch printed as a quoted string, and the range constraints.
# pipeline: dynamo:
ExportedProgram:
    class GraphModule(torch.nn.Module):
        def forward(self, x: "f32[s0, s1, 8]", y: "f32[s0*s1, 8]"):
            sym_size_int: "Sym(s0)" = torch.ops.aten.sym_size.int(x, 0)
            sym_size_int_1: "Sym(s1)" = torch.ops.aten.sym_size.int(x, 1)
            mul: "Sym(s0*s1)" = sym_size_int * sym_size_int_1
            view: "f32[s0*s1, 8]" = torch.ops.aten.view.default(x, [mul, 8]);  x = mul = None
            add: "f32[s0*s1, 8]" = torch.ops.aten.add.Tensor(view, y);  view = y = None
            floordiv: "Sym(s0//2)" = sym_size_int // 2
            ge: "Sym(s0//2 >= 2)" = floordiv >= 2;  floordiv = None
            _assert_scalar_default = torch.ops.aten._assert_scalar.default(ge, "Runtime assertion failed for expression s0//2 >= 2 on node 'ge'");  ge = _assert_scalar_default = None
            view_1: "f32[s0, s1, 8]" = torch.ops.aten.view.default(add, [sym_size_int, sym_size_int_1, 8]);  add = sym_size_int = sym_size_int_1 = None
            return (view_1,)

Graph signature:
    # inputs
    x: USER_INPUT
    y: USER_INPUT

    # outputs
    view_1: USER_OUTPUT

Range constraints: {s0: VR[4, 64], s1: VR[2, int_oo]}
# -----
# The graph form prints no types; fxtext reads an annotation in the slot
# before [num_users=N], where torch puts the node's Python type name. A
# SymInt input, and values the graph form prints bare (cpu, torch.float32).
graph():
    %x : "f32[s0, 16]" [num_users=3] = placeholder[target=x]
    %n : "Sym(s1)" [num_users=1] = placeholder[target=n]
    %sym_size_int : [num_users=2] = call_function[target=torch.ops.aten.sym_size.int](args = (%x, 0), kwargs = {})
    %add : [num_users=1] = call_function[target=operator.add](args = (%sym_size_int, %n), kwargs = {})
    %full : [num_users=1] = call_function[target=torch.ops.aten.full.default](args = ([%add, 16], 0.0), kwargs = {dtype: torch.float32, device: cpu, pin_memory: False})
    %cat : [num_users=1] = call_function[target=torch.ops.aten.cat.default](args = ([%x, %full],), kwargs = {})
    %sub : [num_users=1] = call_function[target=operator.sub](args = (%sym_size_int, 1), kwargs = {})
    %narrow : [num_users=1] = call_function[target=torch.ops.aten.narrow.default](args = (%cat, 0, 1, %sub), kwargs = {})
    return (narrow, add)
# -----
# The older graph form: [#users=N] and a list return.
graph():
    %arg0_1 : "f32[s0, 4]" [#users=1] = placeholder[target=arg0_1]
    %sym_size : [#users=1] = call_function[target=torch.ops.aten.sym_size.int](args = (%arg0_1, 0), kwargs = {})
    %mul : [#users=1] = call_function[target=operator.mul](args = (%sym_size, 4), kwargs = {})
    %view : [#users=1] = call_function[target=torch.ops.aten.view.default](args = (%arg0_1, [%mul]), kwargs = {})
    return [view]
