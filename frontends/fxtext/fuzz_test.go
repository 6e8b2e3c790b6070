package fxtext

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/fxport/fxport/ir"
)

// FuzzParse: Parse never panics, and a program it accepts prints as IR text
// that ir.Parse reads back into a program that prints identically.
func FuzzParse(f *testing.F) {
	seeds := []string{
		"graph():\n    %x : \"f32[2]\" [num_users=1] = placeholder[target=x]\n    %y : [num_users=1] = call_function[target=torch.ops.aten.gelu.default](args = (%x,), kwargs = {approximate: tanh})\n    return (y,)\n",
		"def forward(self, x: \"f32[s0, 2]\"):\n    s = torch.ops.aten.sym_size.int(x, 0)\n    a = s + 1\n    return (a,)\n",
		"class GraphModule(torch.nn.Module):\n    def forward(self, p: \"b8[]\", x: \"f32[2]\"):\n        t = self.t\n        f = self.f\n        c = torch.ops.higher_order.cond(p, t, f, [x])\n        g = c[0]\n        return (g,)\n\n    class t(torch.nn.Module):\n        def forward(self, x):\n            s = torch.ops.aten.sin.default(x)\n            return (s,)\n\n    class f(torch.nn.Module):\n        def forward(self, x):\n            s = torch.ops.aten.cos.default(x)\n            return (s,)\n",
		"ExportedProgram:\n    class GraphModule(torch.nn.Module):\n        def forward(self, p_w: \"f32[2]\", x: \"f32[2]\"):\n            add: \"f32[2]\" = torch.ops.aten.add.Tensor(x, p_w)\n            return (add,)\n\nGraph signature:\n    # inputs\n    p_w: PARAMETER target='w'\n    x: USER_INPUT\n\n    # outputs\n    add: USER_OUTPUT\n\nRange constraints: {}\n",
	}
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	if files, err := filepath.Glob("testdata/eras/*.txt"); err == nil {
		for _, file := range files {
			if b, err := os.ReadFile(file); err == nil {
				f.Add(b)
			}
		}
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		p, err := Parse(src, "fuzz.fx", Options{})
		if err != nil {
			return
		}
		text := ir.Print(p)
		q, err := ir.Parse([]byte(text), "printed")
		if err != nil {
			t.Fatalf("accepted dump prints IR that does not parse: %v\n%s", err, text)
		}
		if again := ir.Print(q); again != text {
			t.Fatalf("printed IR does not round-trip:\n%s\n---\n%s", text, again)
		}
	})
}
