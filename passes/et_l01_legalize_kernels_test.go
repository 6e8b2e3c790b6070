package passes_test

import (
	"strings"
	"testing"

	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/passes"
	"github.com/fxport/fxport/pm"
)

func legalize(t *testing.T, src string) (*ir.Program, error) {
	t.Helper()
	p, err := ir.Parse([]byte(src), "legal.fxir")
	if err != nil {
		t.Fatal(err)
	}
	pl, err := pm.ParsePipeline("executorch.portable: executorch.lowering(legalize-kernels)")
	if err != nil {
		t.Fatal(err)
	}
	_, err = pm.Run(p, pl, nil, pm.Config{VerifyEach: true})
	return p, err
}

// Every op without a kernel is decomposed, and the nodes the
// decompositions build are legal in turn.
func TestLegalizeKernelsDecomposes(t *testing.T) {
	p, err := legalize(t, `graph forward(%x: f32[3, 4], %s: f32[3, 2], %i: i64[2]) {
  %z: f32[3, 4] = aten.zeros_like.default(%x)
  %o: f32[3, 4] = aten.ones_like.default(%x)
  %sp: f32[3, 4] = aten.softplus.default(%x, 2.0, 3.0)
  %ic: f32[3, 4] = aten.index_copy.default(%x, 1, %i, %s)
  %tu: f32[3, 4] = aten.triu.default(%x, 1)
  %hs: f32[3, 4] = aten.hardswish.default(%x)
  %a: f32[3, 4] = aten.add.Tensor(%z, %o)
  %b: f32[3, 4] = aten.add.Tensor(%sp, %ic)
  %c: f32[3, 4] = aten.add.Tensor(%tu, %hs)
  %d: f32[3, 4] = aten.add.Tensor(%a, %b)
  %e: f32[3, 4] = aten.add.Tensor(%c, %d)
  return %e
}`)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range p.Main.Nodes() {
		if !passes.EtHasKernel(n.Op) {
			t.Errorf("%s has no kernel after legalize-kernels", n.Short())
		}
	}
	text := ir.Print(p)
	for _, op := range []string{"full_like", "index_put", "tril", "where.self", "log1p"} {
		if !strings.Contains(text, op) {
			t.Errorf("no %s in the decomposition:\n%s", op, text)
		}
	}
}

// An op neither legal nor decomposable fails naming every such node, its
// source line and the pass.
func TestLegalizeKernelsListsEveryIllegalOp(t *testing.T) {
	_, err := legalize(t, `graph forward(%x: f32[3, 4]) {
  %a: f32[3, 4] = aten.erfinv.default(%x) {stack_trace = "File \"model.py\", line 12, in forward\n    return torch.erfinv(x)"}
  %b: f32[3, 4] = aten.silu.default(%a)
  %c: f32[3, 4] = aten.erfinv.default(%b)
  %d: f32[3, 4] = aten.upsample_nearest2d.default(%c, [3, 4], 1.0, 1.0)
  return %d
}`)
	if err == nil {
		t.Fatal("no error")
	}
	msg := err.Error()
	for _, want := range []string{"legalize-kernels", "3 operations", "%a (aten.erfinv.default)", "from model.py:12", "%c (aten.erfinv.default)",
		"%d (aten.upsample_nearest2d.default) in graph forward: no decomposition for these arguments"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error lacks %q:\n%s", want, msg)
		}
	}
	if strings.Contains(msg, "silu") {
		t.Errorf("the decomposable silu is listed:\n%s", msg)
	}
}

// The decompositions are listed by op.
func TestDecompositionNames(t *testing.T) {
	got := strings.Join(passes.EtDecompositionNames(), "\n")
	for _, want := range []string{"aten.zeros_like.default: zeros-like", "aten.softplus.default: softplus", "aten.index_copy.default: index-copy", "aten.linear.default: linear",
		"aten.avg_pool3d.default: avg-pool3d", "aten.max_pool3d_with_indices.default: max-pool3d-with-indices", "aten.col2im.default: col2im", "aten.scatter_reduce.two: scatter-reduce"} {
		if !strings.Contains(got, want) {
			t.Errorf("EtDecompositionNames lacks %q", want)
		}
	}
}
