package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fxport/fxport/tests/attack"
)

// BenchmarkHostileShapes runs the command line's code path on inputs that
// are legal but long or deep, at the sizes docs/reliability.md records:
// 100,000-node FX and IR text, a 10 MB line, `cond` nested 10,000 deep
// (parsed, verified, printed and exported by the dynamo target) and a
// 100,000-deep list type. Each case must stay linear in its size: run with
// -benchtime=1x and compare the sizes (docs/reliability.md).
func BenchmarkHostileShapes(b *testing.B) {
	dir := b.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			b.Fatal(err)
		}
		return p
	}
	fxNodes := func(n int) string {
		var s strings.Builder
		s.WriteString("graph():\n    %x : [num_users=1] = placeholder[target=x]\n")
		prev := "x"
		for i := range n {
			fmt.Fprintf(&s, "    %%r%d : [num_users=1] = call_function[target=torch.ops.aten.relu.default](args = (%%%s,), kwargs = {})\n", i, prev)
			prev = fmt.Sprintf("r%d", i)
		}
		fmt.Fprintf(&s, "    return (%s,)\n", prev)
		return s.String()
	}
	irNodes := func(n int) string {
		var s strings.Builder
		s.WriteString("graph forward(%x: f32[4]) {\n")
		prev := "x"
		for i := range n {
			fmt.Fprintf(&s, "  %%r%d: f32[4] = aten.relu.default(%%%s)\n", i, prev)
			prev = fmt.Sprintf("r%d", i)
		}
		fmt.Fprintf(&s, "  return %%%s\n}\n", prev)
		return s.String()
	}
	longLine := func(n int) string {
		return "def forward(self, x):\n    _assert_async = torch.ops.aten._assert_async.msg(x, '" + strings.Repeat("a", n) + "');  _assert_async = None\n    relu = torch.ops.aten.relu.default(x);  x = None\n    return (relu,)\n"
	}
	listType := func(depth int) string {
		return "graph forward(%x: " + strings.Repeat("list<", depth) + "f32[4]" + strings.Repeat(">", depth) + ") {\n  return %x\n}\n"
	}
	cases := []struct {
		name string
		file string
		args []string
	}{
		{"fx-nodes-10k", write("n10k.fx", fxNodes(10_000)), []string{"parse", "FILE", "--input-types", "x=f32[4]"}},
		{"fx-nodes-100k", write("n100k.fx", fxNodes(100_000)), []string{"parse", "FILE", "--input-types", "x=f32[4]"}},
		{"fx-line-1MB", write("l1.fx", longLine(1<<20)), []string{"parse", "FILE", "--input-types", "x=f32[4]"}},
		{"fx-line-10MB", write("l10.fx", longLine(10<<20)), []string{"parse", "FILE", "--input-types", "x=f32[4]"}},
		{"ir-nodes-10k", write("n10k.fxir", irNodes(10_000)), []string{"parse", "FILE"}},
		{"ir-nodes-100k", write("n100k.fxir", irNodes(100_000)), []string{"parse", "FILE"}},
		{"ir-cond-depth-1000", write("c1k.fxir", string(attack.NestedCond(1_000))), []string{"export", "FILE", "--target", "dynamo", "-o", filepath.Join(dir, "c1k.pt2")}},
		{"ir-cond-depth-10000", write("c10k.fxir", string(attack.NestedCond(10_000))), []string{"export", "FILE", "--target", "dynamo", "-o", filepath.Join(dir, "c10k.pt2")}},
		{"ir-list-type-depth-10000", write("t10k.fxir", listType(10_000)), []string{"parse", "FILE"}},
		{"ir-list-type-depth-100000", write("t100k.fxir", listType(100_000)), []string{"parse", "FILE"}},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			args := make([]string, len(c.args))
			for i, a := range c.args {
				if a == "FILE" {
					a = c.file
				}
				args[i] = a
			}
			for range b.N {
				var stderr strings.Builder
				if rc := run(args, io.Discard, &stderr); rc != 0 {
					b.Fatalf("fxport %s: exit %d: %s", strings.Join(args, " "), rc, stderr.String())
				}
			}
		})
	}
}
