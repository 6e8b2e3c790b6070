package passes

import (
	"math"

	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/rewrite"
)

// scatter_reduce.two and col2im in ops with portable kernels
// (legalize-kernels, ET-L01): the portable library has scatter_add,
// gather, eq, where, amax, amin, prod.dim_int, arange and slice_scatter
// but neither op.

var (
	etlOpScatterAdd   = ir.OpAtenScatterAdd
	etlOpSliceScatter = ir.OpAtenSliceScatter
	etlOpUnsqueeze    = ir.OpAtenUnsqueezeCopy
	etlOpArangeStep   = ir.OpAtenArangeStartStep
	etlOpExpandCopy   = ir.OpAtenExpandCopy
)

func init() {
	etDecompositions = append(etDecompositions,
		etDecomp("scatter-reduce", ir.OpAtenScatterReduceTwo, etlScatterReduce),
		etDecomp("col2im", ir.OpAtenCol2im, etlCol2im),
	)
	etDecompositionSet = rewrite.MustSet(etDecompositions...)
}

// etlOneHotLimit bounds the one-hot mask of an amax, amin or prod
// scatter_reduce (elements): above it the op is refused rather than built
// as a quadratic tensor.
const etlOneHotLimit = 1 << 24

// etlConstShape is t's shape when every dim is static.
func etlConstShape(t *ir.TensorType) ([]int64, bool) {
	if t == nil || !etStaticFrom(t, 0) {
		return nil, false
	}
	out := make([]int64, t.Rank())
	for i := range out {
		out[i] = etDim(t, i)
	}
	return out, true
}

// etlSliceTo slices v along every dim listed in dims to its first want[d]
// elements (slice_copy), recording the intermediate values so that
// etlUnslice can write a result of the sliced shape back.
func etlSliceTo(b *ir.Builder, v *ir.Value, have, want []int64, skip int) (*ir.Value, []*ir.Value, []int, error) {
	var chain []*ir.Value
	var dims []int
	for d := range have {
		if d == skip || want[d] >= have[d] {
			continue
		}
		chain = append(chain, v)
		dims = append(dims, d)
		var err error
		if v, err = b.Value(etlOpSliceCopy, ir.ValueArg(v), ir.IntArg(int64(d)), ir.IntArg(0), ir.IntArg(want[d]), ir.IntArg(1)); err != nil {
			return nil, nil, nil, err
		}
	}
	return v, chain, dims, nil
}

