package xnnpack_test

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/fxport/fxport/interp"
	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/pm"
	"github.com/fxport/fxport/targets/executorch/emit"
	"github.com/fxport/fxport/targets/executorch/pte"
	"github.com/fxport/fxport/targets/executorch/run"
	"github.com/fxport/fxport/targets/executorch/xnnpack"
)

// qprog is one quantized test program with its input shape and the
// tolerance of the delegated result against the interpreter on the
// unlowered IR (one output quantization step, or what its own test
// derives).
type qprog struct {
	name  string
	src   string
	shape []int64
	tol   float64
}

// qs8LinearSrc is the PT2E static per-tensor quantized linear (permute_copy
// + addmm) the exclusion bugs were found on.
func qs8LinearSrc() string {
	return fmt.Sprintf(`input p_w: parameter "w"
input p_b: parameter "b"
input x: user_input
output user_output
weight "w": i8[3, 4] = inline("%s")
weight "b": f32[3] = inline("%s")
graph forward(%%p_w: i8[3, 4], %%p_b: f32[3], %%x: f32[5, 4]) {
  %%xq: i8[5, 4] = quantized_decomposed.quantize_per_tensor.default(%%x, 0.02, 3, -128, 127, torch.int8)
  %%xd: f32[5, 4] = quantized_decomposed.dequantize_per_tensor.default(%%xq, 0.02, 3, -128, 127, torch.int8)
  %%wd: f32[3, 4] = quantized_decomposed.dequantize_per_tensor.default(%%p_w, 0.01, 0, -127, 127, torch.int8)
  %%wt: f32[4, 3] = aten.permute_copy.default(%%wd, [1, 0])
  %%y: f32[5, 3] = aten.addmm.default(%%p_b, %%xd, %%wt)
  %%yq: i8[5, 3] = quantized_decomposed.quantize_per_tensor.default(%%y, 0.01, -2, -128, 127, torch.int8)
  %%yd: f32[5, 3] = quantized_decomposed.dequantize_per_tensor.default(%%yq, 0.01, -2, -128, 127, torch.int8)
  return %%yd
}
`, hexI8(12), hexF32(0.1, -0.25, 0.05))
}

// qs8PerChannelSrc: the linear with a per-channel weight (axis 0 under the
// permute) or a bare [in, out] mm weight quantized along axis 1.
func qs8PerChannelSrc(bare bool) string {
	if bare {
		return fmt.Sprintf(`input p_w: parameter "w"
input p_s: constant_tensor "s"
input x: user_input
output user_output
weight "w": i8[4, 3] = inline("%s")
weight "s": f32[3] = inline("%s")
graph forward(%%p_w: i8[4, 3], %%p_s: f32[3], %%x: f32[5, 4]) {
  %%xq: i8[5, 4] = quantized_decomposed.quantize_per_tensor.default(%%x, 0.015, 0, -128, 127, torch.int8)
  %%xd: f32[5, 4] = quantized_decomposed.dequantize_per_tensor.default(%%xq, 0.015, 0, -128, 127, torch.int8)
  %%wd: f32[4, 3] = quantized_decomposed.dequantize_per_channel.default(%%p_w, %%p_s, None, -1, -127, 127, torch.int8)
  %%y: f32[5, 3] = aten.mm.default(%%xd, %%wd)
  %%yq: i8[5, 3] = quantized_decomposed.quantize_per_tensor.default(%%y, 0.02, 1, -128, 127, torch.int8)
  %%yd: f32[5, 3] = quantized_decomposed.dequantize_per_tensor.default(%%yq, 0.02, 1, -128, 127, torch.int8)
  return %%yd
}
`, hexI8(12), hexF32(0.004, 0.012, 0.008))
	}
	return fmt.Sprintf(`input p_w: parameter "w"
input p_s: constant_tensor "s"
input p_z: constant_tensor "z"
input p_b: parameter "b"
input x: user_input
output user_output
weight "w": i8[3, 4] = inline("%s")
weight "s": f32[3] = inline("%s")
weight "z": i64[3] = inline("%s")
weight "b": f32[3] = inline("%s")
graph forward(%%p_w: i8[3, 4], %%p_s: f32[3], %%p_z: i64[3], %%p_b: f32[3], %%x: f32[5, 4]) {
  %%xq: i8[5, 4] = quantized_decomposed.quantize_per_tensor.default(%%x, 0.02, 3, -128, 127, torch.int8)
  %%xd: f32[5, 4] = quantized_decomposed.dequantize_per_tensor.default(%%xq, 0.02, 3, -128, 127, torch.int8)
  %%wd: f32[3, 4] = quantized_decomposed.dequantize_per_channel.default(%%p_w, %%p_s, %%p_z, 0, -127, 127, torch.int8)
  %%wt: f32[4, 3] = aten.permute_copy.default(%%wd, [1, 0])
  %%y: f32[5, 3] = aten.addmm.default(%%p_b, %%xd, %%wt)
  %%yq: i8[5, 3] = quantized_decomposed.quantize_per_tensor.default(%%y, 0.01, -2, -128, 127, torch.int8)
  %%yd: f32[5, 3] = quantized_decomposed.dequantize_per_tensor.default(%%yq, 0.01, -2, -128, 127, torch.int8)
  return %%yd
}
`, hexI8(12), hexF32(0.01, 0.02, 0.005), hexI64(0, 0, 0), hexF32(0.1, -0.25, 0.05))
}

