package fxport

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/fxport/fxport/frontends/fxtext"
	"github.com/fxport/fxport/frontends/pt2"
	"github.com/fxport/fxport/internal/atomicfile"
	"github.com/fxport/fxport/internal/inputfile"
	"github.com/fxport/fxport/internal/progress"
	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/pm"
	"github.com/fxport/fxport/provenance"
	etcuda "github.com/fxport/fxport/targets/executorch/cuda"
	etemit "github.com/fxport/fxport/targets/executorch/emit"
	etopenvino "github.com/fxport/fxport/targets/executorch/openvino"
	"github.com/fxport/fxport/targets/executorch/pte"
	"github.com/fxport/fxport/targets/onnx"
	pt2target "github.com/fxport/fxport/targets/pt2"

	// The workarounds every pipeline runs register themselves into
	// pm.Default; linking them here spares callers any blank import.
	_ "github.com/fxport/fxport/passes"
	_ "github.com/fxport/fxport/passes/dynamo"
	_ "github.com/fxport/fxport/passes/onnxfix"
)

// Target is what an export produces: a target and, for ExecuTorch, the
// backend its program is lowered for. Use the predefined values.
type Target struct {
	name, target, backend, ext string
}

// The export targets.
var (
	// Dynamo runs the Dynamo stages only and writes a .pt2 archive.
	Dynamo = Target{"dynamo", pm.TargetDynamo, pm.BackendAll, ".pt2"}
	// ONNX writes an ONNX model (.onnx).
	ONNX = Target{"onnx", pm.TargetONNX, pm.BackendONNX, ".onnx"}
	// ExecuTorchPortable writes a .pte for ExecuTorch's portable kernels.
	ExecuTorchPortable = Target{"executorch-portable", pm.TargetExecuTorch, "executorch.portable", ".pte"}
	// ExecuTorchXNNPACK writes a .pte whose supported subgraphs are XNNPACK delegates.
	ExecuTorchXNNPACK = Target{"executorch-xnnpack", pm.TargetExecuTorch, "executorch.xnnpack", ".pte"}
	// ExecuTorchCUDA writes a .pte with CUDA delegates; it needs the
	// external AOTInductor compile step (Options.CUDACommand).
	ExecuTorchCUDA = Target{"executorch-cuda", pm.TargetExecuTorch, "executorch.cuda", ".pte"}
	// ExecuTorchOpenVINO writes a .pte with OpenVINO delegates; it needs the
	// external OpenVINO compile step (Options.OpenVINOCommand).
	ExecuTorchOpenVINO = Target{"executorch-openvino", pm.TargetExecuTorch, "executorch.openvino", ".pte"}
)

// Targets lists every export target, in a fixed order.
func Targets() []Target {
	return []Target{Dynamo, ONNX, ExecuTorchPortable, ExecuTorchXNNPACK, ExecuTorchCUDA, ExecuTorchOpenVINO}
}

// ParseTarget finds a target by the name String prints ("onnx",
// "executorch-xnnpack", …).
func ParseTarget(name string) (Target, error) {
	var names []string
	for _, t := range Targets() {
		if t.name == name {
			return t, nil
		}
		names = append(names, t.name)
	}
	return Target{}, fmt.Errorf("unknown target %q (known: %s)", name, strings.Join(names, ", "))
}

// ExecuTorchBackend is the ExecuTorch target for a backend name
// ("executorch.xnnpack"; "" is the default backend). Backends without a
// predefined Target (executorch.mlx) lower to IR only.
func ExecuTorchBackend(backend string) (Target, error) {
	if backend == "" {
		backend = pm.ExportBackends(pm.TargetExecuTorch)[0]
	}
	for _, t := range Targets() {
		if t.backend == backend {
			return t, nil
		}
	}
	for _, b := range pm.ExportBackends(pm.TargetExecuTorch) {
		if b == backend {
			return Target{pm.TargetExecuTorch + "-" + strings.TrimPrefix(b, "executorch."), pm.TargetExecuTorch, b, ".pte"}, nil
		}
	}
	return Target{}, fmt.Errorf("target executorch has no backend %q (backends: %s)", backend, strings.Join(pm.ExportBackends(pm.TargetExecuTorch), ", "))
}

// Kind is the pass manager's target: "dynamo", "onnx" or "executorch".
func (t Target) Kind() string { return t.target }

// String is the target's name, as the command line spells it.
func (t Target) String() string { return t.name }

// Ext is the file extension of the target's artifact (".onnx", ".pte", ".pt2").
func (t Target) Ext() string { return t.ext }

// Backend is the pass manager's backend name ("onnx", "executorch.xnnpack").
func (t Target) Backend() string { return t.backend }

// Writes reports whether Export can write the target's artifact: the
// ExecuTorch backends without a writer (mlx) lower to IR only.
func (t Target) Writes() bool {
	switch t.backend {
	case pm.BackendAll, pm.BackendONNX, "executorch.portable", "executorch.xnnpack", "executorch.cuda", "executorch.openvino":
		return true
	}
	return false
}

