package pm

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"time"

	"github.com/fxport/fxport/ir"
)

// Config controls a Run: verification, dumps, measurements and debugging.
type Config struct {
	// VerifyEach runs ir.Verify before the first pass and after every pass.
	VerifyEach bool
	// PrintBefore and PrintAfter name the passes whose IR is dumped before
	// or after they run; "all" selects every pass.
	PrintBefore, PrintAfter []string
	// PrintAfterChange dumps after a pass only when the printed IR changed
	// (compared by hash). With an empty PrintAfter it applies to every pass.
	PrintAfterChange bool
	// DumpDir, when set, receives one file per dump, named by DumpFileFormat.
	DumpDir string
	// Out receives dumps; nil means os.Stderr unless DumpDir or OnDump is set.
	Out io.Writer
	// OnPass, when set, is called as each pass instance starts (index
	// 1-based of total): what a progress line shows.
	OnPass func(index, total int, name string)
	// OnDump, when set, receives every dump as a value (beside Out and
	// DumpDir): what `fxport explore` builds its page from.
	OnDump func(Dump)
	// Debug receives Ctx.Debugf lines; nil discards them.
	Debug io.Writer
	// Time measures each pass's duration.
	Time bool
	// Mem measures each pass's allocations (runtime.MemStats deltas).
	Mem bool
	// Disable names passes to skip; disabling a Required pass, or one
	// another enabled pass requires, is an error.
	Disable []string
	// Reproducer is a path: when a pass fails, a reproducer (pipeline
	// text, failed pass, IR before it) is written there; see LoadReproducer.
	Reproducer string
	// Shuffle, when non-zero, seeds a reordering of independent nodes
	// before every pass, to expose passes that depend on node order. The
	// reordering never moves a node across a side-effecting one.
	Shuffle uint64
}

// Run runs the pipeline on p for an export (nil: a new export with the
// default patches of the pipeline's backend). It stops at the first
// failure, which it returns as a *PassError (a validation or configuration
// problem is returned before anything runs). The report covers the passes
// that ran, the failing one included.
func Run(p *ir.Program, pl *Pipeline, exp *Export, cfg Config) (*Report, error) {
	pl, err := pl.catalog().resolve(pl) // a resolved copy: pl may be shared
	if err != nil {
		return nil, err
	}
	if exp == nil {
		if exp, err = NewExport(pl.Target, pl.Backend, WithCatalog(pl.catalog())); err != nil {
			return nil, err
		}
	}
	if exp.target != pl.Target || exp.backend != pl.Backend {
		return nil, fmt.Errorf("pm: run: export is for %s/%s, pipeline for %s/%s", exp.target, exp.backend, pl.Target, pl.Backend)
	}
	if exp.catalog != pl.catalog() {
		return nil, fmt.Errorf("pm: run: export and pipeline use different catalogs")
	}
	insts := pl.Instances()
	disabled, err := checkDisable(insts, cfg.Disable)
	if err != nil {
		return nil, err
	}
	for _, list := range [][]string{cfg.PrintBefore, cfg.PrintAfter} {
		for _, name := range list {
			if name != "all" && !hasInstance(insts, name) {
				return nil, fmt.Errorf("pm: run: cannot print around pass %q: not in the pipeline", name)
			}
		}
	}
	r := &runner{cfg: cfg, prog: p, exp: exp, pipeline: pl.String()}
	if r.out = cfg.Out; r.out == nil && cfg.DumpDir == "" && cfg.OnDump == nil {
		r.out = os.Stderr
	}
	report := &Report{Target: pl.Target, Backend: pl.Backend, Pipeline: pl.String()}
	for _, pt := range exp.patches {
		if !hasInstance(insts, PatchDriverName(pt.Stage)) {
			report.Unrun = append(report.Unrun, UnrunPatch{pt.Name, pt.Stage})
		}
	}
	if cfg.VerifyEach {
		if err := ir.Verify(p); err != nil {
			return report, fmt.Errorf("pm: run: input program fails verification: %w", err)
		}
	}
	if err := ir.CheckKnownTypes(p); err != nil {
		return report, fmt.Errorf("pm: run: cannot lower the program: %w", err)
	}
	for i, in := range insts {
		pr := PassReport{Name: in.Name, Kind: in.Pass.Kind, Stage: in.Stage}
		if disabled[in.Name] {
			pr.Disabled = true
			report.Passes = append(report.Passes, pr)
			continue
		}
		if cfg.OnPass != nil {
			cfg.OnPass(i+1, len(insts), in.Name)
		}
		err := r.runOne(i+1, in, &pr)
		report.Passes = append(report.Passes, pr)
		report.Fired = append(report.Fired, r.fired...)
		exp.addFired(r.fired)
		if err != nil {
			return report, err
		}
	}
	return report, nil
}

