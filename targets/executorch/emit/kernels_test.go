package emit_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/pm"
	"github.com/fxport/fxport/targets/executorch/emit"
	"github.com/fxport/fxport/targets/executorch/pte"
)

// Ops without a portable kernel are refused with an error naming the node
// and the op, and no file is produced.
func TestEmitRefusesOpsWithoutKernel(t *testing.T) {
	cases := []struct{ name, body, want string }{
		{"functional without kernel", `
graph forward(%x: f32[4]) {
  %erfinv: f32[4] = aten.erfinv.default(%x)
  return %erfinv
}`, "%erfinv (aten.erfinv.default)"},
		{"in-place on a graph input", `
graph forward(%x: f32[4], %y: f32[4]) {
  %add_: f32[4] = aten.add_.Tensor(%x, %y)
  return %add_
}`, "in-place op aten.add_.Tensor has no portable kernel"},
		{"3-d convolution no delegate took", `
input p_w: parameter "w"
input x: user_input
output user_output
weight "w": f32[2, 1, 1, 1, 1] = inline("0000803f00000040")
graph forward(%p_w: f32[2, 1, 1, 1, 1], %x: f32[1, 1, 2, 3, 3]) {
  %conv: f32[1, 2, 2, 3, 3] = aten.convolution.default(%x, %p_w, None, [1, 1, 1], [0, 0, 0], [1, 1, 1], False, [0, 0, 0], 1)
  return %conv
}`, "node %conv (aten.convolution.out) in graph forward: a 5-D convolution (input"},
	}
	dir := t.TempDir()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "_")+".fxir")
			if err := os.WriteFile(path, []byte(c.body), 0o644); err != nil {
				t.Fatal(err)
			}
			// Without legalize-kernels, which would refuse it first, and
			// decompose-to-core, which rewrites a 5-D convolution as 2-d.
			f, err := emit.Program(lowerWithout(t, path, "legalize-kernels", "decompose-to-core"), emit.Options{})
			if err == nil {
				if _, encErr := pte.Encode(f); encErr == nil {
					t.Fatalf("emitted a file with an unloadable kernel call")
				}
			}
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want it to contain %q", err, c.want)
			}
		})
	}
}

// The MLP's alias/detach_ chain is gone after lowering: every operator is
// an out variant or a prim op.
func TestEmitMLPHasOnlyPortableKernels(t *testing.T) {
	got, _ := emitFile(t, "../../../examples/mlp/program.fxir", emit.Options{})
	for _, op := range got.Program.ExecutionPlan[0].Operators {
		if !portableKernel(op) || strings.Contains(op.Name, "detach") {
			t.Errorf("operator %s.%s", op.Name, op.Overload)
		}
	}
}

// lowerWithout lowers path with the portable pipeline less some passes.
func lowerWithout(t *testing.T, path string, passes ...string) *ir.Program {
	t.Helper()
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	p, err := ir.Parse(src, path)
	if err != nil {
		t.Fatal(err)
	}
	def, err := pm.Build(pm.TargetExecuTorch, "executorch.portable")
	if err != nil {
		t.Fatal(err)
	}
	text := def.String()
	for _, pass := range passes {
		without := strings.Replace(text, pass+", ", "", 1)
		if without == text {
			t.Fatalf("pipeline has no %s: %s", pass, text)
		}
		text = without
	}
	pl, err := pm.ParsePipeline(text)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pm.Run(p, pl, nil, pm.Config{}); err != nil {
		t.Fatal(err)
	}
	return p
}
