package passes

import (
	"github.com/fxport/fxport/ir"
)

// Helpers shared by the ExecuTorch pooling and convolution legalizations
// (ET-P05, ET-P21, ET-P22).

var (
	etOpFull   = ir.OpAtenFull
	etOpConv2d = ir.OpAtenConv2d
	etOpDiv    = ir.OpAtenDivTensor
)

// etIntTuple reads an int[n] argument: a list of n ints, one int repeated
// (a one-element list or a literal), or def when the list is empty or the
// argument is None. ok is false for anything else (SymInts included).
func etIntTuple(a ir.Arg, n int, def []int64) ([]int64, bool) {
	switch a.Kind {
	case ir.ArgNone:
		return def, def != nil
	case ir.ArgInt:
		out := make([]int64, n)
		for i := range out {
			out[i] = a.Int
		}
		return out, true
	case ir.ArgList:
		if len(a.List) == 0 {
			return def, def != nil
		}
		if len(a.List) != 1 && len(a.List) != n {
			return nil, false
		}
		out := make([]int64, n)
		for i := range out {
			e := a.List[0]
			if len(a.List) == n {
				e = a.List[i]
			}
			if e.Kind != ir.ArgInt {
				return nil, false
			}
			out[i] = e.Int
		}
		return out, true
	}
	return nil, false
}

// etFull builds full(shape, value, dtype=dt[, device]) for a tensor like t.
func etFull(b *ir.Builder, shape []int64, value float64, t *ir.TensorType) (*ir.Value, error) {
	kw := map[string]ir.Arg{"dtype": ir.DTypeArg(t.DType)}
	if t.Device != "" {
		kw["device"] = ir.DeviceArg(t.Device)
	}
	n, err := b.CallKw(etOpFull, []ir.Arg{ir.IntsArg(shape...), ir.FloatArg(value)}, kw)
	if err != nil {
		return nil, err
	}
	return n.Result(), nil
}

// etConv2d builds conv2d(x, w, bias, stride, padding=0, dilation=1, groups).
func etConv2d(b *ir.Builder, x, w *ir.Value, bias ir.Arg, stride []int64, groups int64) (*ir.Value, error) {
	if bias.Kind == 0 {
		bias = ir.NoneArg()
	}
	return b.Value(etOpConv2d, ir.ValueArg(x), ir.ValueArg(w), bias, ir.IntsArg(stride...), ir.IntsArg(0, 0), ir.IntsArg(1, 1), ir.IntArg(groups))
}
