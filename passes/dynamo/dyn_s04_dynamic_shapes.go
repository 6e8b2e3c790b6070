package dynamo

import (
	"fmt"
	"sort"
	"strings"

	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/ir/sym"
	"github.com/fxport/fxport/pm"
)

// ApplyDynamicShapes applies the user's dynamic-shape spec to the traced
// program's symbols (DYN-S04).
var ApplyDynamicShapes = pm.RegisterPass(&pm.Pass{
	Name:     "apply-dynamic-shapes",
	ID:       "DYN-S04",
	Kind:     pm.KindTransform,
	Stage:    pm.StageDynamicShapes,
	Required: true,
	Options: []pm.OptionSpec{{
		Name: "spec",
		Doc:  `dynamic-shape spec: "input.dim=name:lo..hi, ..." or JSON (docs/dynamo.md)`,
		Check: func(v string) error {
			_, err := ParseDynamicShapes(v, "option spec")
			return err
		},
	}},
	Doc: `name the dynamic dims of the inputs and narrow their ranges, as the user specified

The capture shim traces with Dim.AUTO (DYN-S04), so torch.export invents the
symbol names (s0, s1) that become ONNX dim_params. This pass applies the
user's specification, from the pass option spec and from the program
metadata export.dynamic_shapes, to the symbols that already exist: it renames
a symbol everywhere (every type of every graph, the range and the hint) and
narrows its range. It cannot make a dim dynamic after tracing, so it rejects
a dim the program has static, a dim that is an expression rather than a
symbol, two names for one symbol or one name for two symbols, a name that is
already another symbol, a range outside the traced one or excluding the
trace-time hint, and unknown inputs or dims, each error naming the input and
the dim. Without a spec it does nothing.`,
	Run: runApplyDynamicShapes,
})

func runApplyDynamicShapes(p *ir.Program, c *pm.Ctx) (pm.Result, error) {
	var specs []DimSpec
	if text, ok := p.Meta.Get(MetaDynamicShapes); ok {
		s, err := ParseDynamicShapes(text, fmt.Sprintf("meta %q", MetaDynamicShapes))
		if err != nil {
			return pm.Result{}, err
		}
		specs = append(specs, s...)
	}
	s, err := ParseDynamicShapes(c.Option("spec"), "option spec")
	if err != nil {
		return pm.Result{}, err
	}
	specs = append(specs, s...)
	if len(specs) == 0 {
		return pm.Result{}, nil
	}
	plan, err := planDynamicShapes(p, specs)
	if err != nil {
		return pm.Result{}, err
	}
	renames := map[string]string{}
	for _, a := range plan {
		if a.name != a.symbol {
			renames[a.symbol] = a.name
		}
	}
	changed, err := RenameSymbols(p, renames)
	if err != nil {
		return pm.Result{}, err
	}
	for _, a := range plan {
		old, _ := p.Env.Range(a.name)
		narrowed := !sameRange(old, a.rng)
		if narrowed {
			p.Env.SetRange(a.name, a.rng)
		}
		detail := a.symbol
		if a.name != a.symbol {
			detail += " -> " + a.name
		}
		if narrowed {
			detail += ", range " + old.String() + " -> " + a.rng.String()
		} else if a.name == a.symbol {
			c.Debugf(nil, "%s already as specified (%s)", a.symbol, strings.Join(a.labels, ", "))
			continue
		}
		changed = true
		c.Fired(nil, detail+" ("+strings.Join(a.labels, ", ")+")")
	}
	return pm.Result{Changed: changed}, nil
}

// dimAction is what the spec asks of one symbol.
type dimAction struct {
	symbol, name string
	// rng is the narrowed range.
	rng sym.Range
	// labels are the input dims that name it ("x.0"); where locates the
	// entry that gave the new name.
	labels []string
	where  string
}

// resolvedDim is one spec entry bound to the program.
type resolvedDim struct {
	spec DimSpec
	// dim is the spec's dim, made non-negative.
	dim int
}

func (r resolvedDim) label() string { return fmt.Sprintf("%s.%d", r.spec.Input, r.dim) }

