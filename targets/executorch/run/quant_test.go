package run

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/fxport/fxport/interp"
	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/pm"
	"github.com/fxport/fxport/targets/executorch/emit"
	etfb "github.com/fxport/fxport/targets/executorch/fb/executorch_flatbuffer"
	"github.com/fxport/fxport/targets/executorch/pte"
)

// Quantized programs (torch.ao's PT2E quantize/dequantize ops) lowered to
// the portable kernels: every quantized_decomposed op becomes its .out
// kernel of ExecuTorch's quantized library, and the emitted file computes
// exactly what the interpreter computes on the unlowered IR.

func qHexF32(v ...float64) string {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(float32(x)))
	}
	return hex.EncodeToString(b)
}

func qHexF64(v ...float64) string {
	b := make([]byte, 8*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint64(b[8*i:], math.Float64bits(x))
	}
	return hex.EncodeToString(b)
}

func qHexI64(v ...int64) string {
	b := make([]byte, 8*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint64(b[8*i:], uint64(x))
	}
	return hex.EncodeToString(b)
}

// qHexI8 is n int8 weights spread over [-127, 127].
func qHexI8(n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(int8(math.Round(127 * math.Sin(float64(i*13+5)))))
	}
	return hex.EncodeToString(b)
}

// qInput is a deterministic float32 input of the given shape.
func qInput(shape ...int64) *interp.Tensor {
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

// qPipeline lowers p with the named executorch backend pipeline, or with
// pipeline text when given.
func qPipeline(t *testing.T, p *ir.Program, backend, text string) {
	t.Helper()
	var pl *pm.Pipeline
	var err error
	if text != "" {
		pl, err = pm.ParsePipeline(text)
	} else {
		pl, err = pm.Build(pm.TargetExecuTorch, backend)
	}
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pm.Run(p, pl, nil, pm.Config{VerifyEach: true}); err != nil {
		t.Fatalf("%s pipeline: %v", backend, err)
	}
}

// qExport lowers src (with backend, or pipeline text), emits, encodes,
// decodes and runs it on inputs, and compares every output bit for bit with
// the interpreter on the unlowered IR. It returns the decoded file and the
// operator names ("ns::name.overload") of its first method.
func qExport(t *testing.T, src, backend, text string, inputs ...interp.Value) (*pte.File, []string) {
	t.Helper()
	ref, err := ir.Parse([]byte(src), "q.fxir")
	if err != nil {
		t.Fatal(err)
	}
	want, err := interp.Run(ref, inputs, interp.Options{})
	if err != nil {
		t.Fatalf("interpreter: %v", err)
	}
	p, err := ir.Parse([]byte(src), "q.fxir")
	if err != nil {
		t.Fatal(err)
	}
	qPipeline(t, p, backend, text)
	// The interpreter runs the lowered IR (the .out forms) too.
	lowered, err := interp.Run(p, inputs, interp.Options{})
	if err != nil {
		t.Fatalf("interpreter on the lowered IR: %v", err)
	}
	qSame(t, "lowered IR", lowered.Outputs, want.Outputs)
	ef, err := emit.Program(p, emit.Options{NoMetadataMethod: true})
	if err != nil {
		t.Fatalf("emit: %v", err)
	}
	b, err := pte.Encode(ef)
	if err != nil {
		t.Fatal(err)
	}
	f, err := pte.Decode("q.pte", b)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Run(f, inputs, Options{})
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	qSame(t, "run", got, want.Outputs)
	var ops []string
	for _, o := range f.Methods[0].Plan.Operators {
		ops = append(ops, o.Name+"."+o.Overload)
	}
	t.Logf("operators: %v", ops)
	return f, ops
}

// qSame compares outputs bit for bit with the interpreter's on the
// unlowered IR (and rejects degenerate outputs).
func qSame(t *testing.T, what string, got, want []interp.Value) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d outputs, interpreter %d", what, len(got), len(want))
	}
	for i, w := range want {
		wt := w.(*interp.Tensor)
		g, ok := got[i].(*interp.Tensor)
		if !ok {
			t.Fatalf("%s: output %d: %s", what, i, interp.Describe(got[i]))
		}
		if g.DType != wt.DType || fmt.Sprint(g.Shape) != fmt.Sprint(wt.Shape) {
			t.Fatalf("%s: output %d: %s%v, interpreter %s%v", what, i, g.DType, g.Shape, wt.DType, wt.Shape)
		}
		gs, ws := g.Float64s(), wt.Float64s()
		distinct := map[float64]bool{}
		for j := range ws {
			distinct[ws[j]] = true
			if gs[j] != ws[j] {
				t.Errorf("%s: output %d [%d] = %g, interpreter %g", what, i, j, gs[j], ws[j])
			}
		}
		if len(ws) > 4 && len(distinct) < 4 {
			t.Errorf("%s: output %d: degenerate values %v", what, i, ws)
		}
	}
}