// qs8AddLinearSrc: a quantized add whose qint8 output feeds a quantized
// linear (mm).
func qs8AddLinearSrc() string {
	return fmt.Sprintf(`input p_w: parameter "w"
input x: user_input
output user_output
weight "w": i8[3, 4] = inline("%s")
graph forward(%%p_w: i8[3, 4], %%x: f32[5, 4]) {
  %%aq: i8[5, 4] = quantized_decomposed.quantize_per_tensor.default(%%x, 0.01, 4, -128, 127, torch.int8)
  %%ad: f32[5, 4] = quantized_decomposed.dequantize_per_tensor.default(%%aq, 0.01, 4, -128, 127, torch.int8)
  %%m: f32[5, 4] = aten.mul.Tensor(%%x, %%x)
  %%bq: i8[5, 4] = quantized_decomposed.quantize_per_tensor.default(%%m, 0.012, -100, -128, 127, torch.int8)
  %%bd: f32[5, 4] = quantized_decomposed.dequantize_per_tensor.default(%%bq, 0.012, -100, -128, 127, torch.int8)
  %%s: f32[5, 4] = aten.add.Tensor(%%ad, %%bd)
  %%sq: i8[5, 4] = quantized_decomposed.quantize_per_tensor.default(%%s, 0.02, -20, -128, 127, torch.int8)
  %%sd: f32[5, 4] = quantized_decomposed.dequantize_per_tensor.default(%%sq, 0.02, -20, -128, 127, torch.int8)
  %%wd: f32[3, 4] = quantized_decomposed.dequantize_per_tensor.default(%%p_w, 0.01, 0, -127, 127, torch.int8)
  %%wt: f32[4, 3] = aten.permute_copy.default(%%wd, [1, 0])
  %%y: f32[5, 3] = aten.mm.default(%%sd, %%wt)
  %%yq: i8[5, 3] = quantized_decomposed.quantize_per_tensor.default(%%y, 0.03, 0, -128, 127, torch.int8)
  %%yd: f32[5, 3] = quantized_decomposed.dequantize_per_tensor.default(%%yq, 0.03, 0, -128, 127, torch.int8)
  return %%yd
}
`, hexI8(12))
}

