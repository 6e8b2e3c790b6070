package interp

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/fxport/fxport/ir"
)

func dot(a, b *Tensor) float64 {
	x, y := a.Float64s(), b.Float64s()
	s := 0.0
	for i := range x {
		s += x[i] * y[i]
	}
	return s
}

func near(t *testing.T, what string, a, b float64) {
	t.Helper()
	if math.Abs(a-b) > 1e-8*math.Max(1, math.Abs(a)) {
		t.Fatalf("%s: %.12g != %.12g", what, a, b)
	}
}

// The gradients of a bilinear map are its adjoints:
// <conv(x, w), g> = <x, grad_input> = <w, grad_weight>.
func TestConvolutionBackwardIsAdjoint(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	x := randT(rng, ir.Float64, 2, 4, 7, 6)
	w := randT(rng, ir.Float64, 6, 2, 3, 2)
	g := randT(rng, ir.Float64, 2, 6, 4, 5)
	out := runIR(t, `graph forward(%x: f64[2, 4, 7, 6], %w: f64[6, 2, 3, 2], %g: f64[2, 6, 4, 5]) {
  %y: f64[2, 6, 4, 5] = aten.convolution.default(%x, %w, None, [2, 1], [1, 0], [1, 1], False, [0, 0], 2)
  %gi: f64[2, 4, 7, 6], %gw: f64[6, 2, 3, 2], %gb: f64[6] = aten.convolution_backward.default(%g, %x, %w, [6], [2, 1], [1, 0], [1, 1], False, [0, 0], 2, [True, True, True])
  return %y, %gi, %gw, %gb
}
`, x, w, g)
	lhs := dot(out[0].(*Tensor), g)
	near(t, "<conv(x,w), g> vs <x, grad_input>", lhs, dot(x, out[1].(*Tensor)))
	near(t, "<conv(x,w), g> vs <w, grad_weight>", lhs, dot(w, out[2].(*Tensor)))
	sum := 0.0
	for _, v := range g.Float64s()[:4*5] {
		sum += v
	}
	for _, v := range g.Float64s()[6*4*5 : 6*4*5+4*5] {
		sum += v
	}
	near(t, "grad_bias[0]", sum, out[3].(*Tensor).Float64s()[0])

	// Transposed convolution, and a mask that drops the weight gradient.
	xt := randT(rng, ir.Float64, 1, 4, 3, 3)
	wt := randT(rng, ir.Float64, 4, 3, 3, 3)
	gt := randT(rng, ir.Float64, 1, 3, 6, 6)
	out = runIR(t, `graph forward(%x: f64[1, 4, 3, 3], %w: f64[4, 3, 3, 3], %g: f64[1, 3, 6, 6]) {
  %y: f64[1, 3, 6, 6] = aten.convolution.default(%x, %w, None, [2, 2], [1, 1], [1, 1], True, [1, 1], 1)
  %gi: f64[1, 4, 3, 3], %gw: f64[4, 3, 3, 3], %gb: f64[3] = aten.convolution_backward.default(%g, %x, %w, None, [2, 2], [1, 1], [1, 1], True, [1, 1], 1, [True, True, True])
  return %y, %gi, %gw
}
`, xt, wt, gt)
	lhs = dot(out[0].(*Tensor), gt)
	near(t, "transposed: <y, g> vs <x, grad_input>", lhs, dot(xt, out[1].(*Tensor)))
	near(t, "transposed: <y, g> vs <w, grad_weight>", lhs, dot(wt, out[2].(*Tensor)))
}

