package xnnpack_test

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/fxport/fxport/interp"
	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/targets/executorch/xnnpack"
)

// wF32 is the hex of n deterministic float32 weights of magnitude ≤ scale.
func wF32(n int, seed, scale float64) string {
	v := make([]float64, n)
	for i := range v {
		v[i] = math.Sin(float64(i)*0.73+seed) * scale
	}
	return hexF32(v...)
}

// varF32 is the hex of n positive running variances.
func varF32(n int, seed float64) string {
	v := make([]float64, n)
	for i := range v {
		v[i] = 0.5 + math.Abs(math.Sin(float64(i)*1.3+seed))
	}
	return hexF32(v...)
}

// layoutCase checks one program numerically (checkNumeric: IR →
// executorch.xnnpack → .pte → run, against the interpreter on the
// unlowered IR) and its structure: the number of XNNStaticTranspose
// nodes, of delegate calls, and that no batch norm is left outside a
// delegate.
func layoutCase(t *testing.T, src string, transposes, delegates int, kinds []string) {
	t.Helper()
	got := checkNumeric(t, src, kinds, []string{"aten._native_batch_norm_legit_no_training.default", "aten.native_batch_norm.default"})
	n := 0
	for _, k := range got {
		if k == "XNNStaticTranspose" {
			n++
		}
	}
	if n != transposes {
		t.Errorf("%d XNNStaticTranspose nodes, want %d: %v", n, transposes, got)
	}
	p, err := ir.Parse([]byte(src), "layout.fxir")
	if err != nil {
		t.Fatal(err)
	}
	lower(t, p, "")
	calls := 0
	for _, nd := range p.Main.Nodes() {
		if nd.Op == xnnpack.OpCallDelegate {
			calls++
		}
	}
	if calls != delegates {
		t.Errorf("%d delegate calls, want %d:\n%s", calls, delegates, ir.Print(p))
	}
}

// A residual block as torchvision's BasicBlock writes it: conv → BN →
// relu → conv → BN → add(identity) → relu, then a 1×1 conv. The batch
// norms fold into the convolutions and the add and relus stay in NHWC:
// one transpose in, one out, one delegate.
func TestNHWCResidualBlock(t *testing.T) {
	layoutCase(t, residualSrc(), 2, 1, []string{"XNNConv2d", "XNNAdd"})
}

func residualSrc() string {
	return fmt.Sprintf(`input p_w0: parameter "w0"
input p_w1: parameter "w1"
input p_g1: parameter "g1"
input p_b1: parameter "b1"
input p_w2: parameter "w2"
input p_g2: parameter "g2"
input p_b2: parameter "b2"
input p_w3: parameter "w3"
input b_m1: buffer "m1" persistent
input b_v1: buffer "v1" persistent
input b_m2: buffer "m2" persistent
input b_v2: buffer "v2" persistent
input x: user_input
output user_output
weight "w0": f32[4, 3, 3, 3] = inline("%s")
weight "w1": f32[4, 4, 3, 3] = inline("%s")
weight "g1": f32[4] = inline("%s")
weight "b1": f32[4] = inline("%s")
weight "w2": f32[4, 4, 3, 3] = inline("%s")
weight "g2": f32[4] = inline("%s")
weight "b2": f32[4] = inline("%s")
weight "w3": f32[2, 4, 1, 1] = inline("%s")
weight "m1": f32[4] = inline("%s")
weight "v1": f32[4] = inline("%s")
weight "m2": f32[4] = inline("%s")
weight "v2": f32[4] = inline("%s")
graph forward(%%p_w0: f32[4, 3, 3, 3], %%p_w1: f32[4, 4, 3, 3], %%p_g1: f32[4], %%p_b1: f32[4], %%p_w2: f32[4, 4, 3, 3], %%p_g2: f32[4], %%p_b2: f32[4], %%p_w3: f32[2, 4, 1, 1], %%b_m1: f32[4], %%b_v1: f32[4], %%b_m2: f32[4], %%b_v2: f32[4], %%x: f32[1, 3, 6, 6]) {
  %%c0: f32[1, 4, 6, 6] = aten.convolution.default(%%x, %%p_w0, None, [1, 1], [1, 1], [1, 1], False, [0, 0], 1)
  %%r0: f32[1, 4, 6, 6] = aten.relu.default(%%c0)
  %%c1: f32[1, 4, 6, 6] = aten.convolution.default(%%r0, %%p_w1, None, [1, 1], [1, 1], [1, 1], False, [0, 0], 1)
  %%n1: f32[1, 4, 6, 6], %%n1_1: f32[0], %%n1_2: f32[0] = aten.native_batch_norm.default(%%c1, %%p_g1, %%p_b1, %%b_m1, %%b_v1, False, 0.1, 1e-05)
  %%r1: f32[1, 4, 6, 6] = aten.relu.default(%%n1)
  %%c2: f32[1, 4, 6, 6] = aten.convolution.default(%%r1, %%p_w2, None, [1, 1], [1, 1], [1, 1], False, [0, 0], 1)
  %%n2: f32[1, 4, 6, 6], %%n2_1: f32[0], %%n2_2: f32[0] = aten.native_batch_norm.default(%%c2, %%p_g2, %%p_b2, %%b_m2, %%b_v2, False, 0.1, 1e-05)
  %%a: f32[1, 4, 6, 6] = aten.add.Tensor(%%n2, %%r0)
  %%r2: f32[1, 4, 6, 6] = aten.relu.default(%%a)
  %%c3: f32[1, 2, 6, 6] = aten.convolution.default(%%r2, %%p_w3, None, [1, 1], [0, 0], [1, 1], False, [0, 0], 1)
  return %%c3
}
`, wF32(108, 0.1, 0.4), wF32(144, 0.2, 0.3), wF32(4, 0.3, 1.2), wF32(4, 0.4, 0.5), wF32(144, 0.5, 0.3),
		wF32(4, 0.6, 1.1), wF32(4, 0.7, 0.5), wF32(8, 0.8, 0.6), wF32(4, 0.9, 0.3), varF32(4, 1), wF32(4, 1.1, 0.3), varF32(4, 1.2))
}

