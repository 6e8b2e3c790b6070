package passes

import (
	"github.com/fxport/fxport/ir"
)

// etCountBelow counts, along the last dim of the broadcast comparison,
// the boundaries b with b < x (right=false) or b <= x (right=true): the
// insertion index of x among sorted boundaries. bounds and xs must already
// broadcast against each other with the boundaries on the last dim.
func etCountBelow(b *ir.Builder, bounds, xs *ir.Value, right bool, dt ir.DType) (*ir.Value, error) {
	op := etOpLtTensor
	if right {
		op = etOpLeTensor
	}
	cmp, err := b.Value(op, ir.ValueArg(bounds), ir.ValueArg(xs))
	if err != nil {
		return nil, err
	}
	n, err := b.CallKw(etOpSumDim, []ir.Arg{ir.ValueArg(cmp), ir.IntsArg(-1)}, map[string]ir.Arg{"dtype": ir.DTypeArg(dt)})
	if err != nil {
		return nil, err
	}
	return n.Result(), nil
}

// etIndexDType is int32 when out_int32 is set, else int64.
func etIndexDType(n *ir.Node) ir.DType {
	if a := n.Arg("out_int32"); a.Kind == ir.ArgBool && a.Bool() {
		return ir.Int32
	}
	return ir.Int64
}
