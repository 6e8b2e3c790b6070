package passes

import (
	"fmt"
	"math"
	"sort"
	"strconv"

	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/ir/sym"
	"github.com/fxport/fxport/pm"
)

// WidenSymbolRanges gives every unbounded size symbol a finite upper bound
// before memory planning (ET-PF01).
var WidenSymbolRanges = pm.RegisterPass(&pm.Pass{
	Name:     etWidenRangesName,
	ID:       "ET-PF01",
	Kind:     pm.KindFix,
	Backends: []string{pm.BackendExecuTorch},
	Stage:    pm.StageFXProgramFixes,
	Required: true,
	Requires: []pm.Requirement{{
		After: etDropAssertsName,
		Why:   "bounds the program asserts must reach the Env before unbounded symbols are given a heuristic bound",
	}},
	Options: []pm.OptionSpec{
		etPositiveOption("multiplier", 4, "factor applied to a symbol's lower bound and trace-time hint"),
		etPositiveOption("floor", 1024, "smallest upper bound given to a symbol (the per-dim floor before the product budget)"),
		etPositiveOption("min-floor", 64, "smallest per-dim floor the product budget may lower the floor to"),
		etPositiveOption("budget", 1<<24, "element budget of a tensor whose dims are all unbounded: each of its N unbounded dims gets budget^(1/N)"),
		etPositiveOption("default-lower", 2, "lower bound assumed for a symbol whose lower bound is not finite"),
		pm.BoolOption("unbacked", false, "also bound unbacked (data-dependent) symbols"),
	},
	Doc: `give every size symbol with an infinite upper bound a finite one

ExecuTorch's memory planner allocates every buffer at its upper bound, so a
symbol torch.export left at [lo, inf] has to be bounded. Each such backed
symbol gets the upper bound max(lo·multiplier, hint·multiplier, floor_N)
(lo is default-lower when not finite, the hint 0 when unknown), where
floor_N = clamp(round(budget^(1/N)), min-floor, floor) and N is the largest
number of distinct unbounded symbols among the dims of one graph input that
has this symbol as a dim (N = 1, hence floor, when no input has it). With
the defaults (×4, 1024, 64, 2^24) a tensor with two unbounded dims keeps the
floor 1024, three get 256 and four or more 64. The lower bound and hint are
kept. Each firing names the symbol and its new range; users wanting other
bounds pass Dim(min, max) in the dynamic-shape spec (DYN-S04).

Differences from Python: the Python fix patched two range stores
(range_constraints and the shape env); fxport has one, the program's Env.
It runs after drop-runtime-asserts (ET-PF03), which copies asserted bounds
into the Env first, where Python widened before the asserts were dropped.
Unbacked symbols are left unbounded unless the option unbacked is set: a
heuristic bound on a data-dependent size is a claim about data, not shape.
The query-axis (cache-length hint) and modality-axis variants of later
Python revisions are not implemented: the IR does not record which symbol is
a query or modality axis.`,
	Run: runWidenSymbolRanges,
})

const etWidenRangesName = "widen-symbol-ranges"

// etPositiveOption declares an integer option that must be at least 1.
func etPositiveOption(name string, def int64, doc string) pm.OptionSpec {
	return pm.OptionSpec{
		Name:    name,
		Doc:     doc,
		Default: strconv.FormatInt(def, 10),
		Check: func(v string) error {
			_, err := etParsePositive(name, v)
			return err
		},
	}
}

func etParsePositive(name, v string) (int64, error) {
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("option %s: %q is not a positive integer", name, v)
	}
	return n, nil
}

// etWidenConfig holds the pass options, parsed.
type etWidenConfig struct {
	mult, floor, minFloor, budget, defLower int64
	unbacked                                bool
}

