package difftest

import (
	"fmt"
	"math"
	"math/cmplx"

	"github.com/fxport/fxport/interp"
	"github.com/fxport/fxport/ir"
)

// Tolerance bounds the difference allowed between two float values:
// |got - want| <= Abs + Rel*|want|.
type Tolerance struct{ Abs, Rel float64 }

// DefaultTolerances are the tolerances by dtype; integer and bool values
// must be equal. float32 is torch's usual 1e-4.
var DefaultTolerances = map[ir.DType]Tolerance{
	ir.Float64:    {1e-7, 1e-7},
	ir.Float32:    {1e-4, 1e-4},
	ir.Float16:    {1e-2, 1e-2},
	ir.BFloat16:   {2e-2, 2e-2},
	ir.Complex128: {1e-7, 1e-7},
	ir.Complex64:  {1e-4, 1e-4},
}

// tolerance picks the tolerance of a dtype from tols, then the defaults.
func tolerance(dt ir.DType, tols map[ir.DType]Tolerance) Tolerance {
	if t, ok := tols[dt]; ok {
		return t
	}
	return DefaultTolerances[dt]
}

// Compare checks got against want: same kind, dtype and shape, and values
// within the dtype's tolerance (NaN matches NaN, infinities must match
// exactly). A bfloat16 or float16 got may be compared with a wider float
// want (numpy has no bfloat16), under got's tolerance.
func Compare(got, want interp.Value, tols map[ir.DType]Tolerance) error {
	switch w := want.(type) {
	case *interp.Tensor:
		g, ok := got.(*interp.Tensor)
		if !ok {
			return fmt.Errorf("got a %T, want a tensor", got)
		}
		return compareTensors(g, w, tols)
	case []interp.Value:
		g, ok := got.([]interp.Value)
		if !ok || len(g) != len(w) {
			return fmt.Errorf("got %s, want a list of %d", interp.Describe(got), len(w))
		}
		for i := range w {
			if err := Compare(g[i], w[i], tols); err != nil {
				return fmt.Errorf("element %d: %w", i, err)
			}
		}
		return nil
	case float64:
		g, ok := got.(float64)
		if !ok {
			return fmt.Errorf("got %s, want the float %g", interp.Describe(got), w)
		}
		if !close(g, w, tolerance(ir.Float64, tols)) {
			return fmt.Errorf("got %g, want %g", g, w)
		}
		return nil
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		return fmt.Errorf("got %s, want %s", interp.Describe(got), interp.Describe(want))
	}
	return nil
}

func close(g, w float64, t Tolerance) bool {
	switch {
	case math.IsNaN(w) || math.IsNaN(g):
		return math.IsNaN(w) && math.IsNaN(g)
	case math.IsInf(w, 0) || math.IsInf(g, 0):
		return g == w
	}
	return math.Abs(g-w) <= t.Abs+t.Rel*math.Abs(w)
}

func widerFloat(got, want ir.DType) bool {
	return (got == ir.BFloat16 || got == ir.Float16) && (want == ir.Float32 || want == ir.Float64)
}

func compareTensors(g, w *interp.Tensor, tols map[ir.DType]Tolerance) error {
	if g.DType != w.DType && !widerFloat(g.DType, w.DType) {
		return fmt.Errorf("got dtype %s, want %s", g.DType, w.DType)
	}
	if len(g.Shape) != len(w.Shape) {
		return fmt.Errorf("got shape %v, want %v", g.Shape, w.Shape)
	}
	for i := range g.Shape {
		if g.Shape[i] != w.Shape[i] {
			return fmt.Errorf("got shape %v, want %v", g.Shape, w.Shape)
		}
	}
	switch {
	case g.DType.IsComplex():
		t := tolerance(g.DType, tols)
		gv, wv := g.Complex128s(), w.Complex128s()
		for i := range gv {
			if !close(real(gv[i]), real(wv[i]), t) || !close(imag(gv[i]), imag(wv[i]), t) {
				return fmt.Errorf("value at %v: got %v, want %v (abs diff %.3g)", unravel(int64(i), g.Shape), gv[i], wv[i], cmplx.Abs(gv[i]-wv[i]))
			}
		}
	case g.DType.IsFloat():
		t := tolerance(g.DType, tols)
		gv, wv := g.Float64s(), w.Float64s()
		worst, at := -1.0, -1
		for i := range gv {
			if close(gv[i], wv[i], t) {
				continue
			}
			d := math.Abs(gv[i] - wv[i])
			if math.IsNaN(d) || math.IsInf(d, 0) {
				d = math.Inf(1)
			}
			if d > worst {
				worst, at = d, i
			}
		}
		if at >= 0 {
			n := 0
			for i := range gv {
				if !close(gv[i], wv[i], t) {
					n++
				}
			}
			return fmt.Errorf("%d of %d values differ beyond tolerance (abs %g, rel %g); largest at %v: got %g, want %g", n, len(gv), t.Abs, t.Rel, unravel(int64(at), g.Shape), gv[at], wv[at])
		}
	default:
		gv, wv := g.Int64s(), w.Int64s()
		n, first := 0, -1
		for i := range gv {
			if gv[i] != wv[i] {
				if first < 0 {
					first = i
				}
				n++
			}
		}
		if n > 0 {
			return fmt.Errorf("%d of %d values differ; first at %v: got %d, want %d", n, len(gv), unravel(int64(first), g.Shape), gv[first], wv[first])
		}
	}
	return nil
}

