package difftest

import (
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"sort"

	"github.com/fxport/fxport/interp"
	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/ir/sym"
)

// Bindings chooses a value for every backed symbol of the program for
// sample k: the hint (when inside the symbol's range) for sample 0, then
// values next to it (hint+1, hint-1, hint+2, …) that stay in the range.
// Symbols without a hint start from max(lo, 2). Unbacked symbols are left
// to the run, which binds them from the results that define them.
func Bindings(p *ir.Program, k int) map[string]int64 {
	names := map[string]bool{}
	if p.Env != nil {
		for _, s := range p.Env.Symbols() {
			names[s] = true
		}
	}
	for _, in := range interp.UserInputs(p) {
		for _, s := range typeSymbols(in.Type) {
			names[s] = true
		}
	}
	sorted := make([]string, 0, len(names))
	for s := range names {
		sorted = append(sorted, s)
	}
	sort.Strings(sorted)
	bind := map[string]int64{}
	for _, s := range sorted {
		if p.Env != nil && p.Env.IsUnbacked(s) {
			continue
		}
		r := sym.Range{Lo: sym.Finite(2), Hi: sym.PosInf()}
		if p.Env != nil {
			if rr, ok := p.Env.Range(s); ok {
				r = rr
			}
		}
		base := int64(4)
		if p.Env != nil {
			if h, ok := p.Env.Hint(s); ok {
				base = h
			}
		}
		if r.Lo.IsFinite() && base < r.Lo.V {
			base = r.Lo.V
		}
		if r.Hi.IsFinite() && base > r.Hi.V {
			base = r.Hi.V
		}
		bind[s] = nearby(base, k, r)
	}
	return bind
}

// nearby returns the k-th value in the sequence base, base+1, base-1,
// base+2, … that lies in r (base when none does).
func nearby(base int64, k int, r sym.Range) int64 {
	cands := []int64{base}
	for step := int64(1); step < 64; step++ {
		cands = append(cands, base+step, base-step)
	}
	n := 0
	for _, v := range cands {
		if v < 0 || !r.Contains(v) {
			continue
		}
		if n == k {
			return v
		}
		n++
	}
	return base
}

func typeSymbols(t ir.Type) []string {
	switch t := t.(type) {
	case *ir.TensorType:
		var out []string
		for _, d := range t.Shape {
			out = append(out, d.Symbols()...)
		}
		return out
	case *ir.SymIntType:
		if t.Expr.IsValid() {
			return t.Expr.Symbols()
		}
	}
	return nil
}

// Strategies is the number of value distributions GenerateInputs knows.
const Strategies = 4

// GenerateInputs draws the user inputs of sample k with value distribution
// strategy (0 to Strategies-1): shapes from Bindings; then
//
//	0: floats from a standard normal, integers uniformly from [0, 3);
//	1: floats uniformly from [0, 1), integers from [0, 2);
//	2: as 0, sorted along the last dim;
//	3: as 1, sorted along the last dim, integers all 0.
//
// Bools come from a fair coin, except all true for 1 and all false for 3. The stream is seeded by seed, k and the
// strategy. Harnesses use strategy 0 and move to the next when the program
// rejects the inputs (interp.IsDomainError).
func GenerateInputs(p *ir.Program, seed uint64, k, strategy int) ([]interp.Value, map[string]int64, error) {
	bind := Bindings(p, k)
	rng := rand.New(rand.NewPCG(seed, uint64(k)+1+uint64(strategy)<<32))
	var out []interp.Value
	for _, in := range interp.UserInputs(p) {
		v, err := generate(in.Type, bind, rng, strategy)
		if err != nil {
			return nil, nil, fmt.Errorf("input %s: %w", in, err)
		}
		out = append(out, v)
	}
	return out, bind, nil
}

