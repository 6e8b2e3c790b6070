package xnnpack_test

import (
	"fmt"
	"testing"
)

// A grouped transposed convolution followed by an inference batch norm
// (affine, with a conv bias) and a relu: xnnpack-fuse-batch-norm folds the
// batch norm into the deconvolution's weight and bias, so the whole
// program is one delegate (XNNConvTranspose2d with the relu fused) and the
// .pte run matches the interpreter on the unlowered IR.
func TestBatchNormFusedIntoDeconv(t *testing.T) {
	src := fmt.Sprintf(`input p_w: parameter "w"
input p_b: parameter "b"
input p_g: parameter "g"
input p_beta: parameter "beta"
input b_m: buffer "m" persistent
input b_v: buffer "v" persistent
input x: user_input
output user_output
weight "w": f32[4, 3, 2, 2] = inline("%s")
weight "b": f32[6] = inline("%s")
weight "g": f32[6] = inline("%s")
weight "beta": f32[6] = inline("%s")
weight "m": f32[6] = inline("%s")
weight "v": f32[6] = inline("%s")
graph forward(%%p_w: f32[4, 3, 2, 2], %%p_b: f32[6], %%p_g: f32[6], %%p_beta: f32[6], %%b_m: f32[6], %%b_v: f32[6], %%x: f32[1, 4, 3, 3]) {
  %%d: f32[1, 6, 6, 6] = aten.convolution.default(%%x, %%p_w, %%p_b, [2, 2], [0, 0], [1, 1], True, [0, 0], 2)
  %%n: f32[1, 6, 6, 6], %%n_1: f32[0], %%n_2: f32[0] = aten._native_batch_norm_legit_no_training.default(%%d, %%p_g, %%p_beta, %%b_m, %%b_v, 0.1, 0.001)
  %%r: f32[1, 6, 6, 6] = aten.relu.default(%%n)
  return %%r
}
`, wF32(48, 4.1, 0.6), wF32(6, 4.2, 0.3), wF32(6, 4.3, 1.3), wF32(6, 4.4, 0.4), wF32(6, 4.5, 0.2), varF32(6, 4.6))
	layoutCase(t, src, 2, 1, []string{"XNNConvTranspose2d"})
}

// Linear (with and without bias) followed by BatchNorm1d: both batch
// norms fold into the fully-connected weights and biases (the mm becomes
// an addmm), leaving one delegate of two XNNFullyConnected nodes.
func TestBatchNormFusedIntoLinear(t *testing.T) {
	src := fmt.Sprintf(`input p_w: parameter "w"
input p_b: parameter "b"
input p_w2: parameter "w2"
input p_g: parameter "g"
input p_beta: parameter "beta"
input b_m: buffer "m" persistent
input b_v: buffer "v" persistent
input x: user_input
output user_output
weight "w": f32[5, 6] = inline("%s")
weight "b": f32[5] = inline("%s")
weight "w2": f32[5, 5] = inline("%s")
weight "g": f32[5] = inline("%s")
weight "beta": f32[5] = inline("%s")
weight "m": f32[5] = inline("%s")
weight "v": f32[5] = inline("%s")
graph forward(%%p_w: f32[5, 6], %%p_b: f32[5], %%p_w2: f32[5, 5], %%p_g: f32[5], %%p_beta: f32[5], %%b_m: f32[5], %%b_v: f32[5], %%x: f32[4, 6]) {
  %%l: f32[4, 5] = aten.linear.default(%%x, %%p_w, %%p_b)
  %%n: f32[4, 5], %%n_1: f32[0], %%n_2: f32[0] = aten.native_batch_norm.default(%%l, %%p_g, %%p_beta, %%b_m, %%b_v, False, 0.1, 1e-05)
  %%r: f32[4, 5] = aten.relu.default(%%n)
  %%l2: f32[4, 5] = aten.linear.default(%%r, %%p_w2)
  %%n2: f32[4, 5], %%n2_1: f32[0], %%n2_2: f32[0] = aten.native_batch_norm.default(%%l2, None, %%p_beta, %%b_m, %%b_v, False, 0.1, 0.001)
  return %%n2
}
`, wF32(30, 5.1, 0.5), wF32(5, 5.2, 0.3), wF32(25, 5.3, 0.5), wF32(5, 5.4, 1.3), wF32(5, 5.5, 0.4), wF32(5, 5.6, 0.2), varF32(5, 5.7))
	got := checkNumeric(t, src, []string{"XNNFullyConnected"}, []string{"aten._native_batch_norm_legit_no_training.default", "aten.addmm.default", "aten.mm.default"})
	if s := fmt.Sprint(got); s != "[XNNFullyConnected XNNFullyConnected]" {
		t.Errorf("delegate nodes %s, want two XNNFullyConnected (relu fused)", s)
	}
}