// runner is the state of one Run.
type runner struct {
	cfg      Config
	prog     *ir.Program
	exp      *Export
	pipeline string
	out      io.Writer
	dumpSeq  int
	fired    []Firing
}

// runOne runs instance seq (1-based) and fills its report.
func (r *runner) runOne(seq int, in Placed, pr *PassReport) error {
	p, cfg := r.prog, r.cfg
	inst := in.Instance
	c := &Ctx{export: r.exp, pass: in.Pass, inst: &inst, debug: cfg.Debug}
	r.fired = nil

	if selected(cfg.PrintBefore, in.Name) {
		if err := r.dump(ir.Print(p), "before", in); err != nil {
			return err
		}
	}
	if cfg.Shuffle != 0 {
		shuffle(p, cfg.Shuffle, seq)
	}
	printAfter := selected(cfg.PrintAfter, in.Name) || cfg.PrintAfterChange && len(cfg.PrintAfter) == 0
	var before string
	if cfg.Reproducer != "" || printAfter && cfg.PrintAfterChange {
		before = ir.Print(p)
	}

	var m0 runtime.MemStats
	if cfg.Mem {
		runtime.ReadMemStats(&m0)
	}
	start := time.Now()
	res, err, stack := protect(in.Pass, p, c)
	if cfg.Time {
		pr.Duration = time.Since(start)
	}
	if cfg.Mem {
		var m1 runtime.MemStats
		runtime.ReadMemStats(&m1)
		pr.Alloc, pr.Mallocs = m1.TotalAlloc-m0.TotalAlloc, m1.Mallocs-m0.Mallocs
	}
	pr.Changed = res.Changed || c.changed
	pr.Stats = sortedStats(c.stats)
	r.fired = c.fired

	var perr *PassError
	switch {
	case err != nil:
		perr = newPassError(in.Name, c, err, stack)
	case cfg.VerifyEach:
		if verr := ir.Verify(p); verr != nil {
			c.entry, c.node = nil, nil
			perr = newPassError(in.Name, c, fmt.Errorf("verifier after pass: %w", verr), nil)
		}
	}
	if perr != nil {
		if cfg.Reproducer != "" {
			if werr := writeReproducer(cfg.Reproducer, r.pipeline, in.Name, before, perr); werr != nil {
				return fmt.Errorf("%w (and writing the reproducer failed: %v)", perr, werr)
			}
		}
		return perr
	}
	if printAfter {
		after := ir.Print(p)
		if !cfg.PrintAfterChange || hashText(after) != hashText(before) {
			if err := r.dump(after, "after", in); err != nil {
				return err
			}
		}
	}
	return nil
}

// protect runs a pass, turning a panic into an error with its stack.
func protect(pass *Pass, p *ir.Program, c *Ctx) (res Result, err error, stack []byte) {
	defer func() {
		if v := recover(); v != nil {
			res, err, stack = Result{}, panicError{v}, debug.Stack()
		}
	}()
	res, err = pass.Run(p, c)
	return res, err, nil
}

func checkDisable(insts []Placed, names []string) (map[string]bool, error) {
	off := map[string]bool{}
	for _, name := range names {
		var pass *Pass
		for _, in := range insts {
			if in.Name == name {
				pass = in.Pass
			}
		}
		switch {
		case pass == nil:
			return nil, fmt.Errorf("pm: run: cannot disable pass %q: not in the pipeline", name)
		case pass.Required:
			return nil, fmt.Errorf("pm: run: cannot disable required pass %q", name)
		}
		off[name] = true
	}
	for _, in := range insts {
		if off[in.Name] {
			continue
		}
		for _, req := range in.Pass.Requires {
			if other := req.After + req.Before; off[other] {
				return nil, fmt.Errorf("pm: run: cannot disable pass %q: pass %q requires it (%s)", other, in.Name, req.Why)
			}
		}
	}
	return off, nil
}

func hasInstance(insts []Placed, name string) bool {
	for _, in := range insts {
		if in.Name == name {
			return true
		}
	}
	return false
}

func selected(list []string, name string) bool { return contains(list, "all") || contains(list, name) }
