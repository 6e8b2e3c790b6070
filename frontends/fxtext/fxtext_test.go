package fxtext

import (
	"errors"
	"strings"
	"testing"

	"github.com/fxport/fxport/ir"
)

func mustType(t *testing.T, s string) ir.Type {
	t.Helper()
	ty, err := ir.ParseType(s)
	if err != nil {
		t.Fatal(err)
	}
	return ty
}

// parseOK parses src, checks the IR round trip and type verification, and
// returns the printed IR.
func parseOK(t *testing.T, src string, opts Options) string {
	t.Helper()
	p, err := Parse([]byte(src), "test.fx", opts)
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	roundTrip(t, p)
	if err := ir.VerifyWith(p, ir.VerifyOptions{Types: true}); err != nil {
		t.Fatalf("type verification: %v\n%s", err, ir.Print(p))
	}
	return ir.Print(p)
}

func wantLines(t *testing.T, got string, lines ...string) {
	t.Helper()
	for _, l := range lines {
		if !strings.Contains(got, l) {
			t.Errorf("output lacks %q:\n%s", l, got)
		}
	}
}

func TestDetect(t *testing.T) {
	for _, c := range []struct {
		src  string
		want Form
	}{
		{"graph():\n    return ()\n", FormGraph},
		{"# header\n\n%x : [num_users=1] = placeholder[target=x]\n", FormGraph},
		{"\n\n\ndef forward(self, x):\n    return (x,)\n", FormCode},
		{"class GraphModule(torch.nn.Module):\n", FormReadable},
		{"ExportedProgram:\n    class GraphModule(torch.nn.Module):\n", FormExportedProgram},
		{"aten_decomped ExportedProgram:\n", FormExportedProgram},
		{"hello\n", FormUnknown},
		{"", FormUnknown},
	} {
		if got := Detect([]byte(c.src)); got != c.want {
			t.Errorf("Detect(%q) = %s, want %s", c.src, got, c.want)
		}
	}
}

// The graph form prints strings, dtypes and devices bare; the schema restores them.
func TestGraphFormWords(t *testing.T) {
	src := `graph():
    %x : "f32[2, 8]" [num_users=3] = placeholder[target=x]
    %gelu : [num_users=1] = call_function[target=torch.ops.aten.gelu.default](args = (%x,), kwargs = {approximate: tanh})
    %full : [num_users=1] = call_function[target=torch.ops.aten.full.default](args = ([2, 8], -inf), kwargs = {dtype: torch.float16, layout: torch.strided, device: cuda:0, pin_memory: False})
    %clone : [num_users=1] = call_function[target=torch.ops.aten.clone.default](args = (%x,), kwargs = {memory_format: torch.contiguous_format})
    %einsum : [num_users=1] = call_function[target=torch.ops.aten.einsum.default](args = (ij,kj->ik, [%x, %x]), kwargs = {})
    %sym_size_int : [num_users=1] = call_function[target=torch.ops.aten.sym_size.int](args = (%x, 0), kwargs = {})
    %ge : [num_users=1] = call_function[target=operator.ge](args = (%sym_size_int, 2), kwargs = {})
    %_assert_scalar_default : [num_users=0] = call_function[target=torch.ops.aten._assert_scalar.default](args = (%ge, Runtime assertion failed for expression Eq(s0, 2), on node 'ge'), kwargs = {})
    return (gelu, full, clone, einsum)
`
	got := parseOK(t, src, Options{})
	wantLines(t, got,
		`%gelu: f32[2, 8] = aten.gelu.default(%x, approximate="tanh")`,
		`%full: f16[2, 8]@cuda:0 = aten.full.default([2, 8], -inf, dtype=torch.float16, layout=torch.strided, device=device("cuda:0"), pin_memory=False)`,
		`aten.clone.default(%x, memory_format=torch.contiguous_format)`,
		`aten.einsum.default("ij,kj->ik", [%x, %x])`,
		`aten._assert_scalar.default(%ge, "Runtime assertion failed for expression Eq(s0, 2), on node 'ge'")`,
	)
}

