package passes

import (
	"fmt"

	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/pm"
)

// PatchAvgPool2d rewrites avg_pool2d as a depthwise convolution for the
// CUDA backend (ET-P05).
var PatchAvgPool2d = pm.RegisterPatch(&pm.Patch{
	ID:      "ET-P05",
	Name:    "avg-pool2d-as-conv",
	Backend: "executorch.cuda",
	Stage:   pm.StageTorchPatches,
	Targets: []string{"torch.nn.functional.avg_pool2d"},
	Doc: `rewrite avg_pool2d as a depthwise conv2d with uniform weights

AOTInductor, which the CUDA backend delegates to, has no c-shim for
avg_pool2d. A batched (N, C, H, W) pool with static C, H and W becomes a
zero pad (padding, plus the extra rows and columns ceil_mode windows reach)
and a depthwise conv2d (groups = C, stride = the pool's) with weights built
in the graph by aten.full. When every window has the same divisor (no
ceil_mode overhang and count_include_pad, or a divisor_override) the
weights are 1/divisor. Otherwise the weights are 1 and the window sums are
divided by the per-window element counts, themselves a conv2d of a ones mask
(the padded input region when count_include_pad, the input alone when not)
padded like the input, so ceil_mode and count_include_pad=False are exact.

Differences from Python: the Python patch ignored ceil_mode and
count_include_pad=False (it clamped the kernel to the padded input); fxport
computes torch's result for every argument combination. Unbatched (C, H, W)
inputs and symbolic sizes are left to the original op.`,
	Rewrite: etRewriteAvgPool2d,
})

func etRewriteAvgPool2d(n *ir.Node, b *ir.Builder, c *pm.Ctx) ([]*ir.Value, error) {
	t, err := ir.ArgTensor(n.Arg("self"), "self")
	out := n.Result().Tensor()
	if err != nil || t.Rank() != 4 || out == nil || !t.DType.IsFloat() {
		return nil, nil
	}
	if !etStaticFrom(t, 1) || !etStaticFrom(out, 2) {
		return nil, nil
	}
	k, ok := etIntTuple(n.Arg("kernel_size"), 2, nil)
	if !ok {
		return nil, nil
	}
	s, ok := etIntTuple(n.Arg("stride"), 2, k)
	if !ok {
		return nil, nil
	}
	pad, ok := etIntTuple(n.Arg("padding"), 2, []int64{0, 0})
	if !ok {
		return nil, nil
	}
	includePad := true
	if a := n.Arg("count_include_pad"); a.Kind == ir.ArgBool {
		includePad = a.Bool()
	}
	var override int64
	if a := n.Arg("divisor_override"); a.Kind == ir.ArgInt {
		override = a.Int
	} else if !a.IsNone() {
		return nil, nil
	}
	res, detail, err := etAvgPool2dAsConv(b, n.Arg("self").Value, etDim(out, 2), etDim(out, 3), k, s, pad, includePad, override)
	if err != nil {
		return nil, err
	}
	if !etSameTypes(n, []*ir.Value{res}) {
		c.Debugf(n, "rewrite gives %s, not %s; left alone", res.Type, n.Result().Type)
		return nil, nil
	}
	c.Fired(n, detail)
	return []*ir.Value{res}, nil
}

// etAvgPool2dAsConv builds avg_pool2d(x, k, s, pad, count_include_pad,
// divisor_override) of a 4-d x with static C, H and W whose pooled output
// is oh × ow (ceil_mode is implied by oh and ow) as a padded depthwise
// conv2d, divided by per-window counts when the divisor varies.
func etAvgPool2dAsConv(b *ir.Builder, x *ir.Value, oh, ow int64, k, s, pad []int64, includePad bool, override int64) (*ir.Value, string, error) {
	t := x.Tensor()
	var err error
	C, H, W := etDim(t, 1), etDim(t, 2), etDim(t, 3)
	// Rows and columns past the padded input that the last windows reach.
	extraH := etMax0((oh-1)*s[0] + k[0] - (H + 2*pad[0]))
	extraW := etMax0((ow-1)*s[1] + k[1] - (W + 2*pad[1]))
	uniform := override != 0 || (extraH == 0 && extraW == 0 && (includePad || pad[0] == 0 && pad[1] == 0))
	padSpec := []int64{pad[1], pad[1] + extraW, pad[0], pad[0] + extraH}
	if padSpec[0]+padSpec[1]+padSpec[2]+padSpec[3] != 0 {
		if x, err = b.Value(etOpConstantPad, ir.ValueArg(x), ir.IntsArg(padSpec...), ir.IntArg(0)); err != nil {
			return nil, "", err
		}
	}
	wv := 1.0
	divisor := k[0] * k[1]
	if override != 0 {
		divisor = override
	}
	if uniform {
		wv = 1 / float64(divisor)
	}
	w, err := etFull(b, []int64{C, 1, k[0], k[1]}, wv, t)
	if err != nil {
		return nil, "", err
	}
	res, err := etConv2d(b, x, w, ir.NoneArg(), s, C)
	if err != nil {
		return nil, "", err
	}
	detail := fmt.Sprintf("depthwise conv, divisor %d", divisor)
	if !uniform {
		// Element counts per window: a conv of the counted region's mask.
		var mask *ir.Value
		var maskPad []int64
		if includePad {
			mask, err = etFull(b, []int64{1, 1, H + 2*pad[0], W + 2*pad[1]}, 1, t)
			maskPad = []int64{0, extraW, 0, extraH}
		} else {
			mask, err = etFull(b, []int64{1, 1, H, W}, 1, t)
			maskPad = padSpec
		}
		if err != nil {
			return nil, "", err
		}
		if maskPad[0]+maskPad[1]+maskPad[2]+maskPad[3] != 0 {
			if mask, err = b.Value(etOpConstantPad, ir.ValueArg(mask), ir.IntsArg(maskPad...), ir.IntArg(0)); err != nil {
				return nil, "", err
			}
		}
		ones, err := etFull(b, []int64{1, 1, k[0], k[1]}, 1, t)
		if err != nil {
			return nil, "", err
		}
		counts, err := etConv2d(b, mask, ones, ir.NoneArg(), s, 1)
		if err != nil {
			return nil, "", err
		}
		if res, err = b.Value(etOpDiv, ir.ValueArg(res), ir.ValueArg(counts)); err != nil {
			return nil, "", err
		}
		detail = "depthwise conv divided by per-window counts"
	}
	return res, detail, nil
}

func etMax0(v int64) int64 {
	if v < 0 {
		return 0
	}
	return v
}

// etDim is dim i of t, which the caller checked is static.
func etDim(t *ir.TensorType, i int) int64 {
	v, _ := t.Shape[i].Const()
	return v
}

// etStaticFrom reports whether the dims of t from index i on are static.
func etStaticFrom(t *ir.TensorType, i int) bool {
	for _, d := range t.Shape[i:] {
		if !d.IsConst() {
			return false
		}
	}
	return true
}
