package passes

import (
	"fmt"

	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/pm"
)

// FixConvInputDimOrder copies transposed convolution inputs into the default
// dim order (ET-NF08).
var FixConvInputDimOrder = pm.RegisterNodeFix(&pm.NodeFix{
	ID:      "ET-NF08",
	Name:    "fix-conv-input-dim-order",
	Backend: pm.BackendExecuTorch,
	Targets: []ir.Op{
		ir.OpAtenConvolution, ir.OpAtenConv1d, ir.OpAtenConv2d, ir.OpAtenConv3d,
		ir.OpAtenConv1dPadding, ir.OpAtenConv2dPadding, ir.OpAtenConv3dPadding,
	},
	Doc: `copy a convolution input with a transposed dim order into the default order

ExecuTorch's convolution kernels accept their input in the default dim order
or channels-last (rank 4: 0,2,3,1; rank 5: 0,2,3,4,1), not in an arbitrary
permutation such as a transposed spatial pair. Such an input gets a
dim_order_ops._to_dim_order_copy(dim_order=[0, 1, …]) in front of the
convolution; inputs already in a supported order are left alone.`,
	Fix: fixConvInputDimOrder,
})

var etOpToDimOrderCopy = ir.OpDimOrderOps_ToDimOrderCopy

func fixConvInputDimOrder(n *ir.Node, c *pm.Ctx) (bool, error) {
	in := n.Arg("input")
	t, err := ir.ArgTensor(in, "input")
	if err != nil || t.IsContiguous() || etIsChannelsLast(t.DimOrder) {
		return false, nil
	}
	order := make([]int64, t.Rank())
	for i := range order {
		order[i] = int64(i)
	}
	b := ir.NewBuilder(n.Graph)
	b.SetInsertBefore(n)
	b.Pass = "fix-conv-input-dim-order"
	meta := n.Meta.Clone()
	b.Meta = &meta
	cp, err := b.CallKw(etOpToDimOrderCopy, []ir.Arg{in}, map[string]ir.Arg{"dim_order": ir.IntsArg(order...)})
	if err != nil {
		return false, err
	}
	if !cp.Result().Tensor().IsContiguous() {
		return false, fmt.Errorf("%s: _to_dim_order_copy did not give the default dim order", n.Short())
	}
	n.SetNamedArg("input", ir.ValueArg(cp.Result()))
	n.AddProvenance("fix-conv-input-dim-order")
	c.Fired(n, fmt.Sprintf("input dim order %v copied to the default order", t.DimOrder))
	return true, nil
}

// etIsChannelsLast reports whether order is channels-last for its rank
// (0, 2, …, rank-1, 1), for ranks 4 and 5.
func etIsChannelsLast(order []int) bool {
	r := len(order)
	if r != 4 && r != 5 {
		return false
	}
	if order[0] != 0 || order[r-1] != 1 {
		return false
	}
	for i := 1; i < r-1; i++ {
		if order[i] != i+1 {
			return false
		}
	}
	return true
}
