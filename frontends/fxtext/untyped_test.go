package fxtext

import (
	"strings"
	"testing"

	"github.com/fxport/fxport/ir"
)

func mustParse(t *testing.T, src string, opts Options) *ir.Program {
	t.Helper()
	p, err := Parse([]byte(src), "t.fx", opts)
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	return p
}

// printParsed checks that the IR text of p parses back to the same text.
func printParsed(t *testing.T, p *ir.Program) string {
	t.Helper()
	text := ir.Print(p)
	q, err := ir.Parse([]byte(text), "t.fxir")
	if err != nil {
		t.Fatalf("IR text does not parse back: %v\n%s", err, text)
	}
	if again := ir.Print(q); again != text {
		t.Fatalf("IR text changes through parse:\n%s\n---\n%s", text, again)
	}
	return text
}

const untypedGraph = `graph():
    %x : [num_users=1] = placeholder[target=x]
    %w : [num_users=1] = placeholder[target=w]
    %mm : [num_users=1] = call_function[target=torch.ops.aten.mm.default](args = (%x, %w), kwargs = {})
    %relu : [num_users=1] = call_function[target=torch.ops.aten.relu.default](args = (%mm,), kwargs = {})
    return (relu,)
`

// A dump without types parses with unknown types, prints and parses back
// as such, and is typed by Retype exactly as a parse given the types.
func TestUntypedThenRetype(t *testing.T) {
	p := mustParse(t, untypedGraph, Options{})
	text := printParsed(t, p)
	if !strings.Contains(text, "%relu: unknown = aten.relu.default(%mm)") {
		t.Fatalf("want unknown result types:\n%s", text)
	}
	if n := len(ir.UnknownValues(p)); n != 4 {
		t.Fatalf("%d unknown values, want 4", n)
	}
	if err := ir.CheckKnownTypes(p); err == nil || !strings.Contains(err.Error(), "first %x (input of graph forward)") {
		t.Fatalf("CheckKnownTypes: %v", err)
	}
	types, err := ParseInputTypes("x=f32[2,3], w=f32[3, 5]")
	if err != nil {
		t.Fatal(err)
	}
	if err := Retype(p, types); err != nil {
		t.Fatal(err)
	}
	if vs := ir.UnknownValues(p); len(vs) != 0 {
		t.Fatalf("still unknown: %v", vs)
	}
	want := ir.Print(mustParse(t, untypedGraph, Options{InputTypes: types}))
	if got := ir.Print(p); got != want {
		t.Fatalf("retyped:\n%s\nparsed with types:\n%s", got, want)
	}
	if !strings.Contains(want, "%relu: f32[2, 5]") {
		t.Fatalf("inferred type missing:\n%s", want)
	}
	if err := Retype(p, map[string]ir.Type{"nope": ir.Tensor(ir.Float32, 1)}); err == nil || !strings.Contains(err.Error(), "nope") {
		t.Fatalf("unknown input name: %v", err)
	}
}

func TestParseInputTypesErrors(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"x", "want NAME=TYPE"},
		{"x=f99[2]", "input type of x"},
		{"x=f32[2],x=f32[3]", "two types"},
	} {
		if _, err := ParseInputTypes(c.in); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want %q", c.in, err, c.want)
		}
	}
	m, err := ParseInputTypes("a=Sym(s0),b=i64[s0, 4],c=f32[]")
	if err != nil || len(m) != 3 || m["b"].String() != "i64[s0, 4]" {
		t.Fatalf("%v %v", m, err)
	}
}

const dynamoCode = `def forward(self, L_x_ : torch.Tensor, L_w_ : torch.nn.parameter.Parameter):
    l_x_ = L_x_
    l_w_ = L_w_
    _set_grad_enabled = torch._C._set_grad_enabled(False);  _set_grad_enabled = None
    mul = l_x_ * l_x_
    sin = torch.sin(mul);  mul = None
    lin = torch._C._nn.linear(sin, l_w_);  sin = None
    gelu = torch.nn.functional.gelu(lin, approximate = 'tanh')
    v = gelu.view(-1, 2)
    size = v.size(0)
    n = size * 2
    a = v.add_(1)
    r = a.reshape(n, -1)
    t = r.float()
    ta = t.type_as(l_x_)
    s = t[(slice(None, None, None), slice(0, 1, None))]
    e = s[(Ellipsis, None)]
    neg = -e
    neg += 1;  neg_1 = neg
    f = torch.ops.mylib.fancy.default(neg_1, k = 3)
    return (f, t)
`

