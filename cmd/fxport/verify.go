package main

import (
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"

	"github.com/fxport/fxport/frontends/pt2"
	"github.com/fxport/fxport/internal/ort"
	"github.com/fxport/fxport/internal/progress"
	"github.com/fxport/fxport/interp"
	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/pm"
	"github.com/fxport/fxport/targets/onnx"
)

// runVerify exports a program to ONNX, runs it in ONNX Runtime on the
// fixture's inputs and compares each output with torch's eager outputs
// (io/output_<i>.npy beside the program), or, without a fixture, with the
// reference interpreter on generated inputs.
func runVerify(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("verify", stderr)
	target := fs.String("target", "onnx", "target to verify (onnx)")
	opset := fs.Int("opset", onnx.DefaultOpset, fmt.Sprintf("ONNX default-domain opset (%d–%d)", onnx.MinSupportedOpset, onnx.MaxSupportedOpset))
	atol := fs.Float64("atol", defaultVerifyATol, "absolute tolerance: an output passes when its max error ≤ atol + rtol × max|expected|")
	rtol := fs.Float64("rtol", defaultVerifyRTol, "relative tolerance, scaled by the output's largest expected magnitude")
	fs.Func("tol", aliasPrefix+"atol and -rtol", func(v string) error { // the old single tolerance: both
		t, err := strconv.ParseFloat(v, 64)
		*atol, *rtol = t, t
		return err
	})
	ioDir := fs.String("io", "", "fixture directory with input_<i>.npy and output_<i>.npy (default: io/ beside the program)")
	files, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(files) != 1 {
		return usageErr("want one PROGRAM, got %d", len(files))
	}
	if *target != "onnx" {
		return usageErr("verify supports --target onnx only")
	}
	if err := onnx.CheckOpset(*opset); err != nil {
		return usageErr("--opset: %v", err)
	}
	path := files[0]
	var p *ir.Program
	if filepath.Ext(path) == ".pt2" {
		p, err = pt2.Read(path)
	} else {
		p, err = loadProgram(path)
	}
	if err != nil {
		return err
	}
	if err := ir.Verify(p); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	ref := p.Clone()
	pl, err := pm.Build(pm.TargetONNX, "")
	if err != nil {
		return err
	}
	line := progress.New(stderr)
	defer line.Clear()
	onPass := func(i, n int, name string) { line.Set("verify: pass %d/%d %s", i, n, name) }
	if _, err := pm.Run(p, pl, nil, pm.Config{OnPass: onPass}); err != nil {
		return err
	}
	line.Set("verify: emitting the ONNX model")
	m, err := onnx.Emit(p, onnx.Options{Opset: *opset})
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if ok, why := ort.Available(); !ok {
		return fmt.Errorf("ONNX Runtime unavailable: %s", why)
	}
	dir := *ioDir
	if dir == "" {
		dir = filepath.Join(filepath.Dir(path), "io")
	}
	var ins []ort.Tensor
	var want []ort.Tensor
	if _, err := os.Stat(filepath.Join(dir, "input_0.npy")); err == nil || len(m.Inputs) == 0 {
		for i := range m.Inputs {
			t, err := ort.ReadNPY(filepath.Join(dir, fmt.Sprintf("input_%d.npy", i)))
			if err != nil {
				return err
			}
			ins = append(ins, t)
		}
		for i := range m.Outputs {
			t, err := ort.ReadNPY(filepath.Join(dir, fmt.Sprintf("output_%d.npy", i)))
			if err != nil {
				return err
			}
			want = append(want, t)
		}
		line.Clear()
		fmt.Fprintf(stdout, "reference: %s\n", dir)
	} else {
		line.Set("verify: computing the reference outputs with the interpreter")
		ins, want, err = interpReference(ref)
		if err != nil {
			return err
		}
		line.Clear()
		fmt.Fprintf(stdout, "reference: interpreter (no fixture in %s)\n", dir)
	}
	line.Set("verify: running the model in ONNX Runtime")
	got, err := m.RunORT(ins)
	line.Clear()
	if err != nil {
		return err
	}
	failed := 0
	for i, g := range got {
		gv, err := g.Float64s()
		if err != nil {
			return err
		}
		wv, err := want[i].Float64s()
		if err != nil {
			return err
		}
		d := onnx.Compare(g.Name, gv, g.Shape, wv, want[i].Shape)
		ok, allowed, scale := outputPasses(d, wv, *atol, *rtol)
		status := "ok"
		if !ok {
			status = "FAIL"
			failed++
		}
		if d.Err != "" {
			fmt.Fprintf(stdout, "%-4s %s: %s\n", status, d.Name, d.Err)
			continue
		}
		fmt.Fprintf(stdout, "%-4s %s: max error %.3g, allowed %.3g (max |expected| %.3g), max elementwise rel %.3g\n", status, d.Name, d.MaxAbs, allowed, scale, d.MaxRel)
	}
	rule := fmt.Sprintf("max error ≤ %g + %g × max|expected|", *atol, *rtol)
	if failed > 0 {
		return fmt.Errorf("%d of %d outputs differ beyond %s", failed, len(got), rule)
	}
	fmt.Fprintf(stdout, "%d outputs match: %s (opset %d)\n", len(got), rule, *opset)
	return nil
}

