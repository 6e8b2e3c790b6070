package xnnpack_test

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/fxport/fxport/ir"
	xnnfb "github.com/fxport/fxport/targets/executorch/fb/fb_xnnpack"
	"github.com/fxport/fxport/targets/executorch/pte"
	"github.com/fxport/fxport/targets/executorch/xnnpack"
)

// Dynamically quantized convolutions through the runner: XNNConvert of the
// NHWC fp32 input into an internal qdint8 NHWC value (PerTokenDynamicQuant,
// num_nonbatch_dims 1, as exir writes), an XNNConv2d with a qcint8 OHWI
// filter (channel_dim 0), the fp32 bias and an fp32 NHWC output, within
// the per-tensor vs per-row bound (dynConvCase.tol) of the interpreter.
func TestQD8Conv(t *testing.T) {
	for _, tc := range []struct {
		name string
		c    dynConvCase
	}{{"per-channel", dynConvPC}, {"groups", dynConvGroups}} {
		t.Run(tc.name, func(t *testing.T) {
			c := tc.c
			g := qlower(t, c.src(), c.shape(), c.tol())
			n := nodeOf(t, g, xnnfb.XNodeUnionXNNConv2d).(*xnnfb.XNNNodeConvT)
			nhwc := func(s [4]int) []uint32 { return []uint32{uint32(s[0]), uint32(s[2]), uint32(s[3]), uint32(s[1])} }
			wantDyn(t, g, n.Input1Id, nhwc(c.x))
			cv := nodeOf(t, g, xnnfb.XNodeUnionXNNConvert).(*xnnfb.XNNNode1x1T)
			if d := pte.XNNTensor(g.Xvalues[cv.InputId]).Dims; fmt.Sprint(d) != fmt.Sprint(nhwc(c.x)) {
				t.Errorf("convert reads dims %v, want the NHWC input %v", d, nhwc(c.x))
			}
			var fs []float32
			for _, s := range c.scales {
				fs = append(fs, float32(s))
			}
			fdims := []uint32{uint32(c.w[0]), uint32(c.w[2]), uint32(c.w[3]), uint32(c.w[1])}
			wantQ(t, g, "filter", n.FilterId, xnnfb.XNNDatatypexnn_datatype_qcint8, fdims, 0, fs, 0)
			if c.bias {
				if n.BiasId == math.MaxUint32 {
					t.Fatalf("no bias")
				}
				wantF32(t, g, "bias", n.BiasId)
			} else if n.BiasId != math.MaxUint32 {
				t.Errorf("bias id %d, want none", n.BiasId)
			}
			wantF32(t, g, "output", n.OutputId)
			if d := pte.XNNTensor(g.Xvalues[n.OutputId]).Dims; fmt.Sprint(d) != fmt.Sprint(nhwc(c.y)) {
				t.Errorf("output dims %v, want NHWC %v", d, nhwc(c.y))
			}
			if n.Groups != uint32(c.groups) || n.GroupInputChannels != uint32(c.w[1]) || n.GroupOutputChannels != uint32(c.w[0]/c.groups) {
				t.Errorf("groups %d × [%d → %d], want %d × [%d → %d]", n.Groups, n.GroupInputChannels, n.GroupOutputChannels, c.groups, c.w[1], c.w[0]/c.groups)
			}
		})
	}
}

