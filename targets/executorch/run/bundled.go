package run

import (
	"fmt"
	"math"
	"strings"

	"github.com/fxport/fxport/interp"
	"github.com/fxport/fxport/ir"
	etfb "github.com/fxport/fxport/targets/executorch/fb/executorch_flatbuffer"
	"github.com/fxport/fxport/targets/executorch/pte"
)

// ExecuTorch's default tolerances for checking a bundled program's outputs
// (verify_method_outputs in devtools/bundled_program).
const (
	DefaultRTol = 1e-5
	DefaultATol = 1e-8
)

// BundledOptions configure RunBundled.
type BundledOptions struct {
	// Options configure loading each method; Options.Method, when set,
	// restricts the run to that method's test suite.
	Options
	// RTol and ATol: a floating-point element passes when
	// |expected − got| ≤ ATol + |RTol × got| (NaN matches NaN, an infinity
	// the same infinity); other dtypes must match exactly.
	RTol, ATol float64
}

// CaseResult is the outcome of one bundled test case.
type CaseResult struct {
	Method string
	Case   int
	// Err is nil when every output matched; otherwise the execution error
	// or the first mismatching output.
	Err error
	// MaxAbsErr is the largest |expected − got| over the floating-point
	// output elements (0 when there are none, +Inf on a NaN mismatch).
	MaxAbsErr float64
}

// Passed reports a case whose outputs all matched.
func (r CaseResult) Passed() bool { return r.Err == nil }

// RunBundled runs every test case of the bundled program f (each suite's
// method is loaded once and its cases run in order, as ExecuTorch's runner
// does) and compares each output with the case's expected output. Errors
// that concern the whole file (not bundled, no suite for opts.Method, a
// method that does not load) are returned; a case that fails to execute
// or mismatches is reported in its CaseResult.
func RunBundled(f *pte.File, opts BundledOptions) ([]CaseResult, error) {
	if f.Bundled == nil {
		return nil, fmt.Errorf("%s: not a bundled program (.bpte)", f.Name)
	}
	var results []CaseResult
	ran := 0
	for _, s := range f.Bundled.TestSuites {
		if opts.Method != "" && s.Method != opts.Method {
			continue
		}
		ran++
		lo := opts.Options
		lo.Method = s.Method
		m, err := Load(f, lo)
		if err != nil {
			return nil, err
		}
		for ci, c := range s.Cases {
			r := CaseResult{Method: s.Method, Case: ci}
			r.MaxAbsErr, r.Err = m.runCase(c, opts.RTol, opts.ATol)
			results = append(results, r)
		}
	}
	if opts.Method != "" && ran == 0 {
		var names []string
		for _, s := range f.Bundled.TestSuites {
			names = append(names, s.Method)
		}
		return nil, fmt.Errorf("%s: no test suite for method %q (suites: %v)", f.Name, opts.Method, names)
	}
	return results, nil
}

// runCase executes one case and compares its outputs.
func (m *Method) runCase(c pte.BundledCase, rtol, atol float64) (float64, error) {
	ins := make([]interp.Value, len(c.Inputs))
	for i, v := range c.Inputs {
		x, err := BundledValue(v)
		if err != nil {
			return 0, fmt.Errorf("input %d: %w", i, err)
		}
		ins[i] = x
	}
	outs, err := m.Execute(ins)
	if err != nil {
		return 0, err
	}
	if len(c.ExpectedOutputs) != len(outs) {
		return 0, fmt.Errorf("%d expected outputs, the method returns %d", len(c.ExpectedOutputs), len(outs))
	}
	maxErr := 0.0
	for i, want := range c.ExpectedOutputs {
		e, err := CompareBundled(outs[i], want, rtol, atol)
		maxErr = math.Max(maxErr, e)
		if err != nil {
			return maxErr, fmt.Errorf("output %d: %w", i, err)
		}
	}
	return maxErr, nil
}

// BundledValue converts a bundled value into an interpreter value: a
// tensor in logical (dimension) order, an int64, a bool or a float64.
func BundledValue(v pte.BundledValue) (interp.Value, error) {
	switch v.Kind {
	case pte.BundledInt:
		return v.Int, nil
	case pte.BundledBool:
		return v.Bool, nil
	case pte.BundledDouble:
		return v.Double, nil
	case pte.BundledTensor:
		if v.Tensor == nil {
			return nil, fmt.Errorf("tensor value without its tensor")
		}
		return bundledTensor(v.Tensor)
	}
	return nil, fmt.Errorf("value of %s", v.Kind)
}

func bundledTensor(t *pte.BundledTensorData) (*interp.Tensor, error) {
	if err := t.Check(); err != nil {
		return nil, err
	}
	dt, err := dtypeOf(t.ScalarType)
	if err != nil {
		return nil, err
	}
	phys := make([]int64, len(t.Sizes))
	order := make([]int, len(t.DimOrder))
	for i, d := range t.DimOrder {
		phys[i] = int64(t.Sizes[d])
		order[i] = int(d)
	}
	x, err := interp.FromBytes(dt, phys, t.Data)
	if err != nil {
		return nil, err
	}
	if identityOrder(order) {
		return x, nil
	}
	inv := make([]int64, len(order))
	for p, d := range order {
		inv[d] = int64(p)
	}
	x, err = permute(x, inv)
	if err != nil {
		return nil, err
	}
	return x.Contiguous(), nil
}