// The code form: Python literals, infix symbolic arithmetic, getitem folding.
func TestCodeForm(t *testing.T) {
	src := `
def forward(self, x, n):
    sym_size_int = torch.ops.aten.sym_size.int(x, 0)
    mul = sym_size_int * 2;  sym_size_int = None
    floordiv = mul // 4
    neg = -floordiv
    topk = torch.ops.aten.topk.default(x, 3, largest = False)
    getitem = topk[0]
    getitem_1 = topk[1];  topk = None
    view = torch.ops.aten.view.default(getitem, [-1])
    to = torch.ops.aten.to.dtype(getitem_1, torch.float32)
    return (view, to, neg, n)
`
	got := parseOK(t, src, Options{InputTypes: map[string]ir.Type{"x": mustType(t, "f32[s0, 8]"), "n": mustType(t, "Sym(s1)")}})
	wantLines(t, got,
		`%mul: Sym(2*s0) = operator.mul(%sym_size_int, 2)`,
		`%floordiv: Sym(s0//2) = operator.floordiv(%mul, 4)`,
		`%neg: Sym(-(s0//2)) = operator.neg(%floordiv)`,
		`%getitem: f32[s0, 3], %getitem_1: i64[s0, 3] = aten.topk.default(%x, 3, -1, False)`,
		`%to: f32[s0, 3] = aten.to.dtype(%getitem_1, torch.float32)`,
		`return %view, %to, %neg, %n`,
		`symbol s0: [0, inf]`,
	)
}

// Results nobody selects get "<node>_unused_<i>" names, as torch's serializer does.
func TestUnusedResults(t *testing.T) {
	src := `
def forward(self, x: "f32[4, 6]"):
    max_1 = torch.ops.aten.max.dim(x, 1)
    getitem_1: "i64[4]" = max_1[1];  max_1 = None
    return (getitem_1,)
`
	got := parseOK(t, src, Options{})
	wantLines(t, got, `%max_1_unused_0: f32[4], %getitem_1: i64[4] = aten.max.dim(%x, 1)`)
}

// A readable-form ExportedProgram with a block signature, stack traces and
// a buffer mutation.
func TestExportedProgramBlockSignature(t *testing.T) {
	src := `ExportedProgram:
    class GraphModule(torch.nn.Module):
        def forward(self, p_w: "f32[4, 4]", b_count: "i64[]", x: "f32[s0, 4]"):
             # File: m.py:3 in forward, code: self.count.add_(1)
            add: "i64[]" = torch.ops.aten.add.Tensor(b_count, 1);  b_count = None

             # File: m.py:4 in forward, code: return x @ self.w
            mm: "f32[s0, 4]" = torch.ops.aten.mm.default(x, p_w);  x = p_w = None
            return (add, mm)

Graph signature:
    # inputs
    p_w: PARAMETER target='w'
    b_count: BUFFER target='count' persistent=False
    x: USER_INPUT

    # outputs
    add: BUFFER_MUTATION target='count'
    mm: USER_OUTPUT

Range constraints: {s0: VR[2, 64]}
`
	got := parseOK(t, src, Options{})
	wantLines(t, got,
		`symbol s0: [2, 64]`,
		`input p_w: parameter "w"`,
		"input b_count: buffer \"count\"\n",
		`output buffer_mutation "count"`,
		`weight "count": i64[]`,
		`weight "w": f32[4, 4]`,
		`%add: i64[] = aten.add.Tensor(%b_count, 1) {stack_trace = "m.py:3 in forward, code: self.count.add_(1)"}`,
		`%mm: f32[s0, 4] = aten.mm.default(%x, %p_w) {stack_trace = "m.py:4 in forward, code: return x @ self.w"}`,
	)
}

func TestSignatureReprAndLegacy(t *testing.T) {
	body := `ExportedProgram:
    class GraphModule(torch.nn.Module):
        def forward(self, arg0_1: f32[3], arg1_1: f32[3], arg2_1: f32[3]):
            add: f32[3] = torch.ops.aten.add.Tensor(arg2_1, arg0_1);  arg2_1 = arg0_1 = None
            mul: f32[3] = torch.ops.aten.mul.Tensor(add, arg1_1)
            return (arg1_1, mul)

`
	repr := body + `Graph signature: ExportGraphSignature(input_specs=[InputSpec(kind=<InputKind.PARAMETER: 2>, arg=TensorArgument(name='arg0_1'), target='lin.w', persistent=None), InputSpec(kind=<InputKind.BUFFER: 3>, arg=TensorArgument(name='arg1_1'), target='buf', persistent=True), InputSpec(kind=<InputKind.USER_INPUT: 1>, arg=TensorArgument(name='arg2_1'), target=None, persistent=None)], output_specs=[OutputSpec(kind=<OutputKind.BUFFER_MUTATION: 3>, arg=TensorArgument(name='arg1_1'), target='buf'), OutputSpec(kind=<OutputKind.USER_OUTPUT: 1>, arg=TensorArgument(name='mul'), target=None)])
Range constraints: {}
`
	legacy := body + `Graph Signature: ExportGraphSignature(parameters=['lin.w'], buffers=['buf'], user_inputs=['arg2_1'], user_outputs=['mul'], inputs_to_parameters={'arg0_1': 'lin.w'}, inputs_to_buffers={'arg1_1': 'buf'}, buffers_to_mutate={'arg1_1': 'buf'}, backward_signature=None, assertion_dep_token=None)
Symbol to range: {}
`
	for name, src := range map[string]string{"repr": repr, "legacy": legacy} {
		t.Run(name, func(t *testing.T) {
			got := parseOK(t, src, Options{})
			wantLines(t, got,
				`input arg0_1: parameter "lin.w"`,
				`input arg1_1: buffer "buf" persistent`,
				"input arg2_1: user_input\n",
				"output buffer_mutation \"buf\"\noutput user_output\n",
			)
		})
	}
}

