package passes

import (
	"fmt"

	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/pm"
)

// PatchAdaptiveAvgPool2d rewrites adaptive_avg_pool2d with static sizes as
// avg_pool2d or as slices, means and cats (ET-P22).
var PatchAdaptiveAvgPool2d = pm.RegisterPatch(&pm.Patch{
	ID:      "ET-P22",
	Name:    "adaptive-avg-pool2d-as-pool",
	Backend: pm.BackendExecuTorch,
	Stage:   pm.StageTorchPatches,
	Targets: []string{"torch.nn.functional.adaptive_avg_pool2d"},
	Doc: `rewrite adaptive_avg_pool2d as avg_pool2d, or as slices, means and cats

ExecuTorch lowers adaptive_avg_pool2d only in special cases. With static
input height and width and a static output size: when each input size is a
multiple of its output size, the pool is avg_pool2d with kernel = stride =
input/output; otherwise each output row is the mean over its adaptive bin
of rows (start floor(i·H/oh), end ceil((i+1)·H/oh)), the rows are
concatenated, and likewise for the columns (a rectangle's mean is the mean
of its equal-length row means, so this is exact). Symbolic sizes are left
to the original op, as in Python.

Under the CUDA backend, where avg-pool2d-as-conv (ET-P05) is installed, the
divisible case is built directly as that patch's depthwise convolution (in
Python the avg_pool2d call went through the ET-P05 patch, active at the
same time), when the channel count is static.`,
	Rewrite: etRewriteAdaptiveAvgPool2d,
})

var (
	etOpAvgPool2d = ir.OpAtenAvgPool2d
	etOpSlice     = ir.OpAtenSliceTensor
	etOpMeanDim   = ir.OpAtenMeanDim
	etOpCat       = ir.OpAtenCat
)

func etRewriteAdaptiveAvgPool2d(n *ir.Node, b *ir.Builder, c *pm.Ctx) ([]*ir.Value, error) {
	x := n.Arg("self")
	t, err := ir.ArgTensor(x, "self")
	if err != nil || (t.Rank() != 3 && t.Rank() != 4) || !t.DType.IsFloat() {
		return nil, nil
	}
	r := t.Rank()
	if !etStaticFrom(t, r-2) {
		return nil, nil
	}
	o, ok := etIntTuple(n.Arg("output_size"), 2, nil)
	if !ok || o[0] < 1 || o[1] < 1 {
		return nil, nil
	}
	H, W := etDim(t, r-2), etDim(t, r-1)
	var res *ir.Value
	var detail string
	if H%o[0] == 0 && W%o[1] == 0 {
		k := []int64{H / o[0], W / o[1]}
		if c.Export().Installed(PatchAvgPool2d.Name) && r == 4 && etStaticFrom(t, 1) {
			res, detail, err = etAvgPool2dAsConv(b, x.Value, o[0], o[1], k, k, []int64{0, 0}, true, 0)
			detail = "avg_pool2d as " + detail
		} else {
			res, err = b.Value(etOpAvgPool2d, x, ir.IntsArg(k...), ir.IntsArg(k...))
			detail = fmt.Sprintf("avg_pool2d kernel %v", k)
		}
	} else {
		var rows *ir.Value
		if rows, err = etAdaptiveBins(b, x.Value, r-2, H, o[0]); err == nil {
			res, err = etAdaptiveBins(b, rows, r-1, W, o[1])
		}
		detail = fmt.Sprintf("%d row and %d column bins", o[0], o[1])
	}
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

// etAdaptiveBins averages the adaptive bins of dim d (size size, out bins)
// and concatenates them along d; a dim whose bins are single elements is
// returned as is.
func etAdaptiveBins(b *ir.Builder, x *ir.Value, d int, size, out int64) (*ir.Value, error) {
	if size == out {
		return x, nil
	}
	parts := make([]*ir.Value, out)
	for i := int64(0); i < out; i++ {
		start := i * size / out
		end := ((i+1)*size + out - 1) / out
		sl, err := b.Value(etOpSlice, ir.ValueArg(x), ir.IntArg(int64(d)), ir.IntArg(start), ir.IntArg(end))
		if err != nil {
			return nil, err
		}
		m, err := b.Value(etOpMeanDim, ir.ValueArg(sl), ir.IntsArg(int64(d)), ir.BoolArg(true))
		if err != nil {
			return nil, err
		}
		parts[i] = m
	}
	if out == 1 {
		return parts[0], nil
	}
	return b.Value(etOpCat, ir.ValuesArg(parts...), ir.IntArg(int64(d)))
}