// ExternalCompile reports whether the artifact needs an external compile
// step (CUDA's AOTInductor, OpenVINO's compiler).
func (t Target) ExternalCompile() bool {
	return t.backend == "executorch.cuda" || t.backend == "executorch.openvino"
}

// Pipeline is the target's default pipeline in text form, as
// `fxport pipeline` prints it.
func (t Target) Pipeline() (string, error) {
	pl, err := pm.Build(t.target, t.backend)
	if err != nil {
		return "", err
	}
	return pl.String(), nil
}

// Source is a program to export: a file (File) or a program in memory
// (Program).
type Source interface {
	program() (*ir.Program, error)
}

type fileSource string

func (f fileSource) program() (*ir.Program, error) { return Load(string(f)) }

type programSource struct{ p *ir.Program }

func (s programSource) program() (*ir.Program, error) { return s.p.Clone(), nil }

// File is a program on disk: what torch.export.save writes (.pt2), an FX
// text dump (.fx, .txt) or IR text (.fxir).
func File(path string) Source { return fileSource(path) }

// Program is a program already in memory; Export works on a copy.
func Program(p *ir.Program) Source { return programSource{p} }

// Load reads a program from a file: IR text (.fxir), an FX text dump (.fx,
// .txt: print(gm.graph), gm.code, gm.print_readable() or
// print(exported_program)), or what torch.export.save writes (.pt2).
func Load(path string) (*ir.Program, error) {
	if err := inputfile.Check(path); err != nil {
		return nil, err
	}
	switch ext := filepath.Ext(path); ext {
	case ".fxir", ".ir":
		src, err := readText(path)
		if err != nil {
			return nil, err
		}
		return ir.Parse(src, path)
	case ".fx", ".txt":
		src, err := readText(path)
		if err != nil {
			return nil, err
		}
		return fxtext.Parse(src, path, fxtext.Options{})
	case ".pt2":
		return pt2.Read(path)
	default:
		return nil, fmt.Errorf("%s: no frontend reads %q files yet (IR text .fxir, FX text dumps .fx, .txt and .pt2 archives are supported)", path, ext)
	}
}

// readText reads an FX or IR text input, bounded by fxtext.MaxTextBytes.
func readText(path string) ([]byte, error) {
	src, err := inputfile.ReadFile(path, fxtext.MaxTextBytes)
	if errors.Is(err, inputfile.ErrTooLarge) {
		return nil, fmt.Errorf("%w (raise the limit with --max-text-bytes)", err)
	}
	return src, err
}

// Options configure an export. The zero value runs the target's default
// pipeline and writes nothing (Result.Program holds the lowered program).
type Options struct {
	// Output is where the target's artifact goes (a path ending in
	// Target.Ext(); an ExecuTorch .pte may bring a .ptd beside it).
	// Empty: no artifact is written.
	Output string
	// IR, when set, is where the IR text of the program after the pipeline
	// goes (.fxir).
	IR string
	// Pipeline is pipeline text to run instead of the target's default.
	Pipeline string
	// ExcludePatches and IncludePatches select patches by name or catalog
	// ID: installed ones to leave out, opt-in ones to install.
	ExcludePatches, IncludePatches []string
	// Run configures the pass manager: verification after every pass,
	// dumps, timing, disabled passes, reproducers, debug output.
	Run pm.Config
	// ONNX configures the ONNX emitter (opset, optimizer).
	ONNX onnx.Options
	// ExecuTorch configures the .pte emitter (external constants and
	// delegate data in a .ptd).
	ExecuTorch etemit.Options
	// OnWrite, when set, is called as the artifact's files are written,
	// with the file and the bytes written to it so far (for a progress
	// line; the weights stream from their sources while it runs).
	OnWrite func(path string, written int64)
	// CUDACommand and OpenVINOCommand are the external compile commands
	// of the CUDA and OpenVINO targets ("" uses the environment, then the
	// default).
	CUDACommand, OpenVINOCommand string
}

// Result is what an export produced.
type Result struct {
	// Program is the program after the pipeline.
	Program *ir.Program
	// Report says what ran and what fired; it is set even when a pass failed.
	Report *pm.Report
	// Files are the paths written, the artifact's first.
	Files []string
	// ONNX describes the emitted model (input/output names, whether the
	// optimizer ran) for ONNX exports that wrote an artifact.
	ONNX *onnx.Model
}