// qs8ConvAddSrc: a quantized convolution plus a quantized fp32-convolution
// result, the sum feeding another quantized convolution (NHWC qint8 chain).
func qs8ConvAddSrc() string {
	return fmt.Sprintf(`input p_w: parameter "w"
input p_w2: parameter "w2"
input p_w3: parameter "w3"
input x: user_input
output user_output
weight "w": i8[3, 2, 3, 3] = inline("%s")
weight "w2": f32[3, 2, 1, 1] = inline("%s")
weight "w3": i8[4, 3, 1, 1] = inline("%s")
graph forward(%%p_w: i8[3, 2, 3, 3], %%p_w2: f32[3, 2, 1, 1], %%p_w3: i8[4, 3, 1, 1], %%x: f32[1, 2, 5, 5]) {
  %%xq: i8[1, 2, 5, 5] = quantized_decomposed.quantize_per_tensor.default(%%x, 0.01, 0, -128, 127, torch.int8)
  %%xd: f32[1, 2, 5, 5] = quantized_decomposed.dequantize_per_tensor.default(%%xq, 0.01, 0, -128, 127, torch.int8)
  %%wd: f32[3, 2, 3, 3] = quantized_decomposed.dequantize_per_tensor.default(%%p_w, 0.02, 0, -127, 127, torch.int8)
  %%c: f32[1, 3, 5, 5] = aten.convolution.default(%%xd, %%wd, None, [1, 1], [1, 1], [1, 1], False, [0, 0], 1)
  %%cq: i8[1, 3, 5, 5] = quantized_decomposed.quantize_per_tensor.default(%%c, 0.05, -3, -128, 127, torch.int8)
  %%cd: f32[1, 3, 5, 5] = quantized_decomposed.dequantize_per_tensor.default(%%cq, 0.05, -3, -128, 127, torch.int8)
  %%f: f32[1, 3, 5, 5] = aten.convolution.default(%%x, %%p_w2, None, [1, 1], [0, 0], [1, 1], False, [0, 0], 1)
  %%fq: i8[1, 3, 5, 5] = quantized_decomposed.quantize_per_tensor.default(%%f, 0.02, 5, -128, 127, torch.int8)
  %%fd: f32[1, 3, 5, 5] = quantized_decomposed.dequantize_per_tensor.default(%%fq, 0.02, 5, -128, 127, torch.int8)
  %%s: f32[1, 3, 5, 5] = aten.add.Tensor(%%cd, %%fd)
  %%sq: i8[1, 3, 5, 5] = quantized_decomposed.quantize_per_tensor.default(%%s, 0.06, 2, -128, 127, torch.int8)
  %%sd: f32[1, 3, 5, 5] = quantized_decomposed.dequantize_per_tensor.default(%%sq, 0.06, 2, -128, 127, torch.int8)
  %%w3d: f32[4, 3, 1, 1] = quantized_decomposed.dequantize_per_tensor.default(%%p_w3, 0.03, 0, -127, 127, torch.int8)
  %%c2: f32[1, 4, 5, 5] = aten.convolution.default(%%sd, %%w3d, None, [1, 1], [0, 0], [1, 1], False, [0, 0], 1)
  %%c2q: i8[1, 4, 5, 5] = quantized_decomposed.quantize_per_tensor.default(%%c2, 0.05, 0, -128, 127, torch.int8)
  %%c2d: f32[1, 4, 5, 5] = quantized_decomposed.dequantize_per_tensor.default(%%c2q, 0.05, 0, -128, 127, torch.int8)
  return %%c2d
}
`, hexI8(54), hexF32(0.5, -0.25, 0.75, 0.3, -0.6, 0.2), hexI8(12))
}

// qd8Rank3Src: a per-token dynamically quantized linear of rank 3 (the
// flattening / restoring view_copy pair folds into the fully-connected op).
func qd8Rank3Src() string {
	return fmt.Sprintf(`input p_w: parameter "w"
input p_ws: constant_tensor "ws"
input x: user_input
output user_output
weight "w": i8[3, 4] = inline("%s")
weight "ws": f32[3] = inline("%s")
graph forward(%%p_w: i8[3, 4], %%p_ws: f32[3], %%x: f32[2, 3, 4]) {
  %%s: f64[2, 3, 1], %%z: i64[2, 3, 1] = quantized_decomposed.choose_qparams_per_token_asymmetric.default(%%x, torch.int8)
  %%xq: i8[2, 3, 4] = quantized_decomposed.quantize_per_token.default(%%x, %%s, %%z, -128, 127, torch.int8)
  %%xd: f32[2, 3, 4] = quantized_decomposed.dequantize_per_token.default(%%xq, %%s, %%z, -128, 127, torch.int8, torch.float32)
  %%wd: f32[3, 4] = quantized_decomposed.dequantize_per_channel.default(%%p_w, %%p_ws, None, 0, -127, 127, torch.int8)
  %%wt: f32[4, 3] = aten.permute_copy.default(%%wd, [1, 0])
  %%xv: f32[6, 4] = aten.view_copy.default(%%xd, [6, 4])
  %%y: f32[6, 3] = aten.mm.default(%%xv, %%wt)
  %%yv: f32[2, 3, 3] = aten.view_copy.default(%%y, [2, 3, 3])
  return %%yv
}
`, hexI8(12), hexF32(0.01, 0.02, 0.005))
}

