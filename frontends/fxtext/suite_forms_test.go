package fxtext

import (
	"strings"
	"testing"
)

// The print forms TestPublicSuiteDumps found that the parser did not read:
// each is a small dump written for this test in the same form.
func TestSuiteForms(t *testing.T) {
	cases := []struct {
		name, src string
		want      []string // substrings of the IR text
	}{
		{"unflattened module declaring pytree leaves", `class GraphModule(torch.nn.Module):
    def forward(self, pair, scale):
        pair_0: "f32[3]"; pair_1: "f32[3]"; scale: "f32[]";

        pair_0, pair_1, scale, = fx_pytree.tree_flatten_spec(([pair, scale], {}), self._in_spec)
        mul: "f32[3]" = torch.ops.aten.mul.Tensor(pair_0, scale);  pair_0 = scale = None
        add: "f32[3]" = torch.ops.aten.add.Tensor(mul, pair_1);  mul = pair_1 = None
        return pytree.tree_unflatten((add,), self._out_spec)
`, []string{"graph forward(%pair_0: f32[3], %pair_1: f32[3], %scale: f32[])", "aten.add.Tensor(%mul, %pair_1)"}},
		{"keyword inputs flattened from a dict", `class GraphModule(torch.nn.Module):
    def forward(self, a, b):
        a: "f32[2]"; b: "f32[2]";

        a, b, = fx_pytree.tree_flatten_spec(([a], {'b':b}), self._in_spec)
        sub: "f32[2]" = torch.ops.aten.sub.Tensor(a, b);  a = b = None
        return pytree.tree_unflatten((sub,), self._out_spec)
`, []string{"graph forward(%a: f32[2], %b: f32[2])"}},
		{"a dict returned (make_fx)", `def forward(self, x_1):
    cos = torch.ops.aten.cos.default(x_1)
    sin = torch.ops.aten.sin.default(x_1);  x_1 = None
    return {'c': cos, 's': sin}
`, []string{"return %cos, %sin"}},
		{"an input rebound to its node name", `ExportedProgram:
    class GraphModule(torch.nn.Module):
        def forward(self, input: "f32[3]", other: "f32[3]"):
            input_1 = input
            mul: "f32[3]" = torch.ops.aten.mul.Tensor(input_1, other);  input_1 = other = None
            return (mul,)

Graph signature:
    # inputs
    input_1: USER_INPUT
    other: USER_INPUT

    # outputs
    mul: USER_OUTPUT

Range constraints: {}
`, []string{"graph forward(%input: f32[3], %other: f32[3])", "aten.mul.Tensor(%input, %other)"}},
		{"a stale output name in the signature", `ExportedProgram:
    class GraphModule(torch.nn.Module):
        def forward(self, x: "f32[3]"):
            neg: "f32[3]" = torch.ops.aten.neg.default(x);  x = None
            return (neg,)

Graph signature:
    # inputs
    x: USER_INPUT

    # outputs
    neg_default: USER_OUTPUT

Range constraints: {}
`, []string{"aten.neg.default(%x)"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := mustParse(t, c.src, Options{})
			text := printParsed(t, p)
			for _, w := range c.want {
				if !strings.Contains(text, w) {
					t.Errorf("IR text lacks %q:\n%s", w, text)
				}
			}
		})
	}
	// A declaration that names neither an input nor a flattened leaf is
	// still refused, at its line.
	_, err := Parse([]byte(`class GraphModule(torch.nn.Module):
    def forward(self, x):
        x: "f32[2]"; y: "f32[2]";

        relu: "f32[2]" = torch.ops.aten.relu.default(x);  x = None
        return (relu,)
`), "t.fx", Options{})
	if err == nil || !strings.Contains(err.Error(), "t.fx:3:22: annotation of y, which is not an input of forward") {
		t.Errorf("got %v, want the unused declaration refused at 3:22", err)
	}
}

// A list longer than MaxListElements is refused at its start, in both the
// graph form and the Python forms.
func TestListLimit(t *testing.T) {
	defer func(old int) { MaxListElements = old }(MaxListElements)
	MaxListElements = 3
	for _, src := range []string{
		"graph():\n    %x : [num_users=1] = placeholder[target=x]\n    %v : [num_users=1] = call_function[target=torch.ops.aten.view.default](args = (%x, [1, 1, 1, 4]), kwargs = {})\n    return (v,)\n",
		"def forward(self, x):\n    view = torch.ops.aten.view.default(x, [1, 1, 1, 4]);  x = None\n    return (view,)\n",
	} {
		_, err := Parse([]byte(src), "t.fx", Options{})
		if err == nil || !strings.Contains(err.Error(), "t.fx:") || !strings.Contains(err.Error(), "a list of more than 3 elements (raise the limit with --max-list-elements)") {
			t.Errorf("got %v, want the list refused naming the file, line and flag", err)
		}
	}
	MaxListElements = 4
	if _, err := Parse([]byte("def forward(self, x):\n    view = torch.ops.aten.view.default(x, [1, 1, 1, 4]);  x = None\n    return (view,)\n"), "t.fx", Options{InputTypes: nil}); err != nil && strings.Contains(err.Error(), "more than") {
		t.Errorf("a list at the limit was refused: %v", err)
	}
}