// A squeeze-and-excitation block (MobileNetV3 / EfficientNet): the
// channel scales, mean over H and W → 1×1 convs → tanh / sigmoid,
// multiply the feature map with broadcasting, all in NHWC. The only
// conversions are the input's transpose and the output's.
func TestNHWCSqueezeExcite(t *testing.T) {
	layoutCase(t, seSrc(), 2, 1, []string{"XNNGlobalAvgPooling2d", "XNNTanh", "XNNSigmoid", "XNNMultiply", "XNNSubtract"})
}

func seSrc() string {
	return fmt.Sprintf(`input p_w0: parameter "w0"
input p_b0: parameter "b0"
input p_w1: parameter "w1"
input p_w2: parameter "w2"
input x: user_input
output user_output
weight "w0": f32[4, 3, 3, 3] = inline("%s")
weight "b0": f32[4] = inline("%s")
weight "w1": f32[2, 4, 1, 1] = inline("%s")
weight "w2": f32[4, 2, 1, 1] = inline("%s")
graph forward(%%p_w0: f32[4, 3, 3, 3], %%p_b0: f32[4], %%p_w1: f32[2, 4, 1, 1], %%p_w2: f32[4, 2, 1, 1], %%x: f32[1, 3, 5, 5]) {
  %%c0: f32[1, 4, 5, 5] = aten.convolution.default(%%x, %%p_w0, %%p_b0, [1, 1], [1, 1], [1, 1], False, [0, 0], 1)
  %%h: f32[1, 4, 5, 5] = aten.tanh.default(%%c0)
  %%m: f32[1, 4, 1, 1] = aten.mean.dim(%%h, [-1, -2], True)
  %%c1: f32[1, 2, 1, 1] = aten.convolution.default(%%m, %%p_w1, None, [1, 1], [0, 0], [1, 1], False, [0, 0], 1)
  %%r1: f32[1, 2, 1, 1] = aten.relu.default(%%c1)
  %%c2: f32[1, 4, 1, 1] = aten.convolution.default(%%r1, %%p_w2, None, [1, 1], [0, 0], [1, 1], False, [0, 0], 1)
  %%s: f32[1, 4, 1, 1] = aten.sigmoid.default(%%c2)
  %%y: f32[1, 4, 5, 5] = aten.mul.Tensor(%%h, %%s)
  %%z: f32[1, 4, 5, 5] = aten.sub.Tensor(%%y, %%c0)
  return %%z
}
`, wF32(108, 1.1, 0.4), wF32(4, 1.2, 0.2), wF32(8, 1.3, 0.7), wF32(8, 1.4, 0.7))
}

