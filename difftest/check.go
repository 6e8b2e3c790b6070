package difftest

import (
	"errors"
	"fmt"

	"github.com/fxport/fxport/interp"
	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/pm"
)

// Option configures Check and Trace.
type Option func(*config)

type config struct {
	seed       uint64
	samples    int
	inputs     [][]interp.Value
	exportOpts []pm.ExportOption
	whole      bool
	tols       map[ir.DType]Tolerance
	allow      map[string]Allowance
	base       pm.Config
	weights    *interp.WeightCache
	backend    string // the export's backend, for backend-scoped allowances
}

// WithSeed seeds input generation and random ops (default 1).
func WithSeed(seed uint64) Option { return func(c *config) { c.seed = seed } }

// WithSamples sets how many input samples are drawn (default 2: the symbol
// hints, then nearby values).
func WithSamples(n int) Option { return func(c *config) { c.samples = n } }

// WithInputs gives the user inputs explicitly, one list per sample, instead
// of drawing them.
func WithInputs(samples ...[]interp.Value) Option {
	return func(c *config) { c.inputs = samples }
}

// WithExportOptions configures the export the pipeline runs for.
func WithExportOptions(opts ...pm.ExportOption) Option {
	return func(c *config) { c.exportOpts = append(c.exportOpts, opts...) }
}

// WholePipeline compares only the input program and the program after the
// whole pipeline.
func WholePipeline() Option { return func(c *config) { c.whole = true } }

// WithTolerance overrides the tolerance of one dtype.
func WithTolerance(dt ir.DType, t Tolerance) Option {
	return func(c *config) { c.tols[dt] = t }
}

// WithAllowance adds an allowance for this check only (on top of the
// declared ones).
func WithAllowance(a Allowance) Option { return func(c *config) { c.allow[a.Pass] = a } }

// WithConfig sets the pass-manager configuration (dump settings are
// overridden; VerifyEach is on by default).
func WithConfig(cfg pm.Config) Option { return func(c *config) { c.base = cfg } }

// WithWeightCache shares decoded weights between checks.
func WithWeightCache(w *interp.WeightCache) Option { return func(c *config) { c.weights = w } }

func newConfig(opts []Option) *config {
	c := &config{seed: 1, samples: 2, tols: map[ir.DType]Tolerance{}, allow: map[string]Allowance{}, base: pm.Config{VerifyEach: true}}
	for _, o := range opts {
		o(c)
	}
	if c.weights == nil {
		c.weights = interp.NewWeightCache()
	}
	return c
}

func (c *config) allowance(pass string) (Allowance, bool) {
	if a, ok := c.allow[pass]; ok {
		return a, true
	}
	a, ok := Declared(pass)
	if ok && a.Backend != "" && a.Backend != c.backend {
		return Allowance{}, false
	}
	return a, ok
}

// Mismatch is a pass that changed what a program computes.
type Mismatch struct {
	// Pass, Stage and Index (1-based) locate the pass instance; Pass is
	// "(pipeline)" when only the whole pipeline was compared.
	Pass, Stage string
	Index       int
	// Sample is the input sample; Bindings its symbol values.
	Sample   int
	Bindings string
	// Output names the output that differs ("output 0 (user_output 0)").
	Output string
	// Err is the difference (or the failed check of a declared allowance).
	Err error
	// Allowed is set when the pass declared an allowance whose check failed.
	Allowed bool
}

func (m *Mismatch) Error() string {
	where := fmt.Sprintf("pass %q (#%d, stage %s)", m.Pass, m.Index, m.Stage)
	if m.Index == 0 {
		where = "the pipeline"
	}
	what := "changed"
	if m.Allowed {
		what = "changed beyond its declared allowance"
	}
	b := ""
	if m.Bindings != "" {
		b = " (" + m.Bindings + ")"
	}
	return fmt.Sprintf("difftest: %s %s %s on sample %d%s: %v", where, what, m.Output, m.Sample, b, m.Err)
}

func (m *Mismatch) Unwrap() error { return m.Err }

// RunError is a program the interpreter could not run: the input program
// (Pass "") or the program after a pass.
type RunError struct {
	Pass   string
	Index  int
	Sample int
	Err    error
}

func (e *RunError) Error() string {
	if e.Pass == "" {
		return fmt.Sprintf("difftest: interpreting the input program on sample %d: %v", e.Sample, e.Err)
	}
	return fmt.Sprintf("difftest: interpreting the program after pass %q (#%d) on sample %d: %v", e.Pass, e.Index, e.Sample, e.Err)
}

func (e *RunError) Unwrap() error { return e.Err }

// sample is one set of inputs.
type sample struct {
	inputs []interp.Value
	bind   map[string]int64
}