func generate(t ir.Type, bind map[string]int64, rng *rand.Rand, strategy int) (interp.Value, error) {
	switch t := t.(type) {
	case *ir.TensorType:
		if !interp.SupportedDType(t.DType) {
			return nil, fmt.Errorf("cannot generate a %s tensor", t.DType)
		}
		shape := make([]int64, t.Rank())
		for i, d := range t.Shape {
			v, err := d.Eval(bind)
			if err != nil {
				return nil, fmt.Errorf("dim %d (%s): %w", i, d, err)
			}
			if v < 0 {
				return nil, fmt.Errorf("dim %d (%s) evaluates to %d", i, d, v)
			}
			shape[i] = v
		}
		n := int64(1)
		for _, d := range shape {
			n *= d
			if n > interp.MaxElements {
				return nil, fmt.Errorf("shape %v is too large to draw", shape)
			}
		}
		last := int64(1)
		if len(shape) > 0 {
			last = max(shape[len(shape)-1], 1)
		}
		switch {
		case t.DType.IsFloat() || t.DType.IsComplex():
			vals := make([]float64, n)
			for i := range vals {
				if strategy%2 == 0 {
					vals[i] = rng.NormFloat64()
				} else {
					vals[i] = rng.Float64()
				}
			}
			if strategy >= 2 {
				for i := int64(0); i < n; i += last {
					sort.Float64s(vals[i:min(i+last, n)])
				}
			}
			return interp.FromFloat64(t.DType, shape, vals), nil
		case t.DType == ir.Bool:
			vals := make([]int64, n)
			for i := range vals {
				switch strategy {
				case 1:
					vals[i] = 1
				case 3:
				default:
					vals[i] = rng.Int64N(2)
				}
			}
			return interp.FromInt64(t.DType, shape, vals), nil
		default:
			hi := []int64{3, 2, 3, 1}[strategy%Strategies]
			vals := make([]int64, n)
			for i := range vals {
				vals[i] = rng.Int64N(hi)
			}
			if strategy >= 2 {
				for i := int64(0); i < n; i += last {
					s := vals[i:min(i+last, n)]
					sort.Slice(s, func(a, b int) bool { return s[a] < s[b] })
				}
			}
			return interp.FromInt64(t.DType, shape, vals), nil
		}
	case *ir.SymIntType:
		if t.Expr.IsValid() {
			v, err := t.Expr.Eval(bind)
			if err == nil {
				return v, nil
			}
		}
		return rng.Int64N(3) + 1, nil
	case *ir.SymFloatType:
		return rng.NormFloat64(), nil
	case *ir.SymBoolType:
		return rng.Int64N(2) == 1, nil
	case *ir.ScalarType:
		switch t.Kind {
		case ir.IntKind:
			return rng.Int64N(3) + 1, nil
		case ir.FloatKind:
			return rng.NormFloat64(), nil
		case ir.BoolKind:
			return rng.Int64N(2) == 1, nil
		}
	case *ir.OptionalType:
		return generate(t.Elem, bind, rng, strategy)
	case *ir.NoneType:
		return nil, nil
	case *ir.TokenType:
		return interp.Token{}, nil
	}
	return nil, fmt.Errorf("cannot generate an input of type %s", t)
}

// describeBindings prints bindings as "s0=4, s1=2".
func describeBindings(b map[string]int64) string {
	keys := make([]string, 0, len(b))
	for k := range b {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	s := ""
	for i, k := range keys {
		if i > 0 {
			s += ", "
		}
		s += fmt.Sprintf("%s=%d", k, b[k])
	}
	return s
}

// FakeWeights returns an interp.Options.MissingWeight that fills weights
// without data with seeded values (floats standard normal, integers from
// [0, 3)), the same for a given seed and weight name in every run.
func FakeWeights(seed uint64) func(w *ir.Weight) (*interp.Tensor, error) {
	return func(w *ir.Weight) (*interp.Tensor, error) {
		if w.Type == nil {
			return nil, fmt.Errorf("no type")
		}
		h := fnv.New64a()
		h.Write([]byte(w.Name))
		rng := rand.New(rand.NewPCG(seed, h.Sum64()))
		v, err := generate(w.Type, nil, rng, 0)
		if err != nil {
			return nil, err
		}
		return v.(*interp.Tensor), nil
	}
}