func etReadWidenConfig(c *pm.Ctx) (etWidenConfig, error) {
	var cfg etWidenConfig
	for _, o := range []struct {
		name string
		dst  *int64
	}{{"multiplier", &cfg.mult}, {"floor", &cfg.floor}, {"min-floor", &cfg.minFloor}, {"budget", &cfg.budget}, {"default-lower", &cfg.defLower}} {
		v, err := etParsePositive(o.name, c.Option(o.name))
		if err != nil {
			return cfg, err
		}
		*o.dst = v
	}
	if cfg.minFloor > cfg.floor {
		return cfg, fmt.Errorf("option min-floor (%d) exceeds floor (%d)", cfg.minFloor, cfg.floor)
	}
	cfg.unbacked = c.BoolOption("unbacked")
	return cfg, nil
}

// floorFor is clamp(round(budget^(1/n)), minFloor, floor).
func (cfg etWidenConfig) floorFor(n int) int64 {
	if n < 1 {
		n = 1
	}
	f := math.Round(math.Pow(float64(cfg.budget), 1/float64(n)))
	v := cfg.floor
	if f < float64(cfg.floor) {
		v = int64(f)
	}
	if v < cfg.minFloor {
		v = cfg.minFloor
	}
	return v
}

func runWidenSymbolRanges(p *ir.Program, c *pm.Ctx) (pm.Result, error) {
	cfg, err := etReadWidenConfig(c)
	if err != nil {
		return pm.Result{}, err
	}
	env := p.Env
	if env == nil {
		return pm.Result{}, nil
	}
	var targets []string
	for _, s := range env.Symbols() {
		r, _ := env.Range(s)
		if r.Hi.Inf <= 0 || (env.IsUnbacked(s) && !cfg.unbacked) {
			continue
		}
		targets = append(targets, s)
	}
	if len(targets) == 0 {
		return pm.Result{}, nil
	}
	sort.Strings(targets)
	unbounded := map[string]bool{}
	for _, s := range targets {
		unbounded[s] = true
	}
	dims := etUnboundedDimsPerSymbol(p, unbounded)
	for _, s := range targets {
		r, _ := env.Range(s)
		lo := cfg.defLower
		if r.Lo.IsFinite() {
			lo = r.Lo.V
		}
		hint, _ := env.Hint(s)
		hi := etSatMul(lo, cfg.mult)
		if h := etSatMul(hint, cfg.mult); h > hi {
			hi = h
		}
		floor := cfg.floorFor(dims[s])
		if floor > hi {
			hi = floor
		}
		if r.Lo.IsFinite() && hi < r.Lo.V {
			hi = r.Lo.V
		}
		nr := sym.Range{Lo: r.Lo, Hi: sym.Finite(hi)}
		env.SetRange(s, nr)
		c.Stat("widened-symbols", 1)
		detail := fmt.Sprintf("%s: %s -> %s", s, r, nr)
		if dims[s] > 1 {
			detail += fmt.Sprintf(" (floor %d for %d unbounded dims)", floor, dims[s])
		}
		c.Fired(nil, detail)
	}
	return pm.Result{Changed: true}, nil
}

// etUnboundedDimsPerSymbol maps each unbounded symbol to the largest number
// of distinct unbounded symbols that are dims of one main-graph input having
// it as a dim.
func etUnboundedDimsPerSymbol(p *ir.Program, unbounded map[string]bool) map[string]int {
	out := map[string]int{}
	if p.Main == nil {
		return out
	}
	for _, in := range p.Main.Inputs {
		t := in.Tensor()
		if t == nil {
			continue
		}
		seen := map[string]bool{}
		for _, d := range t.Shape {
			if name, ok := d.Name(); ok && unbounded[name] {
				seen[name] = true
			}
		}
		for name := range seen {
			if len(seen) > out[name] {
				out[name] = len(seen)
			}
		}
	}
	return out
}

// etSatMul multiplies non-negative a by b, saturating at MaxInt64; a
// negative a gives 0.
func etSatMul(a, b int64) int64 {
	if a <= 0 {
		return 0
	}
	if a > math.MaxInt64/b {
		return math.MaxInt64
	}
	return a * b
}