// prepare draws the samples and interprets the input program on them.
// A drawn sample the program rejects (an interp.DomainError) is drawn again
// with the next value strategy.
func (c *config) prepare(p *ir.Program) ([]sample, []*interp.Result, error) {
	if c.inputs != nil {
		var samples []sample
		var ref []*interp.Result
		for i, in := range c.inputs {
			s := sample{inputs: in}
			r, err := c.run(p, s)
			if err != nil {
				return nil, nil, &RunError{Sample: i, Err: err}
			}
			samples, ref = append(samples, s), append(ref, r)
		}
		return samples, ref, nil
	}
	var samples []sample
	var ref []*interp.Result
	for k := 0; k < c.samples; k++ {
		var lastErr error
		// Attempts vary the value strategy and, past the first round, the
		// symbol values (a guard the program relies on may exclude some).
		for a := 0; a < 2*Strategies; a++ {
			in, bind, err := GenerateInputs(p, c.seed, k+(a/Strategies)*c.samples, a%Strategies)
			if err != nil {
				return nil, nil, fmt.Errorf("difftest: drawing inputs: %w", err)
			}
			s := sample{inputs: in, bind: bind}
			r, err := c.run(p, s)
			if err == nil {
				samples, ref = append(samples, s), append(ref, r)
				lastErr = nil
				break
			}
			lastErr = err
			if !interp.IsDomainError(err) {
				break
			}
		}
		if lastErr != nil {
			return nil, nil, &RunError{Sample: k, Err: lastErr}
		}
	}
	return samples, ref, nil
}

func (c *config) run(p *ir.Program, s sample) (*interp.Result, error) {
	return interp.Run(p, s.inputs, interp.Options{Seed: c.seed, Weights: c.weights, MissingWeight: FakeWeights(c.seed)})
}

func newExport(pl *pm.Pipeline, opts []pm.ExportOption) (*pm.Export, error) {
	cat := pl.Catalog
	if cat == nil {
		cat = pm.Default
	}
	return pm.NewExport(pl.Target, pl.Backend, append([]pm.ExportOption{pm.WithCatalog(cat)}, opts...)...)
}

// Check interprets p before and after each pass of pl (or only around the
// whole pipeline, with WholePipeline) on seeded inputs and returns a
// *Mismatch for the first pass that changes an output, a *RunError when a
// program cannot be interpreted, or the pipeline's own error. p is not
// modified.
func Check(p *ir.Program, pl *pm.Pipeline, opts ...Option) error {
	c := newConfig(opts)
	c.backend = pl.Backend
	samples, ref, err := c.prepare(p)
	if err != nil {
		return err
	}
	exp, err := newExport(pl, c.exportOpts)
	if err != nil {
		return err
	}
	work := p.Clone()
	if c.whole {
		if _, err := pm.Run(work, pl, exp, c.base); err != nil {
			return &PipelineError{Err: err}
		}
		return c.compareStep(p, ref, work, samples, Snapshot{Pass: "(pipeline)"})
	}
	snaps, _, runErr := Snapshots(work, pl, exp, c.base)
	if err := c.walk(p, ref, snaps, samples); err != nil {
		return err
	}
	if runErr != nil {
		return &PipelineError{Err: runErr}
	}
	return nil
}

// walk compares each changed snapshot against the reference program,
// re-basing the reference after a pass with an allowance.
func (c *config) walk(p *ir.Program, ref []*interp.Result, snaps []Snapshot, samples []sample) error {
	cur := p
	for _, s := range snaps {
		if !s.Changed {
			continue
		}
		if err := c.compareStep(cur, ref, s.Program, samples, s); err != nil {
			return err
		}
		if _, ok := c.allowance(s.Pass); ok {
			// Later passes are compared with the program after this one.
			for i, smp := range samples {
				r, err := c.run(s.Program, smp)
				if err != nil {
					return &RunError{Pass: s.Pass, Index: s.Index, Sample: i, Err: err}
				}
				ref[i] = r
			}
			cur = s.Program
		}
	}
	return nil
}

// compareStep interprets after on every sample and compares it with the
// reference results of before.
func (c *config) compareStep(before *ir.Program, ref []*interp.Result, after *ir.Program, samples []sample, s Snapshot) error {
	allow, allowed := c.allowance(s.Pass)
	for i, smp := range samples {
		got, err := c.run(after, smp)
		if err != nil {
			return &RunError{Pass: s.Pass, Index: s.Index, Sample: i, Err: err}
		}
		if allowed {
			if allow.Check == nil {
				continue
			}
			if err := allow.Check(UserOutputs(before, ref[i].Outputs), UserOutputs(after, got.Outputs)); err != nil {
				return &Mismatch{Pass: s.Pass, Stage: s.Stage, Index: s.Index, Sample: i, Bindings: describeBindings(smp.bind), Output: "the user outputs", Err: err, Allowed: true}
			}
			continue
		}
		if key, err := outputDiff(before, ref[i], after, got, c.tols); err != nil {
			return &Mismatch{Pass: s.Pass, Stage: s.Stage, Index: s.Index, Sample: i, Bindings: describeBindings(smp.bind), Output: key, Err: err}
		}
	}
	return nil
}

// PipelineError is the pipeline's own failure (a pass returned an error
// or left an invalid program). The passes before the failing one have
// been checked.
type PipelineError struct{ Err error }

func (e *PipelineError) Error() string { return "difftest: running the pipeline: " + e.Err.Error() }
func (e *PipelineError) Unwrap() error { return e.Err }

// IsMismatch reports whether err is (or wraps) a *Mismatch.
func IsMismatch(err error) bool {
	var m *Mismatch
	return errors.As(err, &m)
}
