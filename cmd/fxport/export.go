package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	fxapi "github.com/fxport/fxport"
	"github.com/fxport/fxport/frontends/fxtext"
	"github.com/fxport/fxport/frontends/pt2"
	"github.com/fxport/fxport/internal/progress"
	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/pm"
	"github.com/fxport/fxport/provenance"
	etcuda "github.com/fxport/fxport/targets/executorch/cuda"
	etopenvino "github.com/fxport/fxport/targets/executorch/openvino"
	"github.com/fxport/fxport/targets/onnx"
)

// exportTarget is one (target, backend) pair the export command can run.
type exportTarget = fxapi.Target

var exportTargets = fxapi.Targets()

func targetNames() string {
	var n []string
	for _, t := range exportTargets {
		n = append(n, t.String())
	}
	return strings.Join(n, ", ") + ", all"
}

func resolveTargets(name, backend string) ([]exportTarget, error) {
	if name == "all" {
		return exportTargets, nil
	}
	if t, err := fxapi.ParseTarget(name); err == nil {
		return []exportTarget{t}, nil
	}
	if name == pm.TargetExecuTorch {
		t, err := fxapi.ExecuTorchBackend(backend)
		if err != nil {
			return nil, fmt.Errorf("pm: build: %w", err)
		}
		return []exportTarget{t}, nil
	}
	return nil, usageErr("unknown target %q (known: %s)", name, targetNames())
}

// listFlag collects a repeatable, comma-separable string flag.
type listFlag []string

func (l *listFlag) String() string { return strings.Join(*l, ",") }
func (l *listFlag) Set(s string) error {
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			*l = append(*l, p)
		}
	}
	return nil
}

// runFlags are the pass-manager flags shared by export and replay.
type runFlags struct {
	verifyEach, printAfterAll, printAfterChange, timePasses, memPasses, debug bool
	printBefore, printAfter, disable                                          listFlag
	dumpDir, reproducer                                                       string
	shuffle                                                                   uint64
}

func (r *runFlags) register(fs *flag.FlagSet) {
	fs.BoolVar(&r.verifyEach, "verify-each", false, "verify the IR before the first pass and after every pass")
	fs.Var(&r.printBefore, "print-before", "print the IR before these passes (repeatable, comma-separated; \"all\")")
	fs.Var(&r.printAfter, "print-after", "print the IR after these passes (repeatable, comma-separated; \"all\")")
	fs.BoolVar(&r.printAfterAll, "print-after-all", false, "print the IR after every pass")
	fs.BoolVar(&r.printAfterChange, "print-after-change", false, "print the IR after a pass only when it changed")
	fs.StringVar(&r.dumpDir, "dump-dir", "", "write IR dumps as files into this directory instead of stderr")
	fs.BoolVar(&r.timePasses, "time", false, "measure each pass's duration")
	fs.BoolVar(&r.memPasses, "mem", false, "measure each pass's allocations")
	fs.Var(&r.disable, "disable", "skip these passes (required passes cannot be disabled)")
	fs.StringVar(&r.reproducer, "reproducer", "", "on a pass failure, write a reproducer (pipeline + IR before the pass) to this path")
	fs.Uint64Var(&r.shuffle, "shuffle", 0, "reorder independent nodes with this seed before every pass (order-dependence check)")
	fs.BoolVar(&r.debug, "debug", false, "print the passes' debug lines")
}

func (r *runFlags) config(stderr io.Writer) pm.Config {
	cfg := pm.Config{
		VerifyEach:       r.verifyEach,
		PrintBefore:      r.printBefore,
		PrintAfter:       r.printAfter,
		PrintAfterChange: r.printAfterChange,
		DumpDir:          r.dumpDir,
		Out:              stderr,
		Time:             r.timePasses,
		Mem:              r.memPasses,
		Disable:          r.disable,
		Reproducer:       r.reproducer,
		Shuffle:          r.shuffle,
	}
	if r.printAfterAll {
		cfg.PrintAfter = append(cfg.PrintAfter, "all")
	}
	if r.dumpDir != "" {
		cfg.Out = nil
	}
	if r.debug {
		cfg.Debug = stderr
	}
	return cfg
}