// etlUnslice writes r (of the innermost sliced shape) back through the
// slices etlSliceTo recorded (slice_scatter, innermost first).
func etlUnslice(b *ir.Builder, r *ir.Value, chain []*ir.Value, dims []int, want []int64) (*ir.Value, error) {
	for i := len(chain) - 1; i >= 0; i-- {
		var err error
		d := dims[i]
		if r, err = b.Value(etlOpSliceScatter, ir.ValueArg(chain[i]), ir.ValueArg(r), ir.IntArg(int64(d)), ir.IntArg(0), ir.IntArg(want[d]), ir.IntArg(1)); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// etlFullOf builds full(shape, v, dtype=dt), v an int for integer dtypes.
func etlFullOf(b *ir.Builder, shape []int64, v int64, dt ir.DType) (*ir.Value, error) {
	fill := ir.IntArg(v)
	if dt.IsFloat() {
		fill = ir.FloatArg(float64(v))
	}
	return etlFullArg(b, shape, fill, dt)
}

// etlFullArg builds full(shape, fill, dtype=dt).
func etlFullArg(b *ir.Builder, shape []int64, fill ir.Arg, dt ir.DType) (*ir.Value, error) {
	n, err := b.CallKw(etOpFull, []ir.Arg{ir.IntsArg(shape...), fill}, map[string]ir.Arg{"dtype": ir.DTypeArg(dt)})
	if err != nil {
		return nil, err
	}
	return n.Result(), nil
}

// etlReduceIdentity is the identity of an amax, amin or prod reduction
// over dt, as a literal of dt's kind (ok false for a dtype without one
// here).
func etlReduceIdentity(reduce string, dt ir.DType) (ir.Arg, bool) {
	if reduce == "prod" {
		if dt.IsFloat() {
			return ir.FloatArg(1), true
		}
		return ir.IntArg(1), dt.IsInteger()
	}
	if dt.IsFloat() {
		if reduce == "amax" {
			return ir.FloatArg(math.Inf(-1)), true
		}
		return ir.FloatArg(math.Inf(1)), true
	}
	var lo, hi int64
	switch dt {
	case ir.Int64:
		lo, hi = math.MinInt64, math.MaxInt64
	case ir.Int32:
		lo, hi = math.MinInt32, math.MaxInt32
	case ir.Int16:
		lo, hi = math.MinInt16, math.MaxInt16
	case ir.Int8:
		lo, hi = math.MinInt8, math.MaxInt8
	case ir.Uint8:
		lo, hi = 0, math.MaxUint8
	default:
		return ir.Arg{}, false
	}
	if reduce == "amax" {
		return ir.IntArg(lo), true
	}
	return ir.IntArg(hi), true
}

// scatter_reduce.two(self, dim, index, src, reduce, include_self), static
// shapes. src is first cut to index's shape (torch reads only that part).
//
// sum and mean, linear in the sizes: count = scatter_add(zeros, dim,
// index, ones) is the number of elements each position receives; without
// include_self the positions that receive any are zeroed first
// (masked_fill); the sum is scatter_add(self or the zeroed self, dim,
// index, src); mean divides it by count (+1 with include_self, at least 1
// without; floor division for integers), as torch does.
//
// amax, amin and prod, through a one-hot mask: with S = self.size(dim),
// mask = eq(unsqueeze(index, dim), arange(S) along a new axis dim) has
// index's shape with an S-long axis inserted before dim; the src values
// where the mask holds (the reduction's identity elsewhere: ∓inf or the
// integer bounds, 1 for prod) are reduced over the index axis (amax, amin,
// prod.dim_int), giving the reduction for every output position; with
// include_self it is combined with self (maximum, minimum, mul), without
// it replaces self where any(mask) holds. Cost: time and memory
// numel(index)·S (the sweep's case: 12·5); a mask above 2^24 elements is
// refused. Where index is smaller than self in a dim other than dim, the
// reduced block is written back with slice_scatter.
func etlScatterReduce(b *ir.Builder, n *ir.Node) (*ir.Value, error) {
	st, err1 := ir.ArgTensor(n.Arg("self"), "self")
	it, err2 := ir.ArgTensor(n.Arg("index"), "index")
	srt, err3 := ir.ArgTensor(n.Arg("src"), "src")
	if err1 != nil || err2 != nil || err3 != nil {
		return nil, nil
	}
	S, ok1 := etlConstShape(st)
	I, ok2 := etlConstShape(it)
	R, ok3 := etlConstShape(srt)
	dimA, red, incl := n.Arg("dim"), n.Arg("reduce"), n.Arg("include_self")
	if !ok1 || !ok2 || !ok3 || len(S) == 0 || len(I) != len(S) || len(R) != len(S) || dimA.Kind != ir.ArgInt || red.Kind != ir.ArgString || incl.Kind != ir.ArgBool || st.DType != srt.DType {
		return nil, nil
	}
	r := int64(len(S))
	dim := dimA.Int
	if dim < 0 {
		dim += r
	}
	if dim < 0 || dim >= r {
		return nil, nil
	}
	numel := int64(1)
	for _, d := range I {
		numel *= d
	}
	if numel == 0 {
		return nil, nil
	}
	dt := st.DType
	self, index := n.Arg("self").Value, n.Arg("index")
	src, _, _, err := etlSliceTo(b, n.Arg("src").Value, R, I, -1)
	if err != nil {
		return nil, err
	}
	switch red.Str {
	case "sum", "mean":
		return etlScatterSumMean(b, self, index, src, dim, red.Str == "mean", incl.Bool(), S, I, dt)
	case "amax", "amin", "prod":
	default:
		return nil, nil
	}
	id, ok := etlReduceIdentity(red.Str, dt)
	if !ok || numel*S[dim] > etlOneHotLimit {
		return nil, nil
	}
	// The one-hot mask: index's shape with S[dim] inserted at dim.
	iu, err := b.Value(etlOpUnsqueeze, index, ir.IntArg(dim))
	if err != nil {
		return nil, err
	}
	pos, err := b.CallKw(etlOpArangeStep, []ir.Arg{ir.IntArg(0), ir.IntArg(S[dim]), ir.IntArg(1)}, map[string]ir.Arg{"dtype": ir.DTypeArg(ir.Int64)})
	if err != nil {
		return nil, err
	}
	ps := make([]int64, r+1)
	for i := range ps {
		ps[i] = 1
	}
	ps[dim] = S[dim]
	pv, err := etlView(b, ir.ValueArg(pos.Result()), ps...)
	if err != nil {
		return nil, err
	}
	mask, err := b.Value(etOpEqTensor, ir.ValueArg(iu), ir.ValueArg(pv))
	if err != nil {
		return nil, err
	}
	su, err := b.Value(etlOpUnsqueeze, ir.ValueArg(src), ir.IntArg(dim))
	if err != nil {
		return nil, err
	}
	idv, err := etlFullArg(b, nil, id, dt)
	if err != nil {
		return nil, err
	}
	vals, err := b.Value(etOpWhere, ir.ValueArg(mask), ir.ValueArg(su), ir.ValueArg(idv))
	if err != nil {
		return nil, err
	}
	var reduced *ir.Value
	switch red.Str {
	case "amax":
		reduced, err = b.Value(etOpAmax, ir.ValueArg(vals), ir.IntsArg(dim+1))
	case "amin":
		reduced, err = b.Value(etOpAmin, ir.ValueArg(vals), ir.IntsArg(dim+1))
	default:
		var nn *ir.Node
		nn, err = b.CallKw(ir.OpAtenProdDimInt, []ir.Arg{ir.ValueArg(vals), ir.IntArg(dim + 1)}, map[string]ir.Arg{"dtype": ir.DTypeArg(dt)})
		if nn != nil {
			reduced = nn.Result()
		}
	}
	if err != nil {
		return nil, err
	}
	// reduced has index's shape with S[dim] at dim: self's block.
	J := append([]int64(nil), I...)
	J[dim] = S[dim]
	blk, chain, dims, err := etlSliceTo(b, self, S, J, int(dim))
	if err != nil {
		return nil, err
	}
	var res *ir.Value
	if incl.Bool() {
		op := map[string]ir.Op{"amax": ir.OpAtenMaximum, "amin": ir.OpAtenMinimum, "prod": etlOpMulTensor}[red.Str]
		res, err = b.Value(op, ir.ValueArg(reduced), ir.ValueArg(blk))
	} else {
		var hit *ir.Value
		if hit, err = b.Value(ir.OpAtenAnyDim, ir.ValueArg(mask), ir.IntArg(dim+1)); err == nil {
			res, err = b.Value(etOpWhere, ir.ValueArg(hit), ir.ValueArg(reduced), ir.ValueArg(blk))
		}
	}
	if err != nil {
		return nil, err
	}
	return etlUnslice(b, res, chain, dims, J)
}

func etlScatterSumMean(b *ir.Builder, self *ir.Value, index ir.Arg, src *ir.Value, dim int64, mean, incl bool, S, I []int64, dt ir.DType) (*ir.Value, error) {
	var count *ir.Value
	if mean || !incl {
		zeros, err := etlFullOf(b, S, 0, dt)
		if err != nil {
			return nil, err
		}
		ones, err := etlFullOf(b, I, 1, dt)
		if err != nil {
			return nil, err
		}
		if count, err = b.Value(etlOpScatterAdd, ir.ValueArg(zeros), ir.IntArg(dim), index, ir.ValueArg(ones)); err != nil {
			return nil, err
		}
	}
	base := self
	if !incl {
		hit, err := b.Value(etlOpGtScalar, ir.ValueArg(count), ir.IntArg(0))
		if err != nil {
			return nil, err
		}
		if base, err = b.Value(ir.OpAtenMaskedFillScalar, ir.ValueArg(self), ir.ValueArg(hit), ir.IntArg(0)); err != nil {
			return nil, err
		}
	}
	sum, err := b.Value(etlOpScatterAdd, ir.ValueArg(base), ir.IntArg(dim), index, ir.ValueArg(src))
	if err != nil || !mean {
		return sum, err
	}
	if incl {
		count, err = b.Value(etlOpAddScalar, ir.ValueArg(count), ir.IntArg(1))
	} else {
		count, err = b.Value(etlOpClamp, ir.ValueArg(count), ir.IntArg(1), ir.NoneArg())
	}
	if err != nil {
		return nil, err
	}
	if dt.IsFloat() {
		return b.Value(etOpDiv, ir.ValueArg(sum), ir.ValueArg(count))
	}
	nn, err := b.CallKw(ir.OpAtenDivTensorMode, []ir.Arg{ir.ValueArg(sum), ir.ValueArg(count)}, map[string]ir.Arg{"rounding_mode": ir.StringArg("floor")})
	if err != nil {
		return nil, err
	}
	return nn.Result(), nil
}

// col2im(x, [H, W], [kh, kw], [dh, dw], [ph, pw], [sh, sw]), static
// shapes: x (N, C·kh·kw, L) or unbatched (C·kh·kw, L), L = nbh·nbw
// blocks. Every column element lands on a position of the padded image
// (H + 2ph) × (W + 2pw), so x viewed as (N, C, kh·kw·L) is scatter_add'ed
// into zeros (N, C, Hp·Wp) along the last dim with the index
// (ki·dh + bh·sh)·Wp + kj·dw + bw·sw, built from four arange.start_step
// (one per ki, kj, bh, bw, already scaled) broadcast-added and expanded;
// the padding is then sliced off. Elements are added in torch's order
// (column channel, then block).
func etlCol2im(b *ir.Builder, n *ir.Node) (*ir.Value, error) {
	xt, err := ir.ArgTensor(n.Arg("self"), "self")
	if err != nil {
		return nil, nil
	}
	X, ok := etlConstShape(xt)
	out, ok2 := etlConstShape(n.Result().Tensor())
	size, ok3 := etIntTuple(n.Arg("output_size"), 2, nil)
	k, ok4 := etIntTuple(n.Arg("kernel_size"), 2, nil)
	dil, ok5 := etIntTuple(n.Arg("dilation"), 2, nil)
	pad, ok6 := etIntTuple(n.Arg("padding"), 2, nil)
	s, ok7 := etIntTuple(n.Arg("stride"), 2, nil)
	if !ok || !ok2 || !ok3 || !ok4 || !ok5 || !ok6 || !ok7 || (len(X) != 2 && len(X) != 3) {
		return nil, nil
	}
	N := int64(1)
	if len(X) == 3 {
		N = X[0]
	}
	ck, L := X[len(X)-2], X[len(X)-1]
	H, W := size[0], size[1]
	K := k[0] * k[1]
	if K <= 0 || ck%K != 0 || s[0] <= 0 || s[1] <= 0 || dil[0] <= 0 || dil[1] <= 0 || pad[0] < 0 || pad[1] < 0 {
		return nil, nil
	}
	C := ck / K
	Hp, Wp := H+2*pad[0], W+2*pad[1]
	nbh := (Hp-dil[0]*(k[0]-1)-1)/s[0] + 1
	nbw := (Wp-dil[1]*(k[1]-1)-1)/s[1] + 1
	if nbh <= 0 || nbw <= 0 || nbh*nbw != L || N*C == 0 {
		return nil, nil
	}
	// The four index terms, each along its own axis of (kh, kw, nbh, nbw).
	var idx *ir.Value
	for axis, t := range [][2]int64{{k[0], dil[0] * Wp}, {k[1], dil[1]}, {nbh, s[0] * Wp}, {nbw, s[1]}} {
		a, err := b.CallKw(etlOpArangeStep, []ir.Arg{ir.IntArg(0), ir.IntArg(t[0] * t[1]), ir.IntArg(t[1])}, map[string]ir.Arg{"dtype": ir.DTypeArg(ir.Int64)})
		if err != nil {
			return nil, err
		}
		shape := []int64{1, 1, 1, 1}
		shape[axis] = t[0]
		v, err := etlView(b, ir.ValueArg(a.Result()), shape...)
		if err != nil {
			return nil, err
		}
		if idx == nil {
			idx = v
		} else if idx, err = b.Value(ir.OpAtenAddTensor, ir.ValueArg(idx), ir.ValueArg(v)); err != nil {
			return nil, err
		}
	}
	idx, err = etlView(b, ir.ValueArg(idx), 1, 1, K*L)
	if err != nil {
		return nil, err
	}
	if N*C != 1 {
		if idx, err = b.Value(etlOpExpandCopy, ir.ValueArg(idx), ir.IntsArg(N, C, K*L)); err != nil {
			return nil, err
		}
	}
	x, err := etlView(b, n.Arg("self"), N, C, K*L)
	if err != nil {
		return nil, err
	}
	zeros, err := etlFullOf(b, []int64{N, C, Hp * Wp}, 0, xt.DType)
	if err != nil {
		return nil, err
	}
	sum, err := b.Value(etlOpScatterAdd, ir.ValueArg(zeros), ir.IntArg(2), ir.ValueArg(idx), ir.ValueArg(x))
	if err != nil {
		return nil, err
	}
	img, err := etlView(b, ir.ValueArg(sum), N, C, Hp, Wp)
	if err != nil {
		return nil, err
	}
	for i, p := range pad {
		if p == 0 {
			continue
		}
		if img, err = b.Value(etlOpSliceCopy, ir.ValueArg(img), ir.IntArg(int64(2+i)), ir.IntArg(p), ir.IntArg(p+size[i]), ir.IntArg(1)); err != nil {
			return nil, err
		}
	}
	return etlView(b, ir.ValueArg(img), out...)
}