// The default tolerances of verify: an output passes when its max error
// is within atol + rtol × its largest expected magnitude, the scale-aware
// rule of the genuine-runtime judges (an element-wise relative error near
// a zero says nothing about a model's accuracy).
const (
	defaultVerifyATol = 1e-5
	defaultVerifyRTol = 1e-4
)

// outputPasses applies verify's rule to one output's diff: its max error
// within atol + rtol × max|expected|. It returns the allowance and the scale.
func outputPasses(d onnx.Diff, want []float64, atol, rtol float64) (ok bool, allowed, scale float64) {
	scale = maxAbsFinite(want)
	allowed = atol + rtol*scale
	return d.Err == "" && d.MaxAbs <= allowed, allowed, scale
}

// maxAbsFinite is the largest finite |x| of xs (0 when none).
func maxAbsFinite(xs []float64) float64 {
	m := 0.0
	for _, x := range xs {
		if a := math.Abs(x); !math.IsInf(a, 0) && !math.IsNaN(a) && a > m {
			m = a
		}
	}
	return m
}

// interpReference runs the program (before the pipeline) in the reference
// interpreter on inputs of ones-and-ramps built from the symbols' hints.
func interpReference(p *ir.Program) ([]ort.Tensor, []ort.Tensor, error) {
	var vals []interp.Value
	var ins []ort.Tensor
	for _, v := range interp.UserInputs(p) {
		tt := v.Tensor()
		if tt == nil {
			return nil, nil, fmt.Errorf("input %%%s is not a tensor", v.Name)
		}
		var shape []int64
		for _, d := range tt.Shape {
			c, ok := d.Const()
			if !ok {
				h, err := p.Env.EvalHint(d)
				if err != nil {
					return nil, nil, fmt.Errorf("input %%%s: dim %s has no hint: %w", v.Name, d, err)
				}
				c = h
			}
			shape = append(shape, c)
		}
		n := int64(1)
		for _, d := range shape {
			n *= d
		}
		xs := make([]float64, n)
		for i := range xs {
			xs[i] = float64((i*7)%11)/5 - 1
			if !tt.DType.IsFloat() {
				xs[i] = float64(i % 2)
			}
		}
		t := interp.FromFloat64(tt.DType, shape, xs)
		vals = append(vals, t)
		et, err := onnx.ElemType(tt.DType)
		if err != nil {
			return nil, nil, err
		}
		ins = append(ins, ort.Tensor{Type: et, Shape: shape, Data: t.Contiguous().Bytes()})
	}
	res, err := interp.Run(p, vals, interp.Options{})
	if err != nil {
		return nil, nil, fmt.Errorf("interpreter: %w", err)
	}
	var want []ort.Tensor
	for i, o := range res.Outputs {
		if i < len(p.Signature.Outputs) && p.Signature.Outputs[i].Kind != ir.UserOutput && p.Signature.Outputs[i].Kind != ir.LossOutput {
			continue
		}
		t, ok := o.(*interp.Tensor)
		if !ok {
			return nil, nil, fmt.Errorf("output %d is not a tensor", i)
		}
		et, err := onnx.ElemType(t.DType)
		if err != nil {
			return nil, nil, err
		}
		want = append(want, ort.Tensor{Type: et, Shape: t.Shape, Data: t.Contiguous().Bytes()})
	}
	return ins, want, nil
}
