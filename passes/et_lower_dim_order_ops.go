package passes

import (
	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/pm"
)

// ToDimOrderOps turns memory-format ops into ExecuTorch's dim-order ops
// (MemoryFormatOpsPass; ET-L02 invariant).
var ToDimOrderOps = etlLowering(&pm.Pass{
	Name: etlDimOrderName,
	ID:   "ET-L02",
	Doc: `turn _to_copy and clone into dim_order_ops with an explicit dim_order

aten._to_copy becomes dim_order_ops._to_dim_order_copy and aten.clone
becomes dim_order_ops._clone_dim_order. The memory_format argument is
replaced by the dim order of the result type (contiguous: 0, 1, …, rank-1;
channels_last: 0, 2, 3, 1; preserve_format: the input's), always written
out, so the emitter never has to guess a layout. Dtype, layout, device,
pin_memory and non_blocking carry over unchanged.

Invariant (ET-L02): neither op takes a size argument, so symbolic sizes
stay symbolic; fxport never builds _empty_dim_order, whose int[] size would
freeze a symbolic buffer at its hint, for a tensor with a symbolic dim.
Size-one dims are canonicalized in every dim order this pass writes (ET-P40,
see etCanonicalDimOrder).`,
	Run: runToDimOrderOps,
})

const etlDimOrderName = "to-dim-order-ops"

var (
	etlOpToCopy         = ir.OpAten_ToCopy
	etlOpClone          = ir.OpAtenClone
	etlOpToDimOrderCopy = ir.OpDimOrderOps_ToDimOrderCopy
	etlOpCloneDimOrder  = ir.OpDimOrderOps_CloneDimOrder
)

func runToDimOrderOps(p *ir.Program, c *pm.Ctx) (pm.Result, error) {
	changed := false
	err := etlEachNode(p, func(n *ir.Node) error {
		if n.Op != etlOpToCopy && n.Op != etlOpClone {
			return nil
		}
		rt := n.Result().Tensor()
		if rt == nil {
			return n.Errorf("%s: result is not a tensor", etlDimOrderName)
		}
		order := EtCanonicalDimOrder(rt)
		ints := make([]int64, len(order))
		for i, d := range order {
			ints[i] = int64(d)
		}
		kw := etlNamedArgs(n)
		delete(kw, "memory_format")
		kw["dim_order"] = ir.IntsArg(ints...)
		op := etlOpToDimOrderCopy
		if n.Op == etlOpClone {
			op = etlOpCloneDimOrder
		}
		from := n.Op.String()
		nn, err := etlRebuild(n, op, kw, etlDimOrderName)
		if err != nil {
			return err
		}
		c.Fired(nn, from+" → "+op.String())
		changed = true
		return nil
	})
	return pm.Result{Changed: changed}, err
}

// EtCanonicalDimOrder is t's dim order with size-one dims canonicalized
// (ET-P40): a dim of static size 1 has no stride that matters, so the dim
// orders that differ only in where size-one dims sit describe the same
// memory; the canonical one keeps the other dims in their order and puts
// each size-one dim at the place the contiguous order would (its own index
// among the dims), so e.g. {0,2,3,1} of f32[1,1,4,4] is {0,1,2,3}. A nil
// dim order is the contiguous one.
func EtCanonicalDimOrder(t *ir.TensorType) []int {
	r := t.Rank()
	order := t.DimOrder
	if order == nil {
		order = make([]int, r)
		for i := range order {
			order[i] = i
		}
	}
	isOne := func(d int) bool { v, ok := t.Shape[d].Const(); return ok && v == 1 }
	var rest []int
	for _, d := range order {
		if !isOne(d) {
			rest = append(rest, d)
		}
	}
	out := make([]int, 0, r)
	k := 0
	for i := 0; i < r; i++ {
		if isOne(i) {
			out = append(out, i)
			continue
		}
		out = append(out, rest[k])
		k++
	}
	return out
}