// CompareBundled compares a method output with its expected bundled value,
// as ExecuTorch's verify_method_outputs does: a tensor must have the
// expected dtype and sizes, and floating-point elements pass when
// |want − got| ≤ atol + |rtol × got| (NaN = NaN, ±Inf = ±Inf); other
// dtypes and scalars must be equal. It returns the largest absolute error
// over floating-point elements and, on a mismatch, an error that counts the
// differing elements and shows the first.
func CompareBundled(got interp.Value, want pte.BundledValue, rtol, atol float64) (float64, error) {
	switch want.Kind {
	case pte.BundledInt, pte.BundledBool, pte.BundledDouble:
		w, _ := BundledValue(want)
		if fmt.Sprint(got) != fmt.Sprint(w) {
			return 0, fmt.Errorf("got %s, want %s", interp.Describe(got), want)
		}
		return 0, nil
	case pte.BundledTensor:
	default:
		return 0, fmt.Errorf("expected value of %s", want.Kind)
	}
	g, ok := got.(*interp.Tensor)
	if !ok {
		return 0, fmt.Errorf("got %s, want a tensor", interp.Describe(got))
	}
	w, err := bundledTensor(want.Tensor)
	if err != nil {
		return 0, fmt.Errorf("expected output: %w", err)
	}
	if g.DType != w.DType || fmt.Sprint(g.Shape) != fmt.Sprint(w.Shape) {
		return 0, fmt.Errorf("got %s, want %s", typeText(g), typeText(w))
	}
	if g.DType.IsFloat() {
		return compareFloats(g, w, rtol, atol)
	}
	gs, ws := g.Contiguous().Int64s(), w.Int64s()
	bad, first := 0, -1
	for i := range ws {
		if gs[i] != ws[i] {
			if bad++; first < 0 {
				first = i
			}
		}
	}
	if bad > 0 {
		return 0, fmt.Errorf("%d of %d elements differ (exact comparison for %s); first at %s: got %d, want %d",
			bad, len(ws), g.DType.Abbr(), index(w.Shape, first), gs[first], ws[first])
	}
	return 0, nil
}

func compareFloats(g, w *interp.Tensor, rtol, atol float64) (float64, error) {
	gs, ws := g.Contiguous().Float64s(), w.Float64s()
	bad, first := 0, -1
	maxErr := 0.0
	for i := range ws {
		a, b := ws[i], gs[i]
		d := math.Abs(a - b)
		switch {
		case math.IsNaN(a) && math.IsNaN(b):
			continue
		case math.IsInf(a, 0) && math.IsInf(b, 0) && (a > 0) == (b > 0):
			continue
		case math.IsNaN(d):
			d = math.Inf(1)
		}
		maxErr = math.Max(maxErr, d)
		if math.IsInf(d, 0) || d > atol+math.Abs(rtol*b) {
			if bad++; first < 0 {
				first = i
			}
		}
	}
	if bad > 0 {
		return maxErr, fmt.Errorf("%d of %d elements differ beyond rtol %g, atol %g (max abs error %.3g); first at %s: got %v, want %v",
			bad, len(ws), rtol, atol, maxErr, index(w.Shape, first), gs[first], ws[first])
	}
	return maxErr, nil
}

// typeText prints a tensor's type as f32[2,3].
func typeText(t *interp.Tensor) string {
	dims := make([]string, len(t.Shape))
	for i, d := range t.Shape {
		dims[i] = fmt.Sprint(d)
	}
	return t.DType.Abbr() + "[" + strings.Join(dims, ",") + "]"
}

// index prints the multi-index of flat (row-major) element i of shape.
func index(shape []int64, i int) string {
	idx := make([]string, len(shape))
	for d := len(shape) - 1; d >= 0; d-- {
		if shape[d] == 0 {
			idx[d] = "0"
			continue
		}
		idx[d] = fmt.Sprint(int64(i) % shape[d])
		i /= int(shape[d])
	}
	return "[" + strings.Join(idx, ",") + "]"
}

// ScalarTypeOf is the ExecuTorch scalar type of an IR dtype (the inverse
// of the mapping the runner decodes tensors with).
func ScalarTypeOf(dt ir.DType) (etfb.ScalarType, error) {
	for code := 0; code <= math.MaxInt8; code++ {
		st := etfb.ScalarType(code)
		if _, named := etfb.EnumNamesScalarType[st]; !named {
			continue
		}
		if d, err := dtypeOf(st); err == nil && d == dt {
			return st, nil
		}
	}
	return 0, fmt.Errorf("dtype %s has no ExecuTorch scalar type", dt)
}
