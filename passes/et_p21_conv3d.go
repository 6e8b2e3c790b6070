package passes

import (
	"fmt"

	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/ir/sym"
	"github.com/fxport/fxport/pm"
)

// PatchConv3dAsConv2d rewrites conv3d as a sum of conv2d over the kernel
// depth (ET-P21).
var PatchConv3dAsConv2d = pm.RegisterPatch(&pm.Patch{
	ID:      "ET-P21",
	Name:    "conv3d-as-conv2d-sum",
	Backend: pm.BackendExecuTorch,
	Stage:   pm.StageTorchPatches,
	Targets: []string{"torch.nn.functional.conv3d"},
	Doc: `rewrite conv3d as a sum over the kernel depth of conv2d on frame-folded batches

ExecuTorch's backends have no 3-d convolution. For a batched (N, C, D, H, W)
aten.conv3d with static shapes, the input is zero-padded along the depth,
and for every kernel depth index kd the frames kd·dilation, kd·dilation +
stride, … (one per output frame) are sliced, folded into the batch
((N, C, Do, H, W) → (N·Do, C, H, W) through a permute and a contiguous
clone) and convolved in 2-d with the weight's depth slice kd (stride,
padding and dilation of H and W, groups unchanged); the per-kd results are
summed, the bias is added once (on the kd = 0 conv2d) and the batch is
unfolded back to (N, O, Do, Ho, Wo) and made contiguous. Symbolic shapes, unbatched inputs and
the string-padding overload are left to the original op.`,
	Rewrite: etRewriteConv3d,
})

var (
	etOpConv3d  = ir.OpAtenConv3d
	etOpSelect  = ir.OpAtenSelectInt
	etOpPermute = ir.OpAtenPermute
	etOpAddT    = ir.OpAtenAddTensor
)

func etRewriteConv3d(n *ir.Node, b *ir.Builder, c *pm.Ctx) ([]*ir.Value, error) {
	x, w, out := n.Arg("input").Value.Tensor(), n.Arg("weight").Value.Tensor(), n.Result().Tensor()
	if x == nil || w == nil || out == nil || x.Rank() != 5 || w.Rank() != 5 || out.Rank() != 5 {
		return nil, nil
	}
	if !etStaticFrom(x, 0) || !etStaticFrom(w, 0) || !etStaticFrom(out, 0) {
		c.Debugf(n, "symbolic shapes; left alone")
		return nil, nil
	}
	stride, ok1 := etIntTuple(n.Arg("stride"), 3, []int64{1, 1, 1})
	pad, ok2 := etIntTuple(n.Arg("padding"), 3, []int64{0, 0, 0})
	dil, ok3 := etIntTuple(n.Arg("dilation"), 3, []int64{1, 1, 1})
	g := n.Arg("groups")
	if !ok1 || !ok2 || !ok3 || g.Kind != ir.ArgInt {
		return nil, nil
	}
	N, C, H, W := etDim(x, 0), etDim(x, 1), etDim(x, 3), etDim(x, 4)
	kD := etDim(w, 2)
	Do := etDim(out, 2)
	if Do <= 0 || N <= 0 {
		return nil, nil
	}
	xv := n.Arg("input").Value
	var err error
	if pad[0] != 0 {
		if xv, err = b.Value(etOpConstantPad, ir.ValueArg(xv), ir.IntsArg(0, 0, 0, 0, pad[0], pad[0]), ir.IntArg(0)); err != nil {
			return nil, err
		}
	}
	var sum *ir.Value
	for kd := int64(0); kd < kD; kd++ {
		start := kd * dil[0]
		end := start + (Do-1)*stride[0] + 1
		frames, err := b.Value(etOpSlice, ir.ValueArg(xv), ir.IntArg(2), ir.IntArg(start), ir.IntArg(end), ir.IntArg(stride[0]))
		if err != nil {
			return nil, err
		}
		perm, err := b.Value(etOpPermute, ir.ValueArg(frames), ir.IntsArg(0, 2, 1, 3, 4))
		if err != nil {
			return nil, err
		}
		cl, err := b.CallKw(etOpClone, []ir.Arg{ir.ValueArg(perm)}, map[string]ir.Arg{"memory_format": ir.MemoryFormatArg(ir.ContiguousFormat)})
		if err != nil {
			return nil, err
		}
		folded, err := etReshape(b, n, ir.ValueArg(cl.Result()), []sym.Expr{sym.Const(N * Do), sym.Const(C), sym.Const(H), sym.Const(W)})
		if err != nil {
			return nil, err
		}
		wk, err := b.Value(etOpSelect, n.Arg("weight"), ir.IntArg(2), ir.IntArg(kd))
		if err != nil {
			return nil, err
		}
		bias := ir.NoneArg()
		if kd == 0 {
			bias = n.Arg("bias")
		}
		y, err := b.Value(etOpConv2d, ir.ValueArg(folded), ir.ValueArg(wk), bias,
			ir.IntsArg(stride[1:]...), ir.IntsArg(pad[1:]...), ir.IntsArg(dil[1:]...), g)
		if err != nil {
			return nil, err
		}
		if sum == nil {
			sum = y
		} else if sum, err = b.Value(etOpAddT, ir.ValueArg(sum), ir.ValueArg(y)); err != nil {
			return nil, err
		}
	}
	yt := sum.Tensor()
	unfolded, err := etReshape(b, n, ir.ValueArg(sum), []sym.Expr{sym.Const(N), sym.Const(Do), yt.Shape[1], yt.Shape[2], yt.Shape[3]})
	if err != nil {
		return nil, err
	}
	perm, err := b.Value(etOpPermute, ir.ValueArg(unfolded), ir.IntsArg(0, 2, 1, 3, 4))
	if err != nil {
		return nil, err
	}
	cl, err := b.CallKw(etOpClone, []ir.Arg{ir.ValueArg(perm)}, map[string]ir.Arg{"memory_format": ir.MemoryFormatArg(ir.ContiguousFormat)})
	if err != nil {
		return nil, err
	}
	res := cl.Result()
	if !etSameTypes(n, []*ir.Value{res}) {
		c.Debugf(n, "rewrite gives %s, not %s; left alone", res.Type, n.Result().Type)
		return nil, nil
	}
	c.Fired(n, fmt.Sprintf("%d conv2d over kernel depth, %d output frames", kD, Do))
	return []*ir.Value{res}, nil
}