// What exir's ConvolutionConfig refuses for a dynamic input stays outside
// the delegate: a depthwise convolution, a per-tensor weight, a transposed
// convolution and a per-token input.
func TestQD8ConvRejected(t *testing.T) {
	depthwise := dynConvCase{w: [4]int{3, 1, 3, 3}, groups: 3, x: [4]int{1, 3, 5, 5}, y: [4]int{1, 3, 5, 5},
		stride: [2]int{1, 1}, pad: [2]int{1, 1}, scales: []float64{0.01, 0.02, 0.03}}
	perTensor := strings.Replace(dynConvPC.src(), "quantized_decomposed.dequantize_per_channel.default(%p_w, %p_s, None, 0, -127, 127, torch.int8)",
		"quantized_decomposed.dequantize_per_tensor.default(%p_w, 0.01, 0, -127, 127, torch.int8)", 1)
	transposed := fmt.Sprintf(`input p_w: parameter "w"
input p_s: constant_tensor "s"
input x: user_input
output user_output
weight "w": i8[3, 4, 3, 2] = inline(%q)
weight "s": f32[4] = inline(%q)
graph forward(%%p_w: i8[3, 4, 3, 2], %%p_s: f32[4], %%x: f32[1, 3, 4, 5]) {
  %%s: f64[1], %%z: i64[1] = quantized_decomposed.choose_qparams.tensor(%%x, -128, 127, 1.1920928955078125e-07, torch.int8)
  %%xq: i8[1, 3, 4, 5] = quantized_decomposed.quantize_per_tensor.tensor(%%x, %%s, %%z, -128, 127, torch.int8)
  %%xd: f32[1, 3, 4, 5] = quantized_decomposed.dequantize_per_tensor.tensor(%%xq, %%s, %%z, -128, 127, torch.int8)
  %%wd: f32[3, 4, 3, 2] = quantized_decomposed.dequantize_per_channel.default(%%p_w, %%p_s, None, 1, -127, 127, torch.int8)
  %%y: f32[1, 4, 6, 6] = aten.convolution.default(%%xd, %%wd, None, [1, 1], [0, 0], [1, 1], True, [0, 0], 1)
  return %%y
}
`, hexI8(72), hexF32(0.01, 0.02, 0.03, 0.04))
	perToken := strings.NewReplacer(
		"%s: f64[1], %z: i64[1] = quantized_decomposed.choose_qparams.tensor(%x, -128, 127, 1.1920928955078125e-07, torch.int8)",
		"%s: f64[2, 3, 6, 1], %z: i64[2, 3, 6, 1] = quantized_decomposed.choose_qparams_per_token_asymmetric.default(%x, torch.int8)",
		"quantized_decomposed.quantize_per_tensor.tensor(%x, %s, %z, -128, 127, torch.int8)",
		"quantized_decomposed.quantize_per_token.default(%x, %s, %z, -128, 127, torch.int8)",
		"quantized_decomposed.dequantize_per_tensor.tensor(%xq, %s, %z, -128, 127, torch.int8)",
		"quantized_decomposed.dequantize_per_token.default(%xq, %s, %z, -128, 127, torch.int8, torch.float32)",
	).Replace(dynConvPC.src())
	for _, tc := range []struct{ name, src string }{
		{"depthwise", depthwise.src()}, {"per-tensor-weight", perTensor}, {"transposed", transposed}, {"per-token", perToken},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := ir.Parse([]byte(tc.src), tc.name+".fxir")
			if err != nil {
				t.Fatal(err)
			}
			res, err := xnnpack.Run(p, xnnpack.Options{})
			if err != nil {
				t.Fatal(err)
			}
			for _, n := range p.Main.Nodes() {
				if n.Op == xnnpack.OpCallDelegate {
					for _, m := range n.Args[0].Graph.Nodes() {
						if m.Op.Info().Name == "aten.convolution.default" {
							t.Errorf("convolution delegated (%d partitions):\n%s", len(res.Partitions), ir.Print(p))
						}
					}
				}
			}
		})
	}
}

// Excluding any config of the pattern leaves all of it outside the
// delegate; with nothing excluded the whole pattern is one partition.
func TestQD8ConvExcluded(t *testing.T) {
	for _, cfg := range []string{"", "QuantizedPerTensorConfig", "DeQuantizedPerTensorConfig", "DeQuantizedPerChannelConfig", "ConvolutionConfig"} {
		t.Run(cfg, func(t *testing.T) {
			p, err := ir.Parse([]byte(dynConvPC.src()), "x.fxir")
			if err != nil {
				t.Fatal(err)
			}
			var ex []string
			if cfg != "" {
				ex = []string{cfg}
			}
			res, err := xnnpack.Run(p, xnnpack.Options{Exclude: ex})
			if err != nil {
				t.Fatal(err)
			}
			if cfg == "" {
				if len(res.Partitions) != 1 || res.Partitions[0].Nodes != 5 {
					t.Errorf("partitions %+v, want one of 5 nodes:\n%s", res.Partitions, ir.Print(p))
				}
				return
			}
			if len(res.Partitions) != 0 {
				t.Errorf("%d partitions with %s excluded:\n%s", len(res.Partitions), cfg, ir.Print(p))
			}
		})
	}
}