// wantOps checks that every name of want is in the operator list and that
// no functional quantized_decomposed overload is.
func wantOps(t *testing.T, ops []string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !slices.Contains(ops, w) {
			t.Errorf("operator list %v lacks %s", ops, w)
		}
	}
	for _, o := range ops {
		if strings.HasPrefix(o, "quantized_decomposed::") && !strings.HasSuffix(o, "out") {
			t.Errorf("functional kernel %s in the operator list", o)
		}
	}
}

// qLinearPerTensor is a PT2E static per-tensor quantized linear: input
// and output quantized per tensor, an int8 weight dequantized per tensor,
// permute_copy + addmm.
func qLinearPerTensor() string {
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
`, qHexI8(12), qHexF32(0.1, -0.25, 0.05))
}

func TestPortableQuantizedLinearPerTensor(t *testing.T) {
	_, ops := qExport(t, qLinearPerTensor(), "executorch.portable", "", qInput(5, 4))
	wantOps(t, ops, "quantized_decomposed::quantize_per_tensor.out", "quantized_decomposed::dequantize_per_tensor.out", "aten::addmm.out")
}

// A per-channel weight (scales and zero points as constant tensors, an
// explicit out_dtype) and the .tensor forms of the activation q/dq (scale and zero point as
// 1-element tensors).
func TestPortableQuantizedLinearPerChannel(t *testing.T) {
	src := fmt.Sprintf(`input p_w: parameter "w"
input p_s: constant_tensor "s"
input p_z: constant_tensor "z"
input p_xs: constant_tensor "xs"
input p_xz: constant_tensor "xz"
input p_b: parameter "b"
input x: user_input
output user_output
weight "w": i8[3, 4] = inline("%s")
weight "s": f64[3] = inline("%s")
weight "z": i64[3] = inline("%s")
weight "xs": f64[1] = inline("%s")
weight "xz": i64[1] = inline("%s")
weight "b": f32[3] = inline("%s")
graph forward(%%p_w: i8[3, 4], %%p_s: f64[3], %%p_z: i64[3], %%p_xs: f64[1], %%p_xz: i64[1], %%p_b: f32[3], %%x: f32[5, 4]) {
  %%xq: i8[5, 4] = quantized_decomposed.quantize_per_tensor.tensor(%%x, %%p_xs, %%p_xz, -128, 127, torch.int8)
  %%xd: f32[5, 4] = quantized_decomposed.dequantize_per_tensor.tensor(%%xq, %%p_xs, %%p_xz, -128, 127, torch.int8)
  %%wd: f32[3, 4] = quantized_decomposed.dequantize_per_channel.default(%%p_w, %%p_s, %%p_z, 0, -127, 127, torch.int8, out_dtype=torch.float32)
  %%wt: f32[4, 3] = aten.permute_copy.default(%%wd, [1, 0])
  %%y: f32[5, 3] = aten.addmm.default(%%p_b, %%xd, %%wt)
  %%yq: i8[5, 3] = quantized_decomposed.quantize_per_channel.default(%%y, %%p_s, %%p_z, 1, -128, 127, torch.int8)
  %%yd: f32[5, 3] = quantized_decomposed.dequantize_per_channel.default(%%yq, %%p_s, None, 1, -128, 127, torch.int8)
  return %%yd
}
`, qHexI8(12), qHexF64(0.01, 0.02, 0.005), qHexI64(0, 1, -1), qHexF64(0.02), qHexI64(3), qHexF32(0.1, -0.25, 0.05))
	_, ops := qExport(t, src, "executorch.portable", "", qInput(5, 4))
	wantOps(t, ops,
		"quantized_decomposed::quantize_per_tensor.Tensor_out",
		"quantized_decomposed::dequantize_per_tensor.Tensor_out",
		"quantized_decomposed::quantize_per_channel.out",
		"quantized_decomposed::dequantize_per_channel.out")
}

// Dynamic quantization, per tensor: choose_qparams.tensor writes two out
// tensors (scale float64, zero point int64), both planned.
func TestPortableDynamicQuantizedLinear(t *testing.T) {
	src := fmt.Sprintf(`input p_w: parameter "w"
input p_ws: constant_tensor "ws"
input p_wz: constant_tensor "wz"
input p_b: parameter "b"
input x: user_input
output user_output
output user_output
weight "w": i8[3, 4] = inline("%s")
weight "ws": f32[3] = inline("%s")
weight "wz": i64[3] = inline("%s")
weight "b": f32[3] = inline("%s")
graph forward(%%p_w: i8[3, 4], %%p_ws: f32[3], %%p_wz: i64[3], %%p_b: f32[3], %%x: f32[5, 4]) {
  %%s: f64[1], %%z: i64[1] = quantized_decomposed.choose_qparams.tensor(%%x, -128, 127, 1.1920928955078125e-07, torch.int8)
  %%xq: i8[5, 4] = quantized_decomposed.quantize_per_tensor.tensor(%%x, %%s, %%z, -128, 127, torch.int8)
  %%xd: f32[5, 4] = quantized_decomposed.dequantize_per_tensor.tensor(%%xq, %%s, %%z, -128, 127, torch.int8)
  %%wd: f32[3, 4] = quantized_decomposed.dequantize_per_channel.default(%%p_w, %%p_ws, %%p_wz, 0, -127, 127, torch.int8)
  %%wt: f32[4, 3] = aten.permute_copy.default(%%wd, [1, 0])
  %%y: f32[5, 3] = aten.addmm.default(%%p_b, %%xd, %%wt)
  return %%y, %%s
}
`, qHexI8(12), qHexF32(0.01, 0.02, 0.005), qHexI64(0, 2, -1), qHexF32(0.1, -0.25, 0.05))
	f, ops := qExport(t, src, "executorch.portable", "", qInput(5, 4))
	wantOps(t, ops,
		"quantized_decomposed::choose_qparams.Tensor_out",
		"quantized_decomposed::quantize_per_tensor.Tensor_out",
		"quantized_decomposed::dequantize_per_tensor.Tensor_out",
		"quantized_decomposed::dequantize_per_channel.out")
	checkMultiOut(t, f, "quantized_decomposed", "choose_qparams", "Tensor_out", 5)
}

// Dynamic quantization per token (8da4w-style): per-row parameters from
// choose_qparams_per_token_asymmetric, and a group-wise int4 weight.
func TestPortableDynamicQuantizedPerToken(t *testing.T) {
	w := make([]byte, 4*64)
	for i := range w {
		w[i] = byte(int8(i*5%15 - 8))
	}
	scales := make([]float64, 4*2)
	for i := range scales {
		scales[i] = 0.0078125 * float64(i+1)
	}
	src := fmt.Sprintf(`input p_w: parameter "w"
input p_ws: constant_tensor "ws"
input x: user_input
output user_output
weight "w": i8[4, 64] = inline("%s")
weight "ws": f32[4, 2] = inline("%s")
graph forward(%%p_w: i8[4, 64], %%p_ws: f32[4, 2], %%x: f32[3, 64]) {
  %%s: f64[3, 1], %%z: i64[3, 1] = quantized_decomposed.choose_qparams_per_token_asymmetric.default(%%x, torch.int8)
  %%xq: i8[3, 64] = quantized_decomposed.quantize_per_token.default(%%x, %%s, %%z, -128, 127, torch.int8)
  %%xd: f32[3, 64] = quantized_decomposed.dequantize_per_token.default(%%xq, %%s, %%z, -128, 127, torch.int8, torch.float32)
  %%wd: f32[4, 64] = quantized_decomposed.dequantize_per_channel_group.default(%%p_w, %%p_ws, None, -8, 7, torch.int8, 32, torch.float32)
  %%wt: f32[64, 4] = aten.permute_copy.default(%%wd, [1, 0])
  %%y: f32[3, 4] = aten.mm.default(%%xd, %%wt)
  return %%y
}
`, hex.EncodeToString(w), qHexF32(scales...))
	f, ops := qExport(t, src, "executorch.portable", "", qInput(3, 64))
	wantOps(t, ops,
		"quantized_decomposed::choose_qparams_per_token_asymmetric.out",
		"quantized_decomposed::quantize_per_token.out",
		"quantized_decomposed::dequantize_per_token.out",
		"quantized_decomposed::dequantize_per_channel_group.out")
	checkMultiOut(t, f, "quantized_decomposed", "choose_qparams_per_token_asymmetric", "out", 2)
}

// checkMultiOut checks the kernel call of ns::name.overload: its args are
// the nin functional arguments, the two out tensors, then the two returns
// again (the same values), and the two out tensors are distinct planned
// tensors whose memory does not overlap.
func checkMultiOut(t *testing.T, f *pte.File, ns, name, overload string, nin int) {
	t.Helper()
	plan := f.Methods[0].Plan
	idx := -1
	for i, o := range plan.Operators {
		if o.Name == ns+"::"+name && o.Overload == overload {
			idx = i
		}
	}
	if idx < 0 {
		t.Fatalf("no operator %s::%s.%s", ns, name, overload)
	}
	found := false
	for _, ch := range plan.Chains {
		for _, ins := range ch.Instructions {
			k, ok := ins.InstrArgs.Value.(*etfb.KernelCallT)
			if !ok || int(k.OpIndex) != idx {
				continue
			}
			found = true
			if len(k.Args) != nin+4 {
				t.Fatalf("%s: %d args, want %d inputs + 2 outs + 2 returns", name, len(k.Args), nin)
			}
			a, b := k.Args[nin], k.Args[nin+1]
			if a == b || k.Args[nin+2] != a || k.Args[nin+3] != b {
				t.Errorf("%s: out args %v, want two distinct outs returned again", name, k.Args[nin:])
			}
			ta := plan.Values[a].Val.Value.(*etfb.TensorT)
			tb := plan.Values[b].Val.Value.(*etfb.TensorT)
			if ta.ScalarType != etfb.ScalarTypeDOUBLE || tb.ScalarType != etfb.ScalarTypeLONG {
				t.Errorf("%s: outs %s, %s, want DOUBLE, LONG", name, ta.ScalarType, tb.ScalarType)
			}
			if ta.AllocationInfo == nil || tb.AllocationInfo == nil {
				t.Fatalf("%s: out tensors not planned", name)
			}
			ea, eb := ta.AllocationInfo, tb.AllocationInfo
			if ea.MemoryId == eb.MemoryId {
				sa, sb := int64(ea.MemoryOffsetLow), int64(eb.MemoryOffsetLow)
				if sa < sb+qNbytes(tb) && sb < sa+qNbytes(ta) {
					t.Errorf("%s: out tensors overlap: [%d, +%d) and [%d, +%d)", name, sa, qNbytes(ta), sb, qNbytes(tb))
				}
			}
		}
	}
	if !found {
		t.Fatalf("no kernel call of %s", name)
	}
}

func qNbytes(t *etfb.TensorT) int64 {
	n := int64(8)
	for _, d := range t.Sizes {
		n *= int64(d)
	}
	return n
}

// An XNNPACK export that excludes the dequantize config
// (partition-exclude=DeQuantizedPerTensorConfig): the float linear is
// delegated, the output's q/dq pair (no quantized op around it to fuse
// into) stays outside the delegate and runs on the portable quantized
// kernels.
func TestXNNPACKExcludedQDQRunsPortable(t *testing.T) {
	pl, err := pm.Build(pm.TargetExecuTorch, "executorch.xnnpack")
	if err != nil {
		t.Fatal(err)
	}
	s := pl.String()
	const at = "xnnpack-partition"
	i := strings.Index(s, at)
	if i < 0 || strings.HasPrefix(s[i+len(at):], "{") {
		t.Fatalf("no option-free %s in %s", at, s)
	}
	s = s[:i+len(at)] + "{partition-exclude=DeQuantizedPerTensorConfig}" + s[i+len(at):]
	src := fmt.Sprintf(`input p_w: parameter "w"
input p_b: parameter "b"
input x: user_input
output user_output
weight "w": f32[3, 4] = inline("%s")
weight "b": f32[3] = inline("%s")
graph forward(%%p_w: f32[3, 4], %%p_b: f32[3], %%x: f32[5, 4]) {
  %%wt: f32[4, 3] = aten.permute_copy.default(%%p_w, [1, 0])
  %%y: f32[5, 3] = aten.addmm.default(%%p_b, %%x, %%wt)
  %%yq: i8[5, 3] = quantized_decomposed.quantize_per_tensor.default(%%y, 0.01, -2, -128, 127, torch.int8)
  %%yd: f32[5, 3] = quantized_decomposed.dequantize_per_tensor.default(%%yq, 0.01, -2, -128, 127, torch.int8)
  return %%yd
}
`, qHexF32(0.5, -0.25, 0.125, 0.75, -0.5, 0.25, 1, -0.125, 0.375, 0.0625, -0.75, 0.5), qHexF32(0.1, -0.25, 0.05))
	f, ops := qExport(t, src, "", s, qInput(5, 4))
	if len(f.Methods[0].Delegates) != 1 {
		t.Errorf("%d delegates, want the linear's (operators %v)", len(f.Methods[0].Delegates), ops)
	}
	wantOps(t, ops, "quantized_decomposed::quantize_per_tensor.out", "quantized_decomposed::dequantize_per_tensor.out")
}

// A dynamic batch: the out tensors are planned at the upper bound and the
// kernels write the actual shape (3 rows of a bound of 8).
func TestPortableDynamicQuantizedPerTokenSymbolic(t *testing.T) {
	src := `input x: user_input
output user_output
symbol s0: [1, 8] hint 4
graph forward(%x: f32[s0, 16]) {
  %s: f64[s0, 1], %z: i64[s0, 1] = quantized_decomposed.choose_qparams_per_token_asymmetric.default(%x, torch.int8)
  %xq: i8[s0, 16] = quantized_decomposed.quantize_per_token.default(%x, %s, %z, -128, 127, torch.int8)
  %xd: f32[s0, 16] = quantized_decomposed.dequantize_per_token.default(%xq, %s, %z, -128, 127, torch.int8, torch.float32)
  %yq: i8[s0, 16] = quantized_decomposed.quantize_per_tensor.default(%xd, 0.01, 1, -128, 127, torch.int8)
  %yd: f32[s0, 16] = quantized_decomposed.dequantize_per_tensor.default(%yq, 0.01, 1, -128, 127, torch.int8)
  return %yd
}
`
	_, ops := qExport(t, src, "executorch.portable", "", qInput(3, 16))
	wantOps(t, ops, "quantized_decomposed::choose_qparams_per_token_asymmetric.out", "quantized_decomposed::quantize_per_token.out", "quantized_decomposed::dequantize_per_token.out")
}

// A quantized add the XNNPACK partitioner rejects (alpha ≠ 1): its q/dq
// nodes stay outside the delegate and the file emits and runs with them
// on the portable quantized kernels.
func TestXNNPACKRejectedQuantizedAddRunsPortable(t *testing.T) {
	src := `input x: user_input
output user_output
graph forward(%x: f32[2, 3, 4]) {
  %aq: i8[2, 3, 4] = quantized_decomposed.quantize_per_tensor.default(%x, 0.01, 4, -128, 127, torch.int8)
  %ad: f32[2, 3, 4] = quantized_decomposed.dequantize_per_tensor.default(%aq, 0.01, 4, -128, 127, torch.int8)
  %m: f32[2, 3, 4] = aten.mul.Tensor(%x, %x)
  %bq: i8[2, 3, 4] = quantized_decomposed.quantize_per_tensor.default(%m, 0.012, -100, -128, 127, torch.int8)
  %bd: f32[2, 3, 4] = quantized_decomposed.dequantize_per_tensor.default(%bq, 0.012, -100, -128, 127, torch.int8)
  %s: f32[2, 3, 4] = aten.add.Tensor(%ad, %bd, alpha=2)
  %sq: i8[2, 3, 4] = quantized_decomposed.quantize_per_tensor.default(%s, 0.02, -20, -128, 127, torch.int8)
  %sd: f32[2, 3, 4] = quantized_decomposed.dequantize_per_tensor.default(%sq, 0.02, -20, -128, 127, torch.int8)
  return %sd
}
`
	_, ops := qExport(t, src, "executorch.xnnpack", "", qInput(2, 3, 4))
	wantOps(t, ops, "quantized_decomposed::quantize_per_tensor.out", "quantized_decomposed::dequantize_per_tensor.out")
}
