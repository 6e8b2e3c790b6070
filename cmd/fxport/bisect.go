package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/fxport/fxport/difftest"
	"github.com/fxport/fxport/interp"
	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/pm"
)

// bisectCatalog is the catalog bisect resolves pipelines in (tests swap it).
var bisectCatalog = func() *pm.Catalog { return pm.Default }

// errDisagree is returned when bisect found a disagreement; the report on
// stdout says where.
var errDisagree = errors.New("the interpreted program disagrees with the reference (see the report)")

// runBisect: fxport bisect PROGRAM --target T [--io DIR] …
func runBisect(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("bisect", stderr)
	target := fs.String("target", "", "target whose default pipeline to bisect (dynamo, onnx, executorch-portable, …)")
	backend := fs.String("backend", "", "export backend (default: the target's)")
	pipeline := fs.String("pipeline", "", "explicit pipeline text instead of the target's default pipeline")
	inputs := fs.String("io", "", "fixture directory with input_<i>.npy and output_<i>.npy (or an io/ subdirectory holding them): compare against torch's outputs")
	alias(fs, "inputs", "io")
	samples := fs.Int("samples", 2, "input samples to draw when --io is not given")
	seed := fs.Uint64("seed", 1, "seed for drawn inputs and random ops")
	atol := fs.Float64("atol", 0, "absolute tolerance for float32/float64 outputs (default: difftest's)")
	rtol := fs.Float64("rtol", 0, "relative tolerance for float32/float64 outputs (default: difftest's)")
	var exclude, include listFlag
	fs.Var(&exclude, "exclude-patch", "do not install these patches (names or catalog IDs)")
	fs.Var(&include, "include-patch", "install these opt-in patches (names or catalog IDs)")
	alias(fs, "exclude-patches", "exclude-patch")
	alias(fs, "include-patches", "include-patch")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usageErr("expected one PROGRAM, got %d arguments", len(pos))
	}
	cat := bisectCatalog()
	var pl *pm.Pipeline
	switch {
	case *pipeline != "":
		if pl, err = cat.ParsePipeline(*pipeline); err != nil {
			return err
		}
	case *target == "":
		return usageErr("--target or --pipeline is required")
	default:
		ts, err := resolveTargets(*target, *backend)
		if err != nil {
			return err
		}
		if len(ts) != 1 {
			return usageErr("bisect runs one target at a time")
		}
		b := ts[0].Backend()
		if *backend != "" {
			b = *backend
		}
		if pl, err = cat.Build(ts[0].Kind(), b); err != nil {
			return err
		}
	}
	prog, err := loadProgram(pos[0])
	if err != nil {
		return err
	}
	opts := difftest.BisectOptions{Seed: *seed, Samples: *samples, Config: pm.Config{VerifyEach: true}}
	if cat != pm.Default {
		opts.ExportOptions = append(opts.ExportOptions, pm.WithCatalog(cat))
	}
	if len(exclude) > 0 {
		opts.ExportOptions = append(opts.ExportOptions, pm.ExcludePatches(exclude...))
	}
	if len(include) > 0 {
		opts.ExportOptions = append(opts.ExportOptions, pm.IncludePatches(include...))
	}
	if *atol > 0 || *rtol > 0 {
		opts.Tolerances = map[ir.DType]difftest.Tolerance{}
		for _, dt := range []ir.DType{ir.Float32, ir.Float64} {
			t := difftest.DefaultTolerances[dt]
			if *atol > 0 {
				t.Abs = *atol
			}
			if *rtol > 0 {
				t.Rel = *rtol
			}
			opts.Tolerances[dt] = t
		}
	}
	if *inputs != "" {
		in, out, err := difftest.ReadIODir(*inputs)
		if err != nil {
			return err
		}
		opts.Inputs = [][]interp.Value{in}
		opts.Reference = [][]interp.Value{out}
		opts.ReferenceName = "torch's outputs in " + *inputs
	}
	rep, err := difftest.Bisect(prog, pl, opts)
	if err != nil {
		return err
	}
	fmt.Fprint(stdout, rep.String())
	if rep.Pass != nil || rep.InputDisagrees != "" {
		return errDisagree
	}
	return nil
}