// Dynamo-level graphs map to ATen: torch functions, torch._C._nn, tensor
// methods with *size varargs, infix operators on tensors (ATen) vs on
// SymInts (operator.*), indexing; grad-mode calls are dropped with a note and
// an unknown namespace is an opaque call kept through print and parse.
func TestDynamoLevel(t *testing.T) {
	types := map[string]ir.Type{"L_x_": ir.Tensor(ir.Float32, 4, 3), "L_w_": ir.Tensor(ir.Float32, 2, 3)}
	p := mustParse(t, dynamoCode, Options{InputTypes: types})
	text := printParsed(t, p)
	for _, want := range []string{
		"%mul: f32[4, 3] = aten.mul.Tensor(%L_x_, %L_x_)",
		"%sin: f32[4, 3] = aten.sin.default(%mul)",
		"%lin: f32[4, 2] = aten.linear.default(%sin, %L_w_)",
		`aten.gelu.default(%lin, approximate="tanh")`,
		"%v: f32[4, 2] = aten.view.default(%gelu, [-1, 2])",
		"aten.sym_size.int(%v, 0)",
		"%n: Sym(8) = operator.mul(%size, 2)",
		"%a: f32[4, 2] = aten.add_.Tensor(%v, 1)",
		"aten.reshape.default(%a, [%n, -1])",
		"%t: f32[8, 1] = aten._to_copy.default(%r, dtype=torch.float32)",
		"%ta: f32[8, 1] = aten._to_copy.default(%t, dtype=torch.float32)",
		"%s: f32[8, 1] = aten.slice.Tensor(%t, 1, 0, 1)",
		"%e: f32[8, 1, 1] = aten.unsqueeze.default(%s, -1)",
		"%neg: f32[8, 1, 1] = aten.neg.default(%e)",
		"%neg_2: f32[8, 1, 1] = aten.add_.Tensor(%neg, 1)",
		`%f: unknown = opaque.call.default("torch.ops.mylib.fancy.default", ["k"], %neg_2, 3)`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("missing %q", want)
		}
	}
	// Untyped, the SymInt arithmetic still reads as operator.mul.
	u := printParsed(t, mustParse(t, dynamoCode, Options{}))
	for _, want := range []string{"%n: unknown = operator.mul(%size, 2)", "%mul: unknown = aten.mul.Tensor(%L_x_, %L_x_)",
		`%ta: unknown = opaque.call.default("Tensor.type_as", [], %t, %L_x_)`} {
		if !strings.Contains(u, want) {
			t.Errorf("untyped: missing %q in\n%s", want, u)
		}
	}
	// Retyped, it is the program read with types (type_as resolved too).
	q := mustParse(t, dynamoCode, Options{})
	if err := Retype(q, types); err != nil {
		t.Fatal(err)
	}
	if got := printParsed(t, q); got != text {
		t.Errorf("retyped:\n%s\nparsed with types:\n%s", got, text)
	}
	if d, _ := p.Meta.Get(MetaDropped); d != "4: torch._C._set_grad_enabled" {
		t.Errorf("dropped calls: %q", d)
	}
	if t.Failed() {
		t.Log(text)
	}
}