// The choice is by count: an add of a convolution's output and another
// NCHW input whose result leaves the delegate computes in NCHW (one
// conversion of the conv output) rather than in NHWC as exir's rule
// would (the other input's and the result's: two). A baked constant
// operand of an NHWC op (here a convolution weight, also multiplied into
// the feature map) is permuted at serialization, not at run time.
func TestNHWCChoosesFewestConversions(t *testing.T) {
	src := fmt.Sprintf(`input p_w: parameter "w"
input x: user_input
input y: user_input
output user_output
output user_output
weight "w": f32[2, 2, 3, 3] = inline("%s")
graph forward(%%p_w: f32[2, 2, 3, 3], %%x: f32[1, 2, 3, 3], %%y: f32[1, 2, 3, 3]) {
  %%c: f32[1, 2, 3, 3] = aten.convolution.default(%%x, %%p_w, None, [1, 1], [1, 1], [1, 1], False, [0, 0], 1)
  %%a: f32[1, 2, 3, 3] = aten.add.Tensor(%%c, %%y)
  %%k: f32[2, 2, 3, 3] = aten.mul.Tensor(%%c, %%p_w)
  %%f: f32[2, 2, 3, 3] = aten.convolution.default(%%k, %%p_w, None, [1, 1], [1, 1], [1, 1], False, [0, 0], 1)
  return %%a, %%f
}
`, wF32(36, 2.1, 0.3))
	// Transposes: x → NHWC, c → NCHW for the add, f → NCHW for the
	// output; the mul stays NHWC with its constant permuted.
	layoutCase(t, src, 3, 1, []string{"XNNAdd", "XNNMultiply"})
	got := checkNumeric(t, src, nil, nil)
	want := "XNNStaticTranspose XNNConv2d XNNStaticTranspose XNNAdd XNNMultiply XNNConv2d XNNStaticTranspose"
	if s := strings.Join(got, " "); s != want {
		t.Errorf("nodes %s, want %s", s, want)
	}
}

// Global average pooling's NHWC result [N, 1, 1, C] holds its elements in
// NCHW order already: the view that flattens it reads it through a
// reshape, not a transpose.
func TestNHWCLayoutReshape(t *testing.T) {
	src := fmt.Sprintf(`input p_w: parameter "w"
input x: user_input
output user_output
weight "w": f32[3, 2, 3, 3] = inline("%s")
graph forward(%%p_w: f32[3, 2, 3, 3], %%x: f32[2, 2, 4, 4]) {
  %%c: f32[2, 3, 4, 4] = aten.convolution.default(%%x, %%p_w, None, [1, 1], [1, 1], [1, 1], False, [0, 0], 1)
  %%m: f32[2, 3, 1, 1] = aten.mean.dim(%%c, [2, 3], True)
  %%v: f32[2, 3] = aten.view_copy.default(%%m, [2, 3])
  %%e: f32[2, 3] = aten.exp.default(%%v)
  return %%e
}
`, wF32(54, 3.1, 0.5))
	got := checkNumeric(t, src, []string{"XNNGlobalAvgPooling2d", "XNNExp"}, nil)
	want := "XNNStaticTranspose XNNConv2d XNNGlobalAvgPooling2d XNNStaticReshape XNNStaticReshape XNNExp"
	if s := strings.Join(got, " "); s != want {
		t.Errorf("nodes %s, want %s", s, want)
	}
}

// Each config the two blocks use excluded in turn: the partitions split
// around the portable ops, the layout plan changes with them, and the
// .pte still computes what the interpreter does on the unlowered IR.
func TestNHWCExcludeEachConfig(t *testing.T) {
	for _, q := range []qprog{
		{"residual", residualSrc(), []int64{1, 3, 6, 6}, 1e-4},
		{"squeeze-excite", seSrc(), []int64{1, 3, 5, 5}, 1e-4},
	} {
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
			if len(used) < 3 {
				t.Fatalf("only configs %v used", used)
			}
			for _, cfg := range xnnpack.Configs() {
				if used[cfg] {
					t.Run(cfg, func(t *testing.T) { exportExcluded(t, q, cfg, want) })
				}
			}
		})
	}
}