func runExport(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("export", stderr)
	fs.Int64Var(&pt2.MaxJSONBytes, "max-json-bytes", pt2.DefaultMaxJSONBytes, "refuse a .pt2 JSON record (program, weights config) of more bytes, inflated")
	fs.Int64Var(&fxtext.MaxTextBytes, "max-text-bytes", fxtext.DefaultMaxTextBytes, "refuse an FX or IR text input of more bytes")
	fs.IntVar(&fxtext.MaxListElements, "max-list-elements", fxtext.DefaultMaxListElements, "refuse an FX text list, tuple or argument list of more elements")
	target := fs.String("target", "", "target: "+targetNames())
	backend := fs.String("backend", "", "backend for --target executorch (executorch.xnnpack, executorch.cuda, executorch.portable, …)")
	out := fs.String("o", "", "output file (one target) or directory (--target all)")
	pipelineText := fs.String("pipeline", "", "run this pipeline text instead of the target's default")
	report := fs.Bool("report", false, "print what ran and what fired")
	reportJSON := fs.String("report-json", "", "write the report (passes, statistics, times, workarounds fired per node, outputs) as JSON to this file (schema: docs/report-json.md)")
	optOn := fs.Bool("optimize", false, "ONNX: run the graph optimizer even when the disable-optimization table names the model class")
	optOff := fs.Bool("no-optimize", false, "ONNX: do not run the graph optimizer")
	opset := fs.Int("opset", onnx.DefaultOpset, fmt.Sprintf("ONNX: default-domain opset (%d–%d)", onnx.MinSupportedOpset, onnx.MaxSupportedOpset))
	modelClass := fs.String("model-class", "", "ONNX: model class for the disable-optimization table (default: program meta "+onnx.MetaModelClass+")")
	fs.StringVar(&aotiCommand, "aoti-command", "", "executorch-cuda: command compiling IN.pt2 into OUT.so (default $"+etcuda.EnvCommand+", then \""+etcuda.DefaultCommand+"\")")
	fs.StringVar(&openvinoCommand, "openvino-command", "", "executorch-openvino: command compiling IN.pt2 into the exported compiled model OUT (default $"+etopenvino.EnvCommand+", then \""+etopenvino.DefaultCommand+"\")")
	fs.BoolVar(&etOpts.ExternalConstants, "external-constants", false, "executorch-portable/xnnpack: store constant tensors in OUT.ptd beside OUT.pte (exir's external_constants=True)")
	fs.BoolVar(&etOpts.ExternalDelegateData, "external-delegate-data", false, "executorch-xnnpack: store the delegates' weights (named data) in OUT.ptd too")
	bundleDirs = nil
	fs.Var(&bundleDirs, "bundle", "executorch-portable/xnnpack with -o OUT.bpte: bundle one test case per directory of input_<i>.npy (+ output_<i>.npy; without them the interpreter computes the expected outputs) (repeatable)")
	var exclude, include listFlag
	fs.Var(&exclude, "exclude-patch", "do not install these patches (names or catalog IDs)")
	fs.Var(&include, "include-patch", "install these opt-in patches (names or catalog IDs)")
	alias(fs, "exclude-patches", "exclude-patch")
	alias(fs, "include-patches", "include-patch")
	var rf runFlags
	rf.register(fs)
	files, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(files) != 1 {
		return usageErr("want one FILE, got %d", len(files))
	}
	if *target == "" || *out == "" {
		return usageErr("--target and -o are required")
	}
	if err := onnx.CheckOpset(*opset); err != nil {
		return usageErr("--opset: %v", err)
	}
	emitOpts := onnx.Options{Opset: *opset}
	switch {
	case *optOn && *optOff:
		return usageErr("--optimize and --no-optimize exclude each other")
	case *optOn:
		emitOpts.Optimize = onnx.OptimizeOn
	case *optOff:
		emitOpts.Optimize = onnx.OptimizeOff
	}
	targets, err := resolveTargets(*target, *backend)
	if err != nil {
		return err
	}
	src, err := loadProgram(files[0])
	if err != nil {
		return err
	}
	if err := ir.Verify(src); err != nil {
		return fmt.Errorf("%s: %w", files[0], err)
	}
	if *modelClass != "" {
		src.Meta.Set(onnx.MetaModelClass, *modelClass)
	}
	if err := prepareBundle(src, *target, *out); err != nil {
		return err
	}
	multi := *target == "all"
	if multi {
		if err := os.MkdirAll(*out, 0o755); err != nil {
			return err
		}
	}
	stem := strings.TrimSuffix(filepath.Base(files[0]), filepath.Ext(files[0]))
	var failed []string
	rj := newReportDoc(files[0])
	for _, t := range targets {
		dest, native := *out, ""
		if multi {
			dest = filepath.Join(*out, stem+"."+t.String()+".fxir")
			if hasEmitter(t) {
				// One file per target: the ExecuTorch backends share the
				// .pte extension, so their files carry the target's name.
				native = filepath.Join(*out, stem+t.Ext())
				if t.Kind() == pm.TargetExecuTorch {
					native = filepath.Join(*out, stem+"."+t.String()+t.Ext())
				}
			}
		}
		res, err := exportOne(src.Clone(), t, dest, native, *pipelineText, exclude, include, rf, *report, emitOpts, stdout, stderr)
		err = nameInput(files[0], err)
		rj.add(t, res, err, rf)
		if err != nil {
			if !multi {
				return rj.writeWith(*reportJSON, err)
			}
			fmt.Fprintf(stderr, "fxport export: %s: %v\n", t, err)
			failed = append(failed, t.String())
			continue
		}
		if multi {
			fmt.Fprintf(stdout, "%s: wrote %s\n", t, dest)
			if native != "" {
				fmt.Fprintf(stdout, "%s: wrote %s\n", t, native)
			} else if t.ExternalCompile() {
				fmt.Fprintf(stdout, "%s: no %s written: it needs the external compile step; run fxport export --target %s -o FILE%s (see --help)\n", t, t.Ext(), t, t.Ext())
			}
		}
	}
	if len(failed) > 0 {
		return rj.writeWith(*reportJSON, fmt.Errorf("%d of %d targets failed: %s", len(failed), len(targets), strings.Join(failed, ", ")))
	}
	return rj.writeWith(*reportJSON, nil)
}