// unravel turns a row-major position into a multi-index.
func unravel(k int64, shape []int64) []int64 {
	idx := make([]int64, len(shape))
	for i := len(shape) - 1; i >= 0; i-- {
		if shape[i] > 0 {
			idx[i] = k % shape[i]
			k /= shape[i]
		}
	}
	return idx
}

// outputKey names a graph output by its role, so that outputs can be
// matched across a pass that reorders or drops others: the k-th user (or
// loss) output, or a mutation by its kind and target.
type outputKey struct {
	kind   ir.OutputKind
	target string
	k      int
}

func (o outputKey) String() string {
	if o.target != "" {
		return fmt.Sprintf("%s %q", o.kind, o.target)
	}
	return fmt.Sprintf("%s %d", o.kind, o.k)
}

// outputKeys lists the keys of p's main-graph outputs, in order.
func outputKeys(p *ir.Program) []outputKey {
	n := len(p.Main.Outputs())
	keys := make([]outputKey, n)
	counts := map[ir.OutputKind]int{}
	for i := 0; i < n; i++ {
		kind, target := ir.UserOutput, ""
		if i < len(p.Signature.Outputs) {
			kind, target = p.Signature.Outputs[i].Kind, p.Signature.Outputs[i].Target
		}
		if kind == ir.UserOutput || kind == ir.LossOutput || kind == ir.TokenOutput {
			target = ""
		}
		keys[i] = outputKey{kind: kind, target: target, k: counts[kind]}
		counts[kind]++
	}
	return keys
}

// UserOutputs picks the user (and loss) outputs of a run, in order: what
// torch returns to the caller and what the corpus stores.
func UserOutputs(p *ir.Program, outs []interp.Value) []interp.Value {
	var res []interp.Value
	for i, k := range outputKeys(p) {
		if (k.kind == ir.UserOutput || k.kind == ir.LossOutput) && i < len(outs) {
			res = append(res, outs[i])
		}
	}
	return res
}

// outputDiff compares the outputs of two programs matched by role. It
// returns the key of the first differing output and the difference.
func outputDiff(before *ir.Program, b *interp.Result, after *ir.Program, a *interp.Result, tols map[ir.DType]Tolerance) (string, error) {
	bk, ak := outputKeys(before), outputKeys(after)
	index := map[outputKey]int{}
	for i, k := range ak {
		index[k] = i
	}
	for i, k := range bk {
		j, ok := index[k]
		if !ok {
			if k.kind == ir.TokenOutput {
				continue
			}
			return k.String(), fmt.Errorf("output disappeared")
		}
		if b.Random[i] || a.Random[j] {
			continue // depends on random draws: not compared
		}
		if err := Compare(a.Outputs[j], b.Outputs[i], tols); err != nil {
			return fmt.Sprintf("output %d (%s)", j, k), err
		}
	}
	for _, k := range ak {
		found := false
		for _, x := range bk {
			if x == k {
				found = true
				break
			}
		}
		if !found && k.kind != ir.TokenOutput {
			return k.String(), fmt.Errorf("output appeared")
		}
	}
	return "", nil
}