// Export runs target's pipeline on src and writes what opts asks for. A
// failing pass is a *pm.PassError naming the pass and the node; outputs are
// written atomically, never half.
func Export(ctx context.Context, src Source, target Target, opts Options) (*Result, error) {
	if target.target == "" {
		return nil, fmt.Errorf("fxport: export: no target (use fxport.ONNX, fxport.ExecuTorchXNNPACK, …)")
	}
	if opts.Output != "" && filepath.Ext(opts.Output) != target.ext {
		return nil, fmt.Errorf("fxport: export: output %s: want a %s file for target %s", opts.Output, target.ext, target)
	}
	if opts.Output != "" && !target.Writes() {
		return nil, fmt.Errorf("fxport: export: writing %s files for target %s is not implemented yet; set Options.IR to get the IR its emitter will consume", target.ext, target)
	}
	p, err := src.program()
	if err != nil {
		return nil, err
	}
	if err := ir.Verify(p); err != nil {
		return nil, err
	}
	var pl *pm.Pipeline
	if opts.Pipeline != "" {
		pl, err = pm.ParsePipeline(opts.Pipeline)
	} else {
		pl, err = pm.Build(target.target, target.backend)
	}
	if err != nil {
		return nil, err
	}
	var eopts []pm.ExportOption
	if len(opts.ExcludePatches) > 0 {
		eopts = append(eopts, pm.ExcludePatches(opts.ExcludePatches...))
	}
	if len(opts.IncludePatches) > 0 {
		eopts = append(eopts, pm.IncludePatches(opts.IncludePatches...))
	}
	exp, err := pm.NewExport(pl.Target, pl.Backend, eopts...)
	if err != nil {
		return nil, err
	}
	res := &Result{Program: p}
	res.Report, err = pm.Run(p, pl, exp, opts.Run)
	if err != nil {
		return res, err
	}
	if err := ctx.Err(); err != nil {
		return res, err
	}
	if opts.Output != "" {
		// The artifact records which fxport made it, the pipeline and the
		// workarounds that fired (ONNX metadata_props, the .pte's
		// export-metadata method), unless the caller set its own record.
		rec := res.Report.Provenance(provenance.Version())
		if opts.ONNX.Provenance == nil {
			opts.ONNX.Provenance = &rec
		}
		if opts.ExecuTorch.Provenance == nil {
			opts.ExecuTorch.Provenance = &rec
		}
		files, err := writeArtifact(ctx, p, target, opts, res)
		if err != nil {
			return res, err
		}
		res.Files = append(res.Files, files...)
	}
	if opts.IR != "" {
		if err := atomicfile.WriteBytes(opts.IR, []byte(ir.Print(p))); err != nil {
			return res, err
		}
		res.Files = append(res.Files, opts.IR)
	}
	return res, nil
}

// writeArtifact writes the target's native file(s) and returns their paths.
func writeArtifact(ctx context.Context, p *ir.Program, t Target, opts Options, res *Result) ([]string, error) {
	path := opts.Output
	switch t.backend {
	case pm.BackendAll:
		return []string{path}, pt2target.Write(p, path)
	case pm.BackendONNX:
		m, err := onnx.Emit(p, opts.ONNX)
		if err != nil {
			return nil, err
		}
		res.ONNX = m
		m.OnWrite = opts.OnWrite
		return []string{path}, m.Write(path)
	case "executorch.cuda":
		return []string{path}, etcuda.Write(ctx, p, path, etcuda.Options{Command: opts.CUDACommand})
	case "executorch.openvino":
		return []string{path}, etopenvino.Write(ctx, p, path, etopenvino.Options{Command: opts.OpenVINOCommand})
	}
	return writeExecuTorch(p, path, opts.ExecuTorch, opts.OnWrite)
}

// PTDPath is the .ptd written beside (and found beside) a .pte.
func PTDPath(ptePath string) string {
	return strings.TrimSuffix(ptePath, filepath.Ext(ptePath)) + ".ptd"
}

// WriteExecuTorch emits p (lowered by a portable or XNNPACK pipeline) as
// path, and, when the options move data out of the program, the .ptd
// beside it. Both are streamed (the weights go from their sources to the
// files one at a time, never all in memory) into temporary files, renamed
// into place only when both were written. It returns the paths written.
func WriteExecuTorch(p *ir.Program, path string, opts etemit.Options) ([]string, error) {
	return writeExecuTorch(p, path, opts, nil)
}

func writeExecuTorch(p *ir.Program, path string, opts etemit.Options, onWrite func(string, int64)) ([]string, error) {
	if onWrite != nil {
		onWrite(path, 0) // the emitter reads (hashes) every weight first
	}
	f, data, err := etemit.ProgramWithData(p, opts)
	if err != nil {
		return nil, err
	}
	counted := func(path string, w io.Writer) io.Writer {
		if onWrite == nil {
			return w
		}
		return progress.Counter(w, func(n int64) { onWrite(path, n) })
	}
	files := []atomicfile.File{{Path: path, Write: func(w io.Writer) error { return pte.Write(counted(path, w), f) }}}
	paths := []string{path}
	if len(data) > 0 {
		// The .ptd goes in first: the .pte that names its data lands last.
		files = append([]atomicfile.File{{Path: PTDPath(path), Write: func(w io.Writer) error {
			return pte.WritePTD(counted(PTDPath(path), w), data, etemit.PTDOptions)
		}}}, files...)
		paths = append(paths, PTDPath(path))
	}
	return paths, atomicfile.WriteAll(files...)
}