// quantPrograms are the quantized programs of the qs8_* and qd8 tests
// (and run's portable quantized linear), each fully delegated when nothing
// is excluded.
func quantPrograms() []qprog {
	qb4w := []float64{0.0625, 0.03125, 0.125, 0.25, 0.015625, 0.5, 0.09375, 0.046875}
	return []qprog{
		{"qs8-linear", qs8LinearSrc(), []int64{5, 4}, 0.01},
		{"qs8-perchannel-linear", qs8PerChannelSrc(false), []int64{5, 4}, 0.01},
		{"qs8-perchannel-mm-bare", qs8PerChannelSrc(true), []int64{5, 4}, 0.02},
		{"qs8-conv", convSrc([4]int{4, 3, 3, 2}, 1, [4]int{1, 3, 6, 5}, [4]int{1, 4, 3, 4}, nil, true), []int64{1, 3, 6, 5}, 0.02},
		{"qs8-conv-perchannel", convSrc([4]int{4, 3, 3, 2}, 1, [4]int{2, 3, 6, 5}, [4]int{2, 4, 3, 4}, []float64{0.004, 0.01, 0.007, 0.002}, true), []int64{2, 3, 6, 5}, 0.02},
		{"qs8-conv-depthwise", convSrc([4]int{3, 1, 3, 2}, 3, [4]int{1, 3, 6, 5}, [4]int{1, 3, 3, 4}, []float64{0.009, 0.003, 0.006}, false), []int64{1, 3, 6, 5}, 0.02},
		{"qs8-add", qaddSrc, []int64{2, 3, 4}, 0.025},
		{"qs8-submul", qsubmulSrc, []int64{2, 3, 4}, 0.025},
		{"qs8-add-linear", qs8AddLinearSrc(), []int64{5, 4}, 4*127*0.01*0.02 + 0.03},
		{"qs8-conv-add", qs8ConvAddSrc(), []int64{1, 2, 5, 5}, 3*127*0.03*0.06 + 0.05},
		{"qd8-linear", dynLinear(false, hexI64(0, 0, 0)), []int64{5, 4}, 4 * 127 * 0.02 * 2.4 / 255},
		{"qd8-linear-per-token", dynLinear(true, hexI64(0, 0, 0)), []int64{5, 4}, 1e-5},
		{"qd8-linear-rank3", qd8Rank3Src(), []int64{2, 3, 4}, 1e-5},
		{"qb4w-linear", qb4wLinear(32, qb4w, -8), []int64{3, 64}, 1e-5},
	}
}

// excludePipeline is executorch.xnnpack with partition-exclude=cfg.
func excludePipeline(t *testing.T, cfg string) *pm.Pipeline {
	t.Helper()
	pl, err := pm.Build(pm.TargetExecuTorch, "executorch.xnnpack")
	if err != nil {
		t.Fatal(err)
	}
	if cfg == "" {
		return pl
	}
	s := pl.String()
	const at = "xnnpack-partition"
	i := strings.Index(s, at)
	if i < 0 || strings.HasPrefix(s[i+len(at):], "{") {
		t.Fatalf("no option-free %s in %s", at, s)
	}
	pl, err = pm.ParsePipeline(s[:i+len(at)] + "{partition-exclude=" + cfg + "}" + s[i+len(at):])
	if err != nil {
		t.Fatal(err)
	}
	return pl
}