func TestRanges(t *testing.T) {
	for text, want := range map[string]string{
		"{s0: VR[2, int_oo], u0: VR[0, 10]}":                            "symbol s0: [2, inf]\nsymbol u0: [0, 10] unbacked\n",
		"{s0: ValueRanges(lower=0, upper=oo, is_bool=False)}":           "symbol s0: [0, inf]\n",
		"{s0: RangeConstraint(min_val=2, max_val=9223372036854775806)}": "symbol s0: [2, inf]\n",
		"{s0: VR[-int_oo, int_oo]}":                                     "symbol s0: [-inf, inf]\n",
	} {
		src := "ExportedProgram:\n    class GraphModule(torch.nn.Module):\n        def forward(self, x: \"f32[s0]\"):\n            return (x,)\n\nRange constraints: " + text + "\n"
		got := parseOK(t, src, Options{})
		if !strings.HasPrefix(got, want) {
			t.Errorf("%s: got\n%s", text, got)
		}
	}
}

func TestAnnotations(t *testing.T) {
	for text, want := range map[string]string{
		"f32[s0, 4]":            "f32[s0, 4]",
		"i64[]":                 "i64[]",
		"bf16[2*s0 + 1]":        "bf16[2*s0 + 1]",
		"f32[3, 4][4, 1]cpu":    "f32[3, 4]",
		"f32[3, 4][1, 3]cuda:0": "f32[3, 4]@cuda:0",
		"Sym(s0)":               "Sym(s0)",
		"Sym(s0 > 4)":           "SymBool(5 <= s0)",
		"SymInt":                "SymInt",
		"int":                   "int",
		"token":                 "token",
	} {
		ty, _, ok, err := annotType(text)
		if err != nil || !ok || ty.String() != want {
			t.Errorf("annotType(%q) = %v, %v, %v; want %s", text, ty, ok, err, want)
		}
	}
	for _, text := range []string{"torch.Tensor", "Sym(1.0*s0)", "List[int]"} {
		if _, _, ok, err := annotType(text); ok || err != nil {
			t.Errorf("annotType(%q) should be unusable without error, got ok=%v err=%v", text, ok, err)
		}
	}
	if _, _, _, err := annotType("f32[s0,"); err == nil {
		t.Errorf("a broken tensor annotation must be an error")
	}
}

// A number where the schema wants a tensor: the Scalar overload when there
// is one, else an aten.scalar_tensor node.
func TestWrappedNumbers(t *testing.T) {
	src := `
def forward(self, x: "i64[5]"):
    add = torch.ops.aten.add.Tensor(x, 1)
    sub = torch.ops.aten.sub.Tensor(319999, x)
    where = torch.ops.aten.where.self(torch.ops.aten.gt.Scalar, x, 0)
    return (add, sub)
`
	if _, err := Parse([]byte(src), "t.fx", Options{}); err == nil || !strings.Contains(err.Error(), "t.fx:5:") {
		t.Fatalf("a nested call must be an error at line 5, got %v", err)
	}
	src = strings.Replace(src, "    where = torch.ops.aten.where.self(torch.ops.aten.gt.Scalar, x, 0)\n", "", 1)
	got := parseOK(t, src, Options{})
	wantLines(t, got,
		// Wrapped numbers stay as torch printed them; they promote as scalars.
		`%add: i64[5] = aten.add.Tensor(%x, 1)`,
		`%sub: i64[5] = aten.sub.Tensor(319999, %x)`,
	)
}