// progressLine is the status line of long work on stderr: drawn only when
// stderr is a terminal and nothing else (IR dumps, debug lines) goes there.
func progressLine(stderr io.Writer, cfg pm.Config) *progress.Line {
	dumping := cfg.Out != nil && (len(cfg.PrintBefore) > 0 || len(cfg.PrintAfter) > 0 || cfg.PrintAfterChange)
	if dumping || cfg.Debug != nil {
		return &progress.Line{}
	}
	return progress.New(stderr)
}

// aotiCommand is the --aoti-command flag of the export command.
var aotiCommand string

// openvinoCommand is the --openvino-command flag of the export command.
var openvinoCommand string

// hasEmitter reports whether a target writes its native format without an
// external compile step.
func hasEmitter(t exportTarget) bool { return t.Writes() && !t.ExternalCompile() }

// exportOne runs the target's pipeline on p (fxapi.Export) and writes dest:
// the IR text (.fxir) or, where the target has an emitter, its native file;
// native, when set, is a second, native output written from the same run.
// With --report, --time or --mem it prints the report (measurements with
// --time/--mem). The result, when the pipeline ran, goes to --report-json.
func exportOne(p *ir.Program, t exportTarget, dest, native, pipelineText string, exclude, include listFlag, rf runFlags, report bool, emitOpts onnx.Options, stdout, stderr io.Writer) (*fxapi.Result, error) {
	switch ext := filepath.Ext(dest); {
	case ext == ".fxir":
	case ext == bundledExt && len(bundleCases) > 0 && t.Kind() == pm.TargetExecuTorch && hasEmitter(t):
		native, dest = dest, ""
	case ext == t.Ext() && t.Writes():
		// executorch-cuda and executorch-openvino write their .pte (+ .ptd)
		// only when asked for one: they need an external compile step.
		native, dest = dest, ""
	case ext == t.Ext():
		return nil, fmt.Errorf("writing %s files is not implemented yet; use -o FILE.fxir to get the IR the %s emitter will consume", ext, t)
	default:
		want := ".fxir"
		if hasEmitter(t) {
			want += " or " + t.Ext()
		}
		return nil, fmt.Errorf("output %s: want a %s file", dest, want)
	}
	// With --bundle, a portable or XNNPACK .pte is written by writeBundled.
	bundle := native != "" && len(bundleCases) > 0 && t.Kind() == pm.TargetExecuTorch && !t.ExternalCompile()
	opts := fxapi.Options{
		IR:              dest,
		Pipeline:        pipelineText,
		ExcludePatches:  exclude,
		IncludePatches:  include,
		Run:             rf.config(stderr),
		ONNX:            emitOpts,
		ExecuTorch:      etOpts,
		CUDACommand:     aotiCommand,
		OpenVINOCommand: openvinoCommand,
	}
	if !bundle {
		opts.Output = native
	}
	line := progressLine(stderr, opts.Run)
	opts.Run.OnPass = func(i, n int, name string) { line.Set("%s: pass %d/%d %s", t, i, n, name) }
	opts.OnWrite = func(path string, n int64) { line.Set("%s: writing %s: %s", t, filepath.Base(path), progress.Bytes(n)) }
	res, err := fxapi.Export(context.Background(), fxapi.Program(p), t, opts)
	line.Clear()
	if res != nil && res.Report != nil && (report || rf.timePasses || rf.memPasses) {
		fmt.Fprintf(stdout, "== %s ==\n%s", t, res.Report.Text(rf.timePasses || rf.memPasses))
	}
	if res != nil && res.ONNX != nil && report {
		o := res.ONNX.Optimization
		if o.Ran {
			fmt.Fprintf(stdout, "onnx optimizer: on (%s): %s\n", o.Why, o.Stats)
		} else {
			fmt.Fprintf(stdout, "onnx optimizer: off (%s)\n", o.Why)
		}
	}
	if err != nil {
		var pe *pm.PassError
		if errors.As(err, &pe) && rf.reproducer != "" {
			return res, fmt.Errorf("%w (reproducer written to %s; replay with: fxport replay %s)", err, rf.reproducer, rf.reproducer)
		}
		return res, err
	}
	if bundle {
		bopts := etOpts
		rec := res.Report.Provenance(provenance.Version())
		bopts.Provenance = &rec
		if err := writeBundled(res.Program, native, bopts, stdout); err != nil {
			return res, err
		}
		res.Files = append([]string{native}, res.Files...)
	}
	return res, nil
}
