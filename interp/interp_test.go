package interp

import (
	"encoding/binary"
	"math"
	"math/cmplx"
	"testing"

	"github.com/fxport/fxport/ir"
)

func TestHigherOrderOps(t *testing.T) {
	out := runIR(t, `graph forward(%p: b8[], %x: f32[3], %n: i64[]) {
  %cond: f32[3] = higher_order.cond(%p, ^t, ^f, [%x])
  ^t(%a: f32[3]) {
    %neg: f32[3] = aten.neg.default(%a)
    return %neg
  }
  ^f(%a: f32[3]) {
    %exp: f32[3] = aten.exp.default(%a)
    return %exp
  }
  %while: i64[], %acc: f32[3] = higher_order.while_loop(^c, ^b, [%n, %x], [])
  ^c(%i: i64[], %v: f32[3]) {
    %gt: b8[] = aten.gt.Scalar(%i, 0)
    return %gt
  }
  ^b(%i: i64[], %v: f32[3]) {
    %sub: i64[] = aten.sub.Tensor(%i, 1)
    %mul: f32[3] = aten.mul.Tensor(%v, 2)
    return %sub, %mul
  }
  %z: f32[] = aten.zeros.default([])
  %scan: f32[], %ys: f32[3] = higher_order.scan(^s, [%z], [%x], [])
  ^s(%carry: f32[], %e: f32[]) {
    %next: f32[] = aten.add.Tensor(%carry, %e)
    %next2: f32[] = aten.clone.default(%next)
    return %next, %next2
  }
  %map: f32[3] = higher_order.map_impl(^m, [%x], [%x])
  ^m(%e: f32[], %all: f32[3]) {
    %s: f32[] = aten.sum.default(%all)
    %r: f32[] = aten.mul.Tensor(%e, %s)
    return %r
  }
  return %cond, %acc, %ys, %map
}
`, b8(nil, 1), f32(sh(3), 1, 2, 3), i64(nil, 3))
	wantT(t, out[0], ir.Float32, sh(3), -1, -2, -3)
	wantT(t, out[1], ir.Float32, sh(3), 8, 16, 24)
	wantT(t, out[2], ir.Float32, sh(3), 1, 3, 6)
	wantT(t, out[3], ir.Float32, sh(3), 6, 12, 18)
}

func TestSymbolicSizes(t *testing.T) {
	out := runIR(t, `symbol s0: [2, 64] hint 4
graph forward(%x: f32[s0, 2], %y: f32[s0 + 1]) {
  %s: Sym(s0) = aten.sym_size.int(%x, 0)
  %fd: Sym(s0//3) = operator.floordiv(%s, 3)
  %neg: Sym(-s0) = operator.neg(%s)
  %m: Sym(Mod(-s0, 3)) = operator.mod(%neg, 3)
  %v: f32[2, s0] = aten.view.default(%x, [2, %s])
  %full: f32[s0//3] = aten.full.default([%fd], 7.0)
  return %m, %full, %v
}
`, f32(sh(5, 2), seqVals(10)...), f32(sh(6), seqVals(6)...))
	if out[0].(int64) != 1 { // Python: -5 % 3 == 1
		t.Fatalf("mod = %v", out[0])
	}
	wantT(t, out[1], ir.Float32, sh(1), 7)
	wantT(t, out[2], ir.Float32, sh(2, 5), seqVals(10)...)
	// A shape that contradicts the bound symbols is an error naming the input.
	_, err := runIRErr(t, `symbol s0: [2, 64] hint 4
graph forward(%x: f32[s0, 2], %y: f32[s0 + 1]) {
  return %x
}
`, f32(sh(5, 2), seqVals(10)...), f32(sh(5), seqVals(5)...))
	wantErr(t, err, "input %y", "s0 + 1 = 6")
}

func TestTypeCheckNamesNode(t *testing.T) {
	_, err := runIRErr(t, `graph forward(%x: f32[2]) {
  %bad: f16[2] = aten.relu.default(%x)
  return %bad
}
`, f32(sh(2), 1, 2))
	wantErr(t, err, "%bad (aten.relu.default)", "declared f16[2]", "float32")
}