// Control flow in the readable form, subgraph inputs typed from the operands.
func TestRegionsTypedFromOperands(t *testing.T) {
	src := `
class GraphModule(torch.nn.Module):
    def forward(self, x: "f32[5, 3]", init: "f32[3]"):
        scan_combine_graph_0 = self.scan_combine_graph_0
        scan = torch.ops.higher_order.scan(scan_combine_graph_0, [init], [x], [])
        getitem = scan[0]
        getitem_1 = scan[1];  scan = None
        body_graph_0 = self.body_graph_0
        map_impl = torch.ops.higher_order.map_impl(body_graph_0, [x], [init])
        getitem_2 = map_impl[0]
        return (getitem, getitem_1, getitem_2)

    class scan_combine_graph_0(torch.nn.Module):
        def forward(self, carry, x):
            add = torch.ops.aten.add.Tensor(carry, x)
            clone = torch.ops.aten.clone.default(add)
            return [add, clone]

    class body_graph_0(torch.nn.Module):
        def forward(self, x, y):
            mul = torch.ops.aten.mul.Tensor(x, y)
            return (mul,)
`
	got := parseOK(t, src, Options{})
	wantLines(t, got,
		`%getitem: f32[3], %getitem_1: f32[5, 3] = higher_order.scan(^scan_combine_graph_0, [%init], [%x], [])`,
		`^scan_combine_graph_0(%carry: f32[3], %x: f32[3]) {`,
		`%getitem_2: f32[5, 3] = higher_order.map_impl(^body_graph_0, [%x], [%init])`,
		`^body_graph_0(%x: f32[3], %y: f32[3]) {`,
	)
}

// Unflattened-module prints: input declarations, tree_flatten_spec, tree_unflatten.
func TestUnflattenedModulePrint(t *testing.T) {
	src := `
class GraphModule(torch.nn.Module):
    def forward(self, x, y):
        x: "f32[2]"; y: "f32[2]"; 
    
        x, y, = fx_pytree.tree_flatten_spec(([x, y], {}), self._in_spec)
        # No stacktrace found for following nodes
        weight: "f32[2]" = self.lin.weight
        mul: "f32[2]" = torch.ops.aten.mul.Tensor(x, weight);  x = weight = None
        add: "f32[2]" = torch.ops.aten.add.Tensor(mul, y);  mul = y = None
        return pytree.tree_unflatten((add,), self._out_spec)
`
	got := parseOK(t, src, Options{})
	wantLines(t, got,
		`input weight: parameter "lin.weight"`,
		`graph forward(%weight: f32[2], %x: f32[2], %y: f32[2]) {`,
		`weight "lin.weight": f32[2]`,
	)
}

func TestInputTypesOption(t *testing.T) {
	src := "graph():\n    %x : [num_users=1] = placeholder[target=x]\n    %_tensor_constant0 : [num_users=1] = get_attr[target=_tensor_constant0]\n    %mul : [num_users=1] = call_function[target=torch.ops.aten.mul.Tensor](args = (%x, %_tensor_constant0), kwargs = {})\n    return (mul,)\n"
	got := parseOK(t, src, Options{InputTypes: map[string]ir.Type{"x": mustType(t, "f32[3]"), "_tensor_constant0": mustType(t, "f32[]")}})
	wantLines(t, got,
		`input _tensor_constant0: constant_tensor "_tensor_constant0"`,
		`graph forward(%_tensor_constant0: f32[], %x: f32[3]) {`,
	)
}

func TestCheckTypes(t *testing.T) {
	src := "def forward(self, x: \"f32[3]\"):\n    neg: \"f32[4]\" = torch.ops.aten.neg.default(x)\n    return (neg,)\n"
	if _, err := Parse([]byte(src), "t.fx", Options{}); err != nil {
		t.Fatalf("without CheckTypes the annotation wins: %v", err)
	}
	_, err := Parse([]byte(src), "t.fx", Options{CheckTypes: true})
	if err == nil || !strings.Contains(err.Error(), "t.fx:2:5: node %neg: %neg is annotated f32[4], shape inference gives f32[3]") {
		t.Fatalf("got %v", err)
	}
}