// sweepInput is the deterministic input qlower uses.
func sweepInput(shape []int64) interp.Value {
	n := int64(1)
	for _, d := range shape {
		n *= d
	}
	xs := make([]float64, n)
	for i := range xs {
		xs[i] = math.Sin(float64(i*7+3)) * 1.2
	}
	return interp.FromFloat64(ir.Float32, shape, xs)
}

// exportExcluded lowers q with cfg excluded, checks every delegate (no
// node of the excluded config inside, no int8 value but a constant
// crossing its boundary), emits, encodes, decodes and runs it, and compares the result
// with want within q.tol. It returns the number of delegated nodes.
func exportExcluded(t *testing.T, q qprog, cfg string, want []float64) int {
	t.Helper()
	p, err := ir.Parse([]byte(q.src), q.name+".fxir")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pm.Run(p, excludePipeline(t, cfg), nil, pm.Config{VerifyEach: true}); err != nil {
		t.Fatalf("lowering: %v", err)
	}
	consts := map[*ir.Value]bool{}
	for i, v := range p.Main.Inputs {
		consts[v] = i < len(p.Signature.Inputs) && xnnpack.IsConstantKind(p.Signature.Inputs[i].Kind)
	}
	delegated := 0
	for _, n := range p.Main.Nodes() {
		if n.Op != xnnpack.OpCallDelegate {
			continue
		}
		for _, v := range append(n.Operands(), n.Results...) {
			if tt := v.Tensor(); tt != nil && tt.DType == ir.Int8 && !consts[v] {
				t.Errorf("int8 value %s crosses the delegate boundary:\n%s", v, ir.Print(p))
			}
		}
		for _, m := range n.Args[0].Graph.Nodes() {
			delegated++
			if c, _ := xnnpack.ConfigOf(m.Op); c == cfg {
				t.Errorf("%s (%s) delegated although %s is excluded", m.Op.Info().Name, c, cfg)
			}
		}
	}
	ef, err := emit.Program(p, emit.Options{NoMetadataMethod: true})
	if err != nil {
		t.Fatalf("emit: %v\n%s", err, ir.Print(p))
	}
	b, err := pte.Encode(ef)
	if err != nil {
		t.Fatalf("encode: %v", err)
	}
	f, err := pte.Decode(q.name+".pte", b)
	if err != nil {
		t.Fatalf("decode: %v", err)
	}
	got, err := run.Run(f, []interp.Value{sweepInput(q.shape)}, run.Options{})
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	gs := got[0].(*interp.Tensor).Float64s()
	if len(gs) != len(want) {
		t.Fatalf("%d outputs, interpreter %d", len(gs), len(want))
	}
	for i := range want {
		if d := math.Abs(gs[i] - want[i]); !(d <= q.tol*1.0001) {
			t.Errorf("y[%d] = %g, interpreter %g (tolerance %g)", i, gs[i], want[i], q.tol)
		}
	}
	return delegated
}

// Every partitioner config excluded from every quantized program: the
// export delegates a consistent subset (nothing of the excluded config,
// no int8 value crossing a delegate boundary) or leaves the pattern on
// the portable quantized kernels, and always emits, encodes, decodes and
// runs within the program's tolerance of the interpreter on the unlowered
// IR. Each program is fully delegated with nothing excluded, and at least
// one exclusion changes what is delegated.
func TestExcludeEveryConfigQuantized(t *testing.T) {
	cfgs := xnnpack.Configs()
	for _, q := range quantPrograms() {
		t.Run(q.name, func(t *testing.T) {
			ref, err := ir.Parse([]byte(q.src), q.name+".fxir")
			if err != nil {
				t.Fatal(err)
			}
			res, err := interp.Run(ref, []interp.Value{sweepInput(q.shape)}, interp.Options{})
			if err != nil {
				t.Fatalf("interpreter: %v", err)
			}
			want := res.Outputs[0].(*interp.Tensor).Float64s()
			used := map[string]bool{}
			for _, n := range ref.Main.Nodes() {
				if c, ok := xnnpack.ConfigOf(n.Op); ok {
					used[c] = true
				}
			}
			full := exportExcluded(t, q, "", want)
			if want := len(ref.Main.Nodes()); full != want {
				t.Errorf("nothing excluded: %d of %d nodes delegated", full, want)
			}
			changed := 0
			for _, cfg := range cfgs {
				t.Run(cfg, func(t *testing.T) {
					if n := exportExcluded(t, q, cfg, want); n != full {
						changed++
						if !used[cfg] {
							t.Errorf("excluding %s, which covers none of the program's ops, delegates %d nodes instead of %d", cfg, n, full)
						}
					}
				})
			}
			if changed == 0 {
				t.Errorf("no exclusion changed the delegation")
			}
		})
	}
}

