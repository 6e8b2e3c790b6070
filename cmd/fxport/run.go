package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/fxport/fxport/interp"
	"github.com/fxport/fxport/interp/npy"
	"github.com/fxport/fxport/targets/executorch/pte"
	etrun "github.com/fxport/fxport/targets/executorch/run"
)

// runRun executes a .pte with its memory plan (fxport run).
func runRun(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("run", stderr)
	method := fs.String("method", "forward", "method to run")
	inputs := fs.String("inputs", "", "directory holding input_<i>.npy (default: seeded inputs of the declared types, at their upper bounds)")
	out := fs.String("o", "", "directory to write output_<i>.npy into")
	rtol := fs.Float64("rtol", etrun.DefaultRTol, "FILE.bpte: relative tolerance of the output comparison (ExecuTorch's default)")
	atol := fs.Float64("atol", etrun.DefaultATol, "FILE.bpte: absolute tolerance of the output comparison (ExecuTorch's default)")
	maxArena := fs.Int64("max-arena-bytes", etrun.DefaultMaxArenaBytes, "refuse a program whose planned arenas need more bytes in all (raise it for a model that needs more)")
	maxTensor := fs.Int64("max-tensor-bytes", etrun.DefaultMaxTensorBytes, "refuse a tensor (declared, constant, input) of more bytes (raise it for a model that needs more)")
	maxSteps := fs.Int("max-instructions", etrun.DefaultMaxInstructions, "refuse to run more instructions per chain and execution (a loop that does not end)")
	var data listFlag
	fs.Var(&data, "data", "external data files (.ptd) (repeatable; default: FILE.ptd beside FILE.pte when it exists)")
	files, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(files) != 1 {
		return usageErr("want one FILE.pte or FILE.bpte, got %d", len(files))
	}
	f, err := pte.Read(files[0])
	if err != nil {
		return err
	}
	// The reference kernels' bound on one intermediate tensor follows
	// --max-tensor-bytes (elements of at most 4 bytes; the kernels hold
	// floats as float64).
	if n := *maxTensor / 4; n > 0 && n < interp.MaxElements {
		interp.MaxElements = n
	}
	opts := etrun.Options{Method: *method, MaxArenaBytes: *maxArena, MaxTensorBytes: *maxTensor, MaxInstructions: *maxSteps}
	if len(data) == 0 {
		if beside := ptdPath(files[0]); fileExists(beside) {
			data = append(data, beside)
		}
	}
	for _, d := range data {
		df, err := pte.ReadPTD(d)
		if err != nil {
			return err
		}
		opts.Data = append(opts.Data, df)
	}
	if f.Bundled != nil && *inputs == "" {
		// A bundled program runs its own test cases (run_bundled.go);
		// --method, when given, picks one suite.
		if !flagSet(fs, "method") {
			opts.Method = ""
		}
		return runBundledCases(f, etrun.BundledOptions{Options: opts, RTol: *rtol, ATol: *atol}, stdout)
	}
	m, err := etrun.Load(f, opts)
	if err != nil {
		return err
	}
	var ins []interp.Value
	if *inputs == "" {
		// Seeded inputs of the declared types, at their upper bounds.
		if ins, err = m.DefaultInputs(opts); err != nil {
			return err
		}
	}
	for i := range m.Inputs() {
		if *inputs == "" {
			break
		}
		p := filepath.Join(*inputs, fmt.Sprintf("input_%d.npy", i))
		x, err := npy.ReadFile(p)
		if err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		ins = append(ins, x)
	}
	outs, err := m.Execute(ins)
	if err != nil {
		return err
	}
	if *out != "" {
		if err := os.MkdirAll(*out, 0o755); err != nil {
			return err
		}
	}
	for i, o := range outs {
		fmt.Fprintf(stdout, "output %d: %s\n", i, interp.Describe(o))
		if *out == "" {
			continue
		}
		t, ok := o.(*interp.Tensor)
		if !ok {
			continue
		}
		if err := npy.WriteFile(filepath.Join(*out, fmt.Sprintf("output_%d.npy", i)), t); err != nil {
			return err
		}
	}
	return nil
}
