package interp

import (
	"math/rand/v2"
	"testing"

	"github.com/fxport/fxport/ir"
)

// benchProgram parses src and draws its inputs once.
func benchProgram(b *testing.B, src string) (*ir.Program, []Value) {
	b.Helper()
	p, err := ir.Parse([]byte(src), b.Name())
	if err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 1))
	var in []Value
	for _, v := range UserInputs(p) {
		shape, _ := v.Tensor().StaticShape()
		in = append(in, randT(rng, v.Tensor().DType, shape...))
	}
	return p, in
}

func runBench(b *testing.B, src string) {
	p, in := benchProgram(b, src)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := Run(p, in, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkMLP: a 3-layer MLP, batch 64, 512 hidden units (≈0.6 MFLOP per
// sample), in float32.
func BenchmarkMLP(b *testing.B) {
	runBench(b, `graph forward(%x: f32[64, 256], %w1: f32[512, 256], %b1: f32[512], %w2: f32[512, 512], %b2: f32[512], %w3: f32[10, 512], %b3: f32[10]) {
  %l1: f32[64, 512] = aten.linear.default(%x, %w1, %b1)
  %r1: f32[64, 512] = aten.relu.default(%l1)
  %l2: f32[64, 512] = aten.linear.default(%r1, %w2, %b2)
  %r2: f32[64, 512] = aten.gelu.default(%l2)
  %l3: f32[64, 10] = aten.linear.default(%r2, %w3, %b3)
  %sm: f32[64, 10] = aten._log_softmax.default(%l3, 1, False)
  return %sm
}
`)
}

// BenchmarkConvNet: a small CNN on a batch of 8 32x32 RGB images.
func BenchmarkConvNet(b *testing.B) {
	runBench(b, `graph forward(%x: f32[8, 3, 32, 32], %w1: f32[16, 3, 3, 3], %b1: f32[16], %w2: f32[32, 16, 3, 3], %b2: f32[32], %rm: f32[32], %rv: f32[32], %fw: f32[10, 32], %fb: f32[10]) {
  %c1: f32[8, 16, 32, 32] = aten.convolution.default(%x, %w1, %b1, [1, 1], [1, 1], [1, 1], False, [0, 0], 1)
  %r1: f32[8, 16, 32, 32] = aten.relu.default(%c1)
  %p1: f32[8, 16, 16, 16], %i1: i64[8, 16, 16, 16] = aten.max_pool2d_with_indices.default(%r1, [2, 2], [2, 2])
  %c2: f32[8, 32, 16, 16] = aten.convolution.default(%p1, %w2, %b2, [1, 1], [1, 1], [1, 1], False, [0, 0], 1)
  %bn: f32[8, 32, 16, 16], %m: f32[0], %s: f32[0] = aten._native_batch_norm_legit_no_training.default(%c2, None, None, %rm, %rv, 0.1, 1e-05)
  %r2: f32[8, 32, 16, 16] = aten.relu.default(%bn)
  %gap: f32[8, 32, 1, 1] = aten._adaptive_avg_pool2d.default(%r2, [1, 1])
  %flat: f32[8, 32] = aten.view.default(%gap, [8, 32])
  %fc: f32[8, 10] = aten.linear.default(%flat, %fw, %fb)
  return %fc
}
`)
}

// BenchmarkElementwise: a chain of broadcasting elementwise ops on 1M elements.
func BenchmarkElementwise(b *testing.B) {
	runBench(b, `graph forward(%x: f32[1024, 1024], %y: f32[1024]) {
  %a: f32[1024, 1024] = aten.add.Tensor(%x, %y)
  %m: f32[1024, 1024] = aten.mul.Tensor(%a, %x)
  %t: f32[1024, 1024] = aten.tanh.default(%m)
  %s: f32[1024] = aten.sum.dim_IntList(%t, [0])
  return %s
}
`)
}
