package xnnpack_test

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/fxport/fxport/ir"
	xnnfb "github.com/fxport/fxport/targets/executorch/fb/fb_xnnpack"
)

// Quantized transposed convolutions through the runner: a qint8
// XNNConvTranspose2d on NHWC qint8 values with the fp32 path's filter
// layout [groups·O, kh, kw, I], qint8 per tensor or qcint8 along dim 0,
// the bias int32 with scales s_x·s_w[c], and the stride, padding and
// adjustment of the op.
func TestQS8Deconv(t *testing.T) {
	for _, tc := range []struct {
		name  string
		c     deconvCase
		fdims []uint32
	}{
		{"per-tensor", deconvPT, []uint32{4, 3, 2, 3}},
		{"per-channel", deconvPC, []uint32{4, 3, 2, 3}},
		{"groups", deconvGroups, []uint32{4, 3, 3, 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := tc.c
			g := qlower(t, c.src(), c.shape(), 0.02)
			n := nodeOf(t, g, xnnfb.XNodeUnionXNNConvTranspose2d).(*xnnfb.XNNNodeConvT)
			for _, k := range []xnnfb.XNodeUnion{xnnfb.XNodeUnionXNNConv2d, xnnfb.XNodeUnionXNNDepthwiseConv2d} {
				for _, x := range g.Xnodes {
					if x.XnodeUnion.Type == k {
						t.Errorf("unexpected %s node", k)
					}
				}
			}
			var fs, bs []float32
			dt, bdt := xnnfb.XNNDatatypexnn_datatype_qint8, xnnfb.XNNDatatypexnn_datatype_qint32
			if c.scales != nil {
				dt, bdt = xnnfb.XNNDatatypexnn_datatype_qcint8, xnnfb.XNNDatatypexnn_datatype_qcint32
				for _, s := range c.scales {
					fs = append(fs, float32(s))
					bs = append(bs, float32(0.01)*float32(s))
				}
			}
			wantQ(t, g, "filter", n.FilterId, dt, tc.fdims, 0.008, fs, 0)
			oc := uint32(c.groups * c.w[1])
			if c.bias {
				wantQ(t, g, "bias", n.BiasId, bdt, []uint32{oc}, float32(0.01)*float32(0.008), bs, 0)
			} else if n.BiasId != math.MaxUint32 {
				t.Errorf("bias id %d, want none", n.BiasId)
			}
			nhwc := func(s [4]int) []uint32 { return []uint32{uint32(s[0]), uint32(s[2]), uint32(s[3]), uint32(s[1])} }
			wantQ(t, g, "input", n.Input1Id, xnnfb.XNNDatatypexnn_datatype_qint8, nhwc(c.x), 0.01, nil, 0)
			wantQ(t, g, "output", n.OutputId, xnnfb.XNNDatatypexnn_datatype_qint8, nhwc(c.y), 0.02, nil, 0)
			gi := uint32(c.w[0] / c.groups)
			want := fmt.Sprint(uint32(c.groups), gi, uint32(c.w[1]), uint32(c.stride[0]), uint32(c.stride[1]),
				uint32(c.pad[0]), uint32(c.pad[1]), uint32(c.outPad[0]), uint32(c.outPad[1]))
			got := fmt.Sprint(n.Groups, n.GroupInputChannels, n.GroupOutputChannels, n.SubsamplingHeight, n.SubsamplingWidth,
				n.PaddingTop, n.PaddingLeft, n.AdjustmentHeight, n.AdjustmentWidth)
			if got != want {
				t.Errorf("groups, channels, stride, padding, adjustment %s, want %s", got, want)
			}
		})
	}
}

// A per-channel transposed weight quantized along its input channels
// (axis 0), or per channel with groups > 1, stays portable, as exir's
// ConvolutionConfig refuses it.
func TestQS8DeconvRejected(t *testing.T) {
	axis0 := deconvPC
	axis0.axis, axis0.w, axis0.x = 0, [4]int{4, 4, 3, 2}, [4]int{2, 4, 4, 5}
	grouped := deconvGroups
	grouped.scales, grouped.axis = []float64{0.004, 0.01}, 1
	for _, tc := range []struct {
		name string
		c    deconvCase
	}{{"axis0", axis0}, {"grouped", grouped}} {
		name, c := tc.name, tc.c
		t.Run(name, func(t *testing.T) {
			p, err := ir.Parse([]byte(c.src()), name+".fxir")
			if err != nil {
				t.Fatal(err)
			}
			lower(t, p, "")
			portable := false
			for _, n := range p.Main.Nodes() { // the top level, not a delegate's region
				portable = portable || strings.HasPrefix(n.Op.Info().Name, "aten.convolution")
			}
			if !portable {
				t.Errorf("transposed convolution with a %s weight was delegated:\n%s", name, ir.Print(p))
			}
		})
	}
}