// The two failures the sweep was written for, at the partitioner: with the
// input/output quantize excluded, the dequantizes reading it and the
// addmm are released (their int8 inputs would come from outside); with
// the dequantizes excluded, the addmm is released (its quantized input and
// weight would be computed outside: "weight is not static"). Nothing is
// delegated either way, and each release names a node it needed. An fp32
// linear whose weight transpose is excluded releases its mm for the same
// reason (the relu stays delegated).
func TestExcludeReleasesWhatSerializationNeeds(t *testing.T) {
	fp32Linear := fmt.Sprintf(`input p_w: parameter "w"
input x: user_input
output user_output
weight "w": f32[3, 4] = inline("%s")
graph forward(%%p_w: f32[3, 4], %%x: f32[5, 4]) {
  %%wt: f32[4, 3] = aten.permute_copy.default(%%p_w, [1, 0])
  %%y: f32[5, 3] = aten.mm.default(%%x, %%wt)
  %%r: f32[5, 3] = aten.relu.default(%%y)
  return %%r
}
`, hexF32(0.5, -0.25, 0.125, 0.75, -0.5, 0.25, 1, -0.125, 0.375, 0.0625, -0.75, 0.5))
	for _, tc := range []struct {
		name, src string
		exclude   []string
		want      map[string]string // released node → the value its reason names
		parts     int
	}{
		{"quantize", qs8LinearSrc(), []string{"QuantizedPerTensorConfig"}, map[string]string{"xd": "%xq", "yd": "%yq", "y": "%xq", "wd": "%y"}, 0},
		{"dequantize", qs8LinearSrc(), []string{"DeQuantizedPerTensorConfig"}, map[string]string{"y": "%xq"}, 0},
		{"dequantize-per-channel", qs8PerChannelSrc(false), []string{"DeQuantizedPerChannelConfig"}, map[string]string{"y": "%wd", "xd": "%y"}, 0},
		{"fp32-permute", fp32Linear, []string{"PermuteConfig"}, map[string]string{"y": "%wt"}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := ir.Parse([]byte(tc.src), tc.name+".fxir")
			if err != nil {
				t.Fatal(err)
			}
			res, err := xnnpack.Run(p, xnnpack.Options{Exclude: tc.exclude})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Partitions) != tc.parts {
				t.Errorf("%d partitions, want %d:\n%s", len(res.Partitions), tc.parts, ir.Print(p))
			}
			got := map[string]string{}
			for _, r := range res.Rejected {
				got[r.Node.Results[0].Name] = r.Reason
			}
			for node, needed := range tc.want {
				if r := got[node]; !strings.Contains(r, "needs "+needed+" ") {
					t.Errorf("%%%s: reason %q, want one naming %s", node, r, needed)
				}
			}
			// The whole export goes through: emission, the runner and the
			// interpreter on the unlowered IR agree.
			q := qprog{tc.name, tc.src, []int64{5, 4}, 0.01}
			ref, err := ir.Parse([]byte(tc.src), tc.name+".fxir")
			if err != nil {
				t.Fatal(err)
			}
			want, err := interp.Run(ref, []interp.Value{sweepInput(q.shape)}, interp.Options{})
			if err != nil {
				t.Fatal(err)
			}
			exportExcluded(t, q, tc.exclude[0], want.Outputs[0].(*interp.Tensor).Float64s())
		})
	}
}