func TestUnsupportedOpFailsLoudly(t *testing.T) {
	op := ir.MustLookupOp("higher_order.auto_functionalized_v2")
	if Supported(op) {
		t.Fatal("update this test: pick an op from Unsupported()")
	}
	_, err := runIRErr(t, `graph forward(%x: f32[2]) {
  %r: f32[2] = higher_order.auto_functionalized_v2(op(aten.relu.default), [%x], %x)
  return %r
}
`, f32(sh(2), 1, 2))
	wantErr(t, err, "%r (higher_order.auto_functionalized_v2)", "not supported by the interpreter")
}

func TestWeightsWithStridesAndOffset(t *testing.T) {
	// Storage of 7 float32 values; the weight is a transposed 2x3 view at offset 1.
	data := make([]byte, 7*4)
	for i := 0; i < 7; i++ {
		binary.LittleEndian.PutUint32(data[4*i:], math.Float32bits(float32(i)))
	}
	p := ir.NewProgram()
	p.AddWeight(&ir.Weight{Name: "w", Type: ir.Tensor(ir.Float32, 2, 3), Strides: []int64{1, 2}, StorageOffset: 1, Source: &ir.InlineSource{Data: data}})
	p.AddWeight(&ir.Weight{Name: "fake", Type: ir.Tensor(ir.Float32, 2)})
	w, err := p.Main.AddInput("w", ir.Tensor(ir.Float32, 2, 3))
	if err != nil {
		t.Fatal(err)
	}
	p.Signature.Inputs = []ir.InputSpec{{Kind: ir.Parameter, Name: "w", Target: "w"}}
	p.Main.SetOutputs(ir.ValueArg(w))
	p.Signature.Outputs = []ir.OutputSpec{{Kind: ir.UserOutput}}
	r, err := Run(p, nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	wantT(t, r.Outputs[0], ir.Float32, sh(2, 3), 1, 3, 5, 2, 4, 6)

	// A weight without data is an error naming it.
	p.Signature.Inputs[0].Target = "fake"
	_, err = Run(p, nil, Options{})
	wantErr(t, err, `weight "fake" has no data`)
}

func TestRandomOpsAreSeededAndMarked(t *testing.T) {
	src := `graph forward(%x: f32[4]) {
  %r: f32[4] = aten.rand.default([4])
  %add: f32[4] = aten.add.Tensor(%x, %r)
  %neg: f32[4] = aten.neg.default(%x)
  %d: f32[4] = aten.dropout.default(%x, 0.5, False)
  return %add, %neg, %d
}
`
	p, err := ir.Parse([]byte(src), "rand")
	if err != nil {
		t.Fatal(err)
	}
	x := f32(sh(4), 1, 2, 3, 4)
	a, _ := Run(p, []Value{x}, Options{Seed: 5})
	b, _ := Run(p, []Value{x}, Options{Seed: 5})
	c, _ := Run(p, []Value{x}, Options{Seed: 6})
	if !equalValues(a.Outputs[0], b.Outputs[0]) || equalValues(a.Outputs[0], c.Outputs[0]) {
		t.Fatal("rand should depend on the seed and only on it")
	}
	if !a.Random[0] || a.Random[1] || a.Random[2] {
		t.Fatalf("random marks %v, want [true false false] (eval-mode dropout draws nothing)", a.Random)
	}
}

func equalValues(a, b Value) bool {
	x, y := a.(*Tensor).Float64s(), b.(*Tensor).Float64s()
	for i := range x {
		if x[i] != y[i] {
			return false
		}
	}
	return true
}

func TestFFT(t *testing.T) {
	out := runIR(t, `graph forward(%x: f32[4]) {
  %r: c64[3] = aten.fft_rfft.default(%x)
  %back: f32[4] = aten.fft_irfft.default(%r, 4)
  return %r, %back
}
`, f32(sh(4), 0, 1, 0, 0))
	got := out[0].(*Tensor).Complex128s()
	want := []complex128{1, -1i, -1}
	for i := range want {
		if cmplx.Abs(got[i]-want[i]) > 1e-6 {
			t.Fatalf("rfft = %v, want %v", got, want)
		}
	}
	wantT(t, out[1], ir.Float32, sh(4), 0, 1, 0, 0)
}

func TestArangeAndFactories(t *testing.T) {
	out := runIR(t, `graph forward() {
  %a: i64[4] = aten.arange.start_step(0, 7, 2)
  %b: f32[3] = aten.arange.start_step(0.0, 1.0, 0.4)
  %c: i64[3] = aten.arange.start_step(5, 2, -1)
  %f: b8[2] = aten.full.default([2], True)
  %e: f32[2, 2] = aten.eye.default(2)
  %l: f32[5] = aten.linspace.default(0, 1, 5)
  return %a, %b, %c, %f, %e, %l
}
`)
	wantT(t, out[0], ir.Int64, sh(4), 0, 2, 4, 6)
	wantT(t, out[1], ir.Float32, sh(3), 0, f32r(0.4), f32r(0.8))
	wantT(t, out[2], ir.Int64, sh(3), 5, 4, 3)
	wantT(t, out[3], ir.Bool, sh(2), 1, 1)
	wantT(t, out[4], ir.Float32, sh(2, 2), 1, 0, 0, 1)
	wantT(t, out[5], ir.Float32, sh(5), 0, 0.25, 0.5, 0.75, 1)
}

func TestWithEffectsAndWrap(t *testing.T) {
	out := runIR(t, `graph forward(%tok: token, %x: f32[2]) {
  %t2: token, %r: f32[2] = higher_order.with_effects(%tok, op(aten.relu.default), %x)
  %w: f32[2] = higher_order.wrap_with_set_grad_enabled(False, ^g, %r)
  ^g(%a: f32[2]) {
    %n: f32[2] = aten.neg.default(%a)
    return %n
  }
  return %t2, %w
}
`, Token{}, f32(sh(2), -1, 2))
	wantT(t, out[1], ir.Float32, sh(2), 0, -2)
}

// A loop body may produce data-dependent sizes that differ per iteration.
func TestRegionSymbolsAreLocal(t *testing.T) {
	out := runIR(t, `symbol u0: [0, inf] unbacked
graph forward(%n: i64[], %x: f32[4]) {
  %s0: f32[] = aten.zeros.default([])
  %while: i64[], %acc: f32[] = higher_order.while_loop(^c, ^b, [%n, %s0], [%x])
  ^c(%i: i64[], %a: f32[], %v: f32[4]) {
    %gt: b8[] = aten.gt.Scalar(%i, 0)
    return %gt
  }
  ^b(%i: i64[], %a: f32[], %v: f32[4]) {
    %lt: b8[4] = aten.lt.Tensor(%v, %i)
    %nz: i64[u0, 1] = aten.nonzero.default(%lt)
    %cnt: Sym(u0) = aten.sym_size.int(%nz, 0)
    %f: f32[] = aten.scalar_tensor.default(%cnt)
    %a2: f32[] = aten.add.Tensor(%a, %f)
    %i2: i64[] = aten.sub.Tensor(%i, 1)
    return %i2, %a2
  }
  return %acc
}
`, i64(nil, 3), f32(sh(4), 0, 1, 2, 5))
	// Counts of x < 3, x < 2, x < 1: 3 + 2 + 1.
	wantT(t, out[0], ir.Float32, nil, 6)
}

func TestHugeTensorsFailCleanly(t *testing.T) {
	_, err := runIRErr(t, `graph forward() {
  %z: f32[100000, 100000] = aten.zeros.default([100000, 100000])
  return %z
}
`)
	wantErr(t, err, "%z (aten.zeros.default)", "exceeds the interpreter's limit")
}