func TestPoolingAndEmbeddingBackwardAreAdjoint(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	x := randT(rng, ir.Float64, 1, 2, 5, 5)
	g := randT(rng, ir.Float64, 1, 2, 3, 3)
	ga := randT(rng, ir.Float64, 1, 2, 2, 3)
	out := runIR(t, `graph forward(%x: f64[1, 2, 5, 5], %g: f64[1, 2, 3, 3], %ga: f64[1, 2, 2, 3]) {
  %avg: f64[1, 2, 3, 3] = aten.avg_pool2d.default(%x, [3, 3], [2, 2], [1, 1], True, False)
  %gavg: f64[1, 2, 5, 5] = aten.avg_pool2d_backward.default(%g, %x, [3, 3], [2, 2], [1, 1], True, False, None)
  %ad: f64[1, 2, 2, 3] = aten._adaptive_avg_pool2d.default(%x, [2, 3])
  %gad: f64[1, 2, 5, 5] = aten._adaptive_avg_pool2d_backward.default(%ga, %x)
  %mp: f64[1, 2, 3, 3], %mi: i64[1, 2, 3, 3] = aten.max_pool2d_with_indices.default(%x, [3, 3], [2, 2], [1, 1])
  %gmp: f64[1, 2, 5, 5] = aten.max_pool2d_with_indices_backward.default(%g, %x, [3, 3], [2, 2], [1, 1], [1, 1], False, %mi)
  return %avg, %gavg, %ad, %gad, %mp, %gmp
}
`, x, g, ga)
	near(t, "avg_pool2d", dot(out[0].(*Tensor), g), dot(x, out[1].(*Tensor)))
	near(t, "adaptive_avg_pool2d", dot(out[2].(*Tensor), ga), dot(x, out[3].(*Tensor)))
	near(t, "max_pool2d (linear at fixed argmax)", dot(out[4].(*Tensor), g), dot(x, out[5].(*Tensor)))

	w := randT(rng, ir.Float64, 5, 3)
	ge := randT(rng, ir.Float64, 2, 2, 3)
	ids := i64(sh(2, 2), 4, 1, 4, 0)
	out = runIR(t, `graph forward(%w: f64[5, 3], %ids: i64[2, 2], %g: f64[2, 2, 3]) {
  %e: f64[2, 2, 3] = aten.embedding.default(%w, %ids)
  %gw: f64[5, 3] = aten.embedding_dense_backward.default(%g, %ids, 5, -1, False)
  return %e, %gw
}
`, w, ids, ge)
	near(t, "embedding", dot(out[0].(*Tensor), ge), dot(w, out[1].(*Tensor)))
}

// Normalization gradients against central finite differences of
// f(x, w, b) = <norm(x; w, b), g>.
func TestNormBackwardFiniteDifferences(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	x := randT(rng, ir.Float64, 2, 4, 3)
	w := randT(rng, ir.Float64, 4)
	b := randT(rng, ir.Float64, 4)
	g := randT(rng, ir.Float64, 2, 4, 3)
	src := `graph forward(%x: f64[2, 4, 3], %w: f64[4], %b: f64[4], %g: f64[2, 4, 3]) {
  %y: f64[2, 4, 3], %mean: f64[2, 2], %rstd: f64[2, 2] = aten.native_group_norm.default(%x, %w, %b, 2, 4, 3, 2, 1e-05)
  %gi: f64[2, 4, 3], %gw: f64[4], %gb: f64[4] = aten.native_group_norm_backward.default(%g, %x, %mean, %rstd, %w, 2, 4, 3, 2, [True, True, True])
  return %y, %gi, %gw, %gb
}
`
	checkFD(t, src, []*Tensor{x, w, b}, g)

	x2 := randT(rng, ir.Float64, 3, 2, 4)
	w2 := randT(rng, ir.Float64, 2, 4)
	b2 := randT(rng, ir.Float64, 2, 4)
	g2 := randT(rng, ir.Float64, 3, 2, 4)
	src2 := `graph forward(%x: f64[3, 2, 4], %w: f64[2, 4], %b: f64[2, 4], %g: f64[3, 2, 4]) {
  %y: f64[3, 2, 4], %mean: f64[3, 1, 1], %rstd: f64[3, 1, 1] = aten.native_layer_norm.default(%x, [2, 4], %w, %b, 1e-05)
  %gi: f64[3, 2, 4], %gw: f64[2, 4], %gb: f64[2, 4] = aten.native_layer_norm_backward.default(%g, %x, [2, 4], %mean, %rstd, %w, %b, [True, True, True])
  return %y, %gi, %gw, %gb
}
`
	checkFD(t, src2, []*Tensor{x2, w2, b2}, g2)
}

// checkFD compares outputs 1..3 of src (the gradients of output 0 against
// inputs 0..2, contracted with g) with central differences.
func checkFD(t *testing.T, src string, params []*Tensor, g *Tensor) {
	t.Helper()
	args := func(ps []*Tensor) []Value { return []Value{ps[0], ps[1], ps[2], g} }
	out := runIR(t, src, args(params)...)
	const h = 1e-6
	for pi := range params {
		grad := out[1+pi].(*Tensor).Float64s()
		base := params[pi].Float64s()
		for k := 0; k < len(base); k += 3 {
			f := func(delta float64) float64 {
				v := append([]float64(nil), base...)
				v[k] += delta
				ps := append([]*Tensor(nil), params...)
				ps[pi] = FromFloat64(ir.Float64, params[pi].Shape, v)
				return dot(runIR(t, src, args(ps)...)[0].(*Tensor), g)
			}
			fd := (f(h) - f(-h)) / (2 * h)
			if math.Abs(fd-grad[k]) > 1e-5*math.Max(1, math.Abs(fd)) {
				t.Fatalf("gradient %d, element %d: analytic %.9g, finite difference %.9g", pi, k, grad[k], fd)
			}
		}
	}
}