// Dynamo's graph form: call_method nodes and operator targets on tensors;
// an unannotated Dynamo graph treats operators on untyped values as tensor ops.
func TestDynamoGraphForm(t *testing.T) {
	src := `graph():
    %l_x_ : torch.Tensor [num_users=2] = placeholder[target=L_x_]
    %mul : [num_users=1] = call_function[target=operator.mul](args = (%l_x_, 2), kwargs = {})
    %sum_1 : [num_users=1] = call_method[target=sum](args = (%mul,), kwargs = {dim: -1})
    %getitem : [num_users=1] = call_function[target=operator.getitem](args = (%l_x_, 0), kwargs = {})
    %lin : [num_users=1] = call_module[target=fc](args = (%getitem,), kwargs = {})
    return (sum_1, lin)
`
	p := mustParse(t, src, Options{})
	text := printParsed(t, p)
	for _, want := range []string{
		"%mul: unknown = aten.mul.Tensor(%l_x_, 2)",
		"%sum_1: unknown = aten.sum.dim_IntList(%mul, [-1])",
		"%getitem: unknown = aten.select.int(%l_x_, 0, 0)",
		`opaque.call.default("module:fc", [], %getitem)`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("missing %q in\n%s", want, text)
		}
	}
	if err := Retype(p, map[string]ir.Type{"l_x_": ir.Tensor(ir.Float32, 3, 5)}); err != nil {
		t.Fatal(err)
	}
	if got := ir.Print(p); !strings.Contains(got, "%sum_1: f32[3] = ") || !strings.Contains(got, "%getitem: f32[5] = ") {
		t.Errorf("retyped:\n%s", got)
	}
}

// Edge-dialect names (gm.code mangles them), memory planning, a placeholder
// after a get_attr, torch 1.13 spellings and its lifted code form.
func TestExecuTorchAndOldSpellings(t *testing.T) {
	edge := `def forward(self, x):
    alloc = executorch_exir_memory_alloc(((2, 3), torch.float32))
    aten_add_tensor = torch.ops.aten.add.out(x, x, out = alloc);  alloc = None
    aten_relu = executorch_exir_dialects_edge__ops_aten_relu_default(aten_add_tensor)
    return (aten_relu,)
`
	p := mustParse(t, edge, Options{InputTypes: map[string]ir.Type{"x": ir.Tensor(ir.Float32, 2, 3)}})
	text := printParsed(t, p)
	for _, want := range []string{
		"%alloc: f32[2, 3] = memory.alloc.default([2, 3], dtype=torch.float32)",
		"%aten_add_tensor: f32[2, 3] = aten.add.out(%x, %x, out=%alloc)",
		"%aten_relu: f32[2, 3] = aten.relu.default(%aten_add_tensor)",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("missing %q in\n%s", want, text)
		}
	}

	graph := `graph():
    %_tensor_constant0 : [num_users=1] = get_attr[target=_tensor_constant0]
    %x_1 : [num_users=1] = placeholder[target=x_1]
    %add : [num_users=1] = call_function[target=torch.ops.aten.add.Tensor](args = (%x_1, %_tensor_constant0), kwargs = {})
    return add
`
	p = mustParse(t, graph, Options{InputTypes: map[string]ir.Type{"x_1": ir.Tensor(ir.Float32, 3), "_tensor_constant0": ir.Tensor(ir.Float32, 3)}})
	if s := printParsed(t, p); !strings.Contains(s, "graph forward(%_tensor_constant0: f32[3], %x_1: f32[3])") {
		t.Errorf("placeholder after get_attr:\n%s", s)
	}

	old := `def forward(self, orig_arg_0, orig_arg_1):
    arg0_1, arg1_1, = fx_pytree.tree_flatten_spec([orig_arg_0, orig_arg_1], self._in_spec)
    _reshape_alias = torch.ops.aten._reshape_alias.default(arg0_1, [6], [1])
    unsafe_split = torch.ops.aten.unsafe_split.Tensor(_reshape_alias, 3)
    getitem = unsafe_split[0]
    getitem_1 = unsafe_split[1];  unsafe_split = None
    add = torch.ops.aten.add.Tensor(getitem, arg1_1)
    return pytree.tree_unflatten([add, getitem_1], self._out_spec)
`
	p = mustParse(t, old, Options{InputTypes: map[string]ir.Type{"arg0_1": ir.Tensor(ir.Float32, 2, 3), "arg1_1": ir.Tensor(ir.Float32, 3)}})
	text = printParsed(t, p)
	for _, want := range []string{
		"graph forward(%arg0_1: f32[2, 3], %arg1_1: f32[3])",
		"%_reshape_alias: f32[6] = aten._reshape_alias.default(%arg0_1, [6], [1])",
		"%getitem: f32[3], %getitem_1: f32[3] = aten.unsafe_split.Tensor(%_reshape_alias, 3)",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("missing %q in\n%s", want, text)
		}
	}
}