// Errors say where and what: file:line:col, the node, and what is missing.
func TestErrors(t *testing.T) {
	for _, c := range []struct{ name, src, want string }{
		{"unknown form", "hello\n", "t.fx:1:1: not an FX text dump"},
		{"no inference", "def forward(self, x: \"f32[2]\"):\n    y = torch.ops.aten.relu.default(z)\n    return (y,)\n", "t.fx:2:5: node %y: argument 0 (self): undefined name z"},
		{"bad kwarg", "def forward(self, x: \"f32[2]\"):\n    y = torch.ops.aten.gelu.default(x, approx = 'tanh')\n    return (y,)\n", `node %y: aten.gelu.default has no argument "approx"`},
		{"bad word", "graph():\n    %x : \"f32[2]\" [num_users=1] = placeholder[target=x]\n    %y : [num_users=1] = call_function[target=torch.ops.aten.to.dtype](args = (%x, float99), kwargs = {})\n    return (y,)\n", `t.fx:3:5: node %y: argument 1 (dtype): expected a ScalarType, got "float99"`},
		{"getitem range", "def forward(self, x: \"f32[4, 6]\"):\n    m = torch.ops.aten.max.dim(x, 1)\n    g = m[2]\n    return (g,)\n", "t.fx:3:5: node %g: index 2 out of range: m has 2 results"},
		{"signature mismatch", "ExportedProgram:\n    class GraphModule(torch.nn.Module):\n        def forward(self, x: \"f32[2]\"):\n            return (x,)\n\nGraph signature:\n    # inputs\n    y: USER_INPUT\n\n    # outputs\n    x: USER_OUTPUT\n", "t.fx:8:5: graph signature input 0 is y, forward's input 0 is x"},
		{"unclosed bracket", "def forward(self, x: \"f32[2]\"):\n    y = torch.ops.aten.relu.default(x\n", "t.fx:2:36: \"(\" is never closed"},
		{"defined twice", "def forward(self, x: \"f32[2]\"):\n    y = torch.ops.aten.relu.default(x)\n    y = torch.ops.aten.relu.default(x)\n    return (y,)\n", "t.fx:3:5: node %y: y is defined twice"},
		{"no inference rule", "def forward(self, x: \"f32[2]\"):\n    y = torch.ops.aten._assert_async.msg(x, 'bad')\n    z = torch.ops.aten.relu.default(y)\n    return (z,)\n", "t.fx:3:5: node %z: argument 0 (self): y comes from a node that returns nothing"},
		{"none for tensor", "def forward(self, x: \"f32[2]\"):\n    z = torch.ops.aten.add.Tensor(x, None)\n    return (z,)\n", "t.fx:2:5: node %z: argument 1 (other): None for a non-optional Tensor"},
		{"bad range", "ExportedProgram:\n    class GraphModule(torch.nn.Module):\n        def forward(self, x: \"f32[s0]\"):\n            return (x,)\n\nRange constraints: {s0: 7}\n", "t.fx:6:25: range constraints: expected VR[lo, hi]"},
		{"statement after return", "def forward(self, x: \"f32[2]\"):\n    return (x,)\n    y = x\n", "t.fx:3:5: statement after return"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse([]byte(c.src), "t.fx", Options{})
			if err == nil {
				t.Fatalf("no error; want %q", c.want)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %q\nwant it to contain %q", err, c.want)
			}
			var fe *Error
			if !errors.As(err, &fe) {
				t.Fatalf("error %v is not a located *Error", err)
			}
		})
	}
}

// Output is deterministic: the same dump gives the same bytes.
func TestDeterministic(t *testing.T) {
	src := []byte("graph():\n    %x : \"f32[s0, 3]\" [num_users=1] = placeholder[target=x]\n    %split : [num_users=3] = call_function[target=torch.ops.aten.split.Tensor](args = (%x, 1, 1), kwargs = {})\n    %getitem : [num_users=1] = call_function[target=operator.getitem](args = (%split, 0), kwargs = {})\n    %getitem_2 : [num_users=1] = call_function[target=operator.getitem](args = (%split, 2), kwargs = {})\n    return (getitem, getitem_2)\n")
	first := ""
	for i := 0; i < 5; i++ {
		p, err := Parse(src, "t.fx", Options{})
		if err != nil {
			t.Fatal(err)
		}
		out := ir.Print(p)
		if i == 0 {
			first = out
			wantLines(t, out, `%getitem: f32[s0, 1], %split_unused_1: f32[s0, 1], %getitem_2: f32[s0, 1] = aten.split.Tensor(%x, 1, 1)`)
		} else if out != first {
			t.Fatalf("run %d differs:\n%s\n---\n%s", i, first, out)
		}
	}
}
