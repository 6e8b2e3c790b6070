package run

import (
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/fxport/fxport/interp"
	"github.com/fxport/fxport/targets/executorch/emit"
	etfb "github.com/fxport/fxport/targets/executorch/fb/executorch_flatbuffer"
	"github.com/fxport/fxport/targets/executorch/internal/ettest"
	"github.com/fxport/fxport/targets/executorch/pte"
)

// Quantized programs (torch.ao's PT2E quantize/dequantize ops) lowered to
// the portable kernels: every quantized_decomposed op becomes its .out
// kernel of ExecuTorch's quantized library, and the emitted file computes
// exactly what the interpreter computes on the unlowered IR.

// qExport lowers src (with backend, or pipeline text), emits, encodes,
// decodes and runs it on inputs, and compares every output bit for bit with
// the interpreter on the unlowered IR. It returns the decoded file and the
// operator names ("ns::name.overload") of its first method.
func qExport(t *testing.T, src, backend, text string, inputs ...interp.Value) (*pte.File, []string) {
	t.Helper()
	want, err := interp.Run(ettest.Parse(t, src, "q.fxir"), inputs, interp.Options{})
	if err != nil {
		t.Fatalf("interpreter: %v", err)
	}
	p := ettest.Parse(t, src, "q.fxir")
	ettest.Lower(t, p, backend, text)
	// The interpreter runs the lowered IR (the .out forms) too.
	lowered, err := interp.Run(p, inputs, interp.Options{})
	if err != nil {
		t.Fatalf("interpreter on the lowered IR: %v", err)
	}
	ettest.Same(t, "lowered IR", lowered.Outputs, want.Outputs)
	f, _ := ettest.Emit(t, p, "q.pte", emit.Options{NoMetadataMethod: true})
	got, err := Run(f, inputs, Options{})
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	ettest.Same(t, "run", got, want.Outputs)
	var ops []string
	for _, o := range f.Methods[0].Plan.Operators {
		ops = append(ops, o.Name+"."+o.Overload)
	}
	t.Logf("operators: %v", ops)
	return f, ops
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

func TestPortableQuantizedLinearPerTensor(t *testing.T) {
	_, ops := qExport(t, ettest.QS8Linear(), "executorch.portable", "", ettest.Input(5, 4))
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
`, ettest.HexI8(12), ettest.HexF64(0.01, 0.02, 0.005), ettest.HexI64(0, 1, -1), ettest.HexF64(0.02), ettest.HexI64(3), ettest.HexF32(0.1, -0.25, 0.05))
	_, ops := qExport(t, src, "executorch.portable", "", ettest.Input(5, 4))
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
`, ettest.HexI8(12), ettest.HexF32(0.01, 0.02, 0.005), ettest.HexI64(0, 2, -1), ettest.HexF32(0.1, -0.25, 0.05))
	f, ops := qExport(t, src, "executorch.portable", "", ettest.Input(5, 4))
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
`, hex.EncodeToString(w), ettest.HexF32(scales...))
	f, ops := qExport(t, src, "executorch.portable", "", ettest.Input(3, 64))
	wantOps(t, ops,
		"quantized_decomposed::choose_qparams_per_token_asymmetric.out",
		"quantized_decomposed::quantize_per_token.out",
		"quantized_decomposed::dequantize_per_token.out",
		// dequantize_per_channel_group has no kernel: legalize-kernels
		// decomposes it (view, multiply by the scales).
		"aten::mul.out")
	checkMultiOut(t, f, "quantized_decomposed", "choose_qparams_per_token_asymmetric", "out", 2)
}

// checkMultiOut checks the kernel call of ns::name.overload: its args are
// the nin functional arguments, the two out tensors, then one TensorList
// holding both (exir's return slot for several outs), and the two out
// tensors are distinct planned tensors whose memory does not overlap.
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
			if len(k.Args) != nin+3 {
				t.Fatalf("%s: %d args, want %d inputs + 2 outs + 1 TensorList", name, len(k.Args), nin)
			}
			a, b := k.Args[nin], k.Args[nin+1]
			l, ok := plan.Values[k.Args[nin+2]].Val.Value.(*etfb.TensorListT)
			if a == b || !ok || len(l.Items) != 2 || l.Items[0] != a || l.Items[1] != b {
				t.Errorf("%s: out args %v, want two distinct outs, then a TensorList of both", name, k.Args[nin:])
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
	s := ettest.XNNPACKExclude(t, "DeQuantizedPerTensorConfig")
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
`, ettest.HexF32(0.5, -0.25, 0.125, 0.75, -0.5, 0.25, 1, -0.125, 0.375, 0.0625, -0.75, 0.5), ettest.HexF32(0.1, -0.25, 0.05))
	f, ops := qExport(t, src, "", s, ettest.Input(5, 4))
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
	_, ops := qExport(t, src, "executorch.portable", "", ettest.Input(3, 16))
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
	_, ops := qExport(t, src, "executorch.xnnpack", "", ettest.Input(2, 3, 4))
	wantOps(t, ops, "quantized_decomposed::quantize_per_tensor.out", "quantized_decomposed::dequantize_per_tensor.out")
}