// Code-form higher-order ops whose subgraphs the dump does not print are
// opaque calls that name the subgraphs; an annotated opaque result keeps
// its type.
func TestOpaqueRegions(t *testing.T) {
	src := `def forward(self, p: "b8[]", x: "f32[2]"):
    true_graph_0 = self.true_graph_0
    false_graph_0 = self.false_graph_0
    cond = torch.ops.higher_order.cond(p, true_graph_0, false_graph_0, (x,));  true_graph_0 = false_graph_0 = None
    getitem: "f32[2]" = cond[0];  cond = None
    lowered_module_0 = self.lowered_module_0
    executorch_call_delegate = torch.ops.higher_order.executorch_call_delegate(lowered_module_0, getitem)
    getitem_1 = executorch_call_delegate[0]
    return (getitem_1,)
`
	p := mustParse(t, src, Options{})
	text := printParsed(t, p)
	for _, want := range []string{
		`%getitem: f32[2] = opaque.call.default("torch.ops.higher_order.cond", [], %p, "self.true_graph_0", "self.false_graph_0", [%x])`,
		`%getitem_1: unknown = opaque.call.default("torch.ops.higher_order.executorch_call_delegate", [], "self.lowered_module_0", %getitem)`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("missing %q in\n%s", want, text)
		}
	}
}

// Torchbind objects, call_torchbind and effectful custom ops read as opaque
// calls on an unknown-typed attribute.
func TestTorchbindOpaque(t *testing.T) {
	src := `def forward(self, token, x: "f32[2]"):
    attr = self.attr
    call_torchbind = torch.ops.higher_order.call_torchbind(attr, 'add_tensor', x)
    with_effects = torch.ops.higher_order.with_effects(token, torch.ops._TorchScriptTesting.takes_foo.default, attr, x)
    getitem = with_effects[0]
    getitem_1: "f32[2]" = with_effects[1];  with_effects = None
    return (getitem, getitem_1, call_torchbind)
`
	p := mustParse(t, src, Options{})
	text := printParsed(t, p)
	for _, want := range []string{
		"graph forward(%attr: unknown, %token: unknown, %x: f32[2])",
		`%call_torchbind: unknown = opaque.call.default("torch.ops.higher_order.call_torchbind", [], %attr, "add_tensor", %x)`,
		`%getitem: unknown, %getitem_1: f32[2] = opaque.call.default("torch.ops.higher_order.with_effects", [], %token, "torch.ops._TorchScriptTesting.takes_foo.default", %attr, %x)`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("missing %q in\n%s", want, text)
		}
	}
}

// Retype reaches into regions: a cond read without types gets the same
// program as one read with them.
func TestRetypeRegions(t *testing.T) {
	src := `class GraphModule(torch.nn.Module):
    def forward(self, x, y):
        sum_1 = torch.ops.aten.sum.default(x)
        gt = torch.ops.aten.gt.Scalar(sum_1, 0)
        true_graph_0 = self.true_graph_0
        false_graph_0 = self.false_graph_0
        cond = torch.ops.higher_order.cond(gt, true_graph_0, false_graph_0, (x, y))
        getitem = cond[0]
        return (getitem,)

    class true_graph_0(torch.nn.Module):
        def forward(self, x, y):
            cos = torch.ops.aten.cos.default(x)
            add = torch.ops.aten.add.Tensor(cos, y)
            return (add,)

    class false_graph_0(torch.nn.Module):
        def forward(self, x, y):
            sin = torch.ops.aten.sin.default(x)
            return (sin,)
`
	types := map[string]ir.Type{"x": ir.Tensor(ir.Float32, 3), "y": ir.Tensor(ir.Float32, 3)}
	p := mustParse(t, src, Options{})
	if n := len(ir.UnknownValues(p)); n == 0 {
		t.Fatal("nothing unknown before retyping")
	}
	printParsed(t, p)
	if err := Retype(p, types); err != nil {
		t.Fatal(err)
	}
	want := ir.Print(mustParse(t, src, Options{InputTypes: types}))
	if got := ir.Print(p); got != want {
		t.Fatalf("retyped:\n%s\nparsed with types:\n%s", got, want)
	}
	if err := ir.VerifyWith(p, ir.VerifyOptions{Types: true}); err != nil {
		t.Fatal(err)
	}
}