// planDynamicShapes validates the entries against the program and groups
// them by symbol, in symbol order.
func planDynamicShapes(p *ir.Program, specs []DimSpec) ([]dimAction, error) {
	lookup, err := inputLookup(p)
	if err != nil {
		return nil, err
	}
	bySym := map[string][]resolvedDim{}
	seen := map[string]DimSpec{} // "<input index>.<dim>" -> entry
	for _, d := range specs {
		v, err := lookup(d)
		if err != nil {
			return nil, err
		}
		t := v.Tensor()
		if t == nil {
			return nil, fmt.Errorf("%s: input %q (%s) is a %s, not a tensor", d.Where, d.Input, v, v.Type)
		}
		dim := d.Dim
		if dim < 0 {
			dim += t.Rank()
		}
		if dim < 0 || dim >= t.Rank() {
			return nil, fmt.Errorf("%s: input %q has rank %d, no dim %d", d.Where, d.Input, t.Rank(), d.Dim)
		}
		key := fmt.Sprintf("%d.%d", v.Index, dim)
		if prev, dup := seen[key]; dup {
			if prev.Name != d.Name || prev.rangeText() != d.rangeText() {
				return nil, fmt.Errorf("%s: input %q dim %d is already specified differently by %s", d.Where, d.Input, dim, prev.Where)
			}
			continue
		}
		seen[key] = d
		e := t.Shape[dim]
		if c, ok := e.Const(); ok {
			return nil, fmt.Errorf("%s: input %q dim %d is static (%d) in the traced program; a dim cannot become dynamic after tracing", d.Where, d.Input, dim, c)
		}
		s, ok := e.Name()
		if !ok {
			return nil, fmt.Errorf("%s: input %q dim %d is the expression %s, not a symbol; name the symbol where it appears alone", d.Where, d.Input, dim, e)
		}
		bySym[s] = append(bySym[s], resolvedDim{d, dim})
	}

	var plan []dimAction
	byName := map[string]string{} // new name -> "symbol (input dims)"
	for _, s := range sortedKeys(bySym) {
		entries := bySym[s]
		a := dimAction{symbol: s, name: s}
		a.rng, _ = p.Env.Range(s)
		traced := a.rng
		var named *DimSpec
		for i := range entries {
			d := entries[i].spec
			a.labels = append(a.labels, entries[i].label())
			if d.Name != "" {
				if named != nil && named.Name != d.Name {
					return nil, fmt.Errorf("two names for one symbol %s: %s (%s) and %s (%s)", s, named.Name, named.Where, d.Name, d.Where)
				}
				named = &entries[i].spec
				a.name = d.Name
			}
			if err := narrow(&a.rng, traced, entries[i], p.Env, s); err != nil {
				return nil, err
			}
		}
		if named != nil {
			a.where = named.Where
			if other, dup := byName[a.name]; dup {
				return nil, fmt.Errorf("%s: name %s is given to two symbols, %s and %s (%s)", named.Where, a.name, other, s, strings.Join(a.labels, ", "))
			}
			byName[a.name] = s + " (" + strings.Join(a.labels, ", ") + ")"
		}
		plan = append(plan, a)
	}
	// A new name may not be a symbol that keeps its own name.
	used := programSymbols(p)
	for _, a := range plan {
		if a.name == a.symbol || !used[a.name] || planRenames(plan, a.name) {
			continue
		}
		return nil, fmt.Errorf("%s: cannot rename symbol %s to %s: %s is already another symbol of the program", a.where, a.symbol, a.name, a.name)
	}
	sort.SliceStable(plan, func(i, j int) bool { return plan[i].symbol < plan[j].symbol })
	return plan, nil
}

func sameRange(a, b sym.Range) bool { return a.Lo.Cmp(b.Lo) == 0 && a.Hi.Cmp(b.Hi) == 0 }

// planRenames reports whether the plan gives symbol s a new name.
func planRenames(plan []dimAction, s string) bool {
	for _, a := range plan {
		if a.symbol == s {
			return a.name != s
		}
	}
	return false
}

// narrow intersects r with the entry's bounds after checking them against
// the traced range and the trace-time hint of symbol s.
func narrow(r *sym.Range, traced sym.Range, rd resolvedDim, env *sym.Env, s string) error {
	d := rd.spec
	where := func(format string, args ...any) error {
		return fmt.Errorf("%s: input %q dim %d (symbol %s): %s", d.Where, d.Input, rd.dim, s, fmt.Sprintf(format, args...))
	}
	lo, hi := traced.Lo, traced.Hi
	if d.Min != nil {
		if d.Min.Cmp(traced.Lo) < 0 || d.Min.Cmp(traced.Hi) > 0 {
			return where("min %s is outside the traced range %s", d.Min, traced)
		}
		lo = *d.Min
	}
	if d.Max != nil {
		if d.Max.Cmp(traced.Hi) > 0 || d.Max.Cmp(traced.Lo) < 0 {
			return where("max %s is outside the traced range %s", d.Max, traced)
		}
		hi = *d.Max
	}
	want := sym.Range{Lo: lo, Hi: hi}
	if h, ok := env.Hint(s); ok && !want.Contains(h) {
		return where("range %s excludes the trace-time value %d", want, h)
	}
	*r = r.Intersect(want)
	if r.IsEmpty() {
		return where("range %s leaves no value with the other entries for the symbol", want)
	}
	return nil
}

// inputLookup resolves an entry's input: its flat name (from flat-io-names'
// metadata) or its placeholder name.
func inputLookup(p *ir.Program) (func(DimSpec) (*ir.Value, error), error) {
	ins := p.UserInputs()
	flat, _, ok, err := p.IONames()
	if err != nil {
		return nil, err
	}
	byFlat := map[string]*ir.Value{}
	if ok {
		for i, n := range flat {
			byFlat[n] = ins[i]
		}
	}
	byPlaceholder := map[string]*ir.Value{}
	var known []string
	for i, v := range ins {
		byPlaceholder[v.Name] = v
		known = append(known, v.Name)
		if ok && flat[i] != v.Name {
			known[len(known)-1] = flat[i] + " (" + v.Name + ")"
		}
	}
	return func(d DimSpec) (*ir.Value, error) {
		f, okF := byFlat[d.Input]
		ph, okP := byPlaceholder[d.Input]
		switch {
		case okF && okP && f != ph:
			return nil, fmt.Errorf("%s: input %q is ambiguous: the flat name of %s and the placeholder %s", d.Where, d.Input, f, ph)
		case okF:
			return f, nil
		case okP:
			return ph, nil
		}
		return nil, fmt.Errorf("%s: unknown input %q (user inputs: %s)", d.Where, d.Input, strings.Join(known, ", "))
	}, nil
}
