package edit

import (
	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/pm"
)

// The compare-and-count rewrite of bucketize and searchsorted, shared by
// ONNX-P11/ET-P23 (bucketize) and ONNX-P12/ET-P24 (searchsorted). Size-1
// dims are inserted with reshape, never unsqueeze, which ET-P19 targets.

// BucketizeCount rewrites bucketize(x, boundaries) with 1-D
// boundaries as the count of boundaries below each element.
func BucketizeCount(n *ir.Node, b *ir.Builder, c *pm.Ctx) ([]*ir.Value, error) {
	x, bounds := n.Arg("self"), n.Arg("boundaries")
	if _, err := ir.ArgTensor(x, "self"); err != nil {
		return nil, nil
	}
	if bt, err := ir.ArgTensor(bounds, "boundaries"); err != nil || bt.Rank() != 1 {
		return nil, nil
	}
	right := n.Arg("right").Bool()
	return finishCompareCount(n, b, c, bounds.Value, x.Value, right, "count of boundaries", "")
}

// SearchsortedCount rewrites searchsorted(seq, values) as the count
// of entries of each value's row of seq below it, honouring a sorter.
func SearchsortedCount(n *ir.Node, b *ir.Builder, c *pm.Ctx) ([]*ir.Value, error) {
	seqA, vals := n.Arg("sorted_sequence"), n.Arg("self")
	st, err := ir.ArgTensor(seqA, "sorted_sequence")
	if err != nil || st.Rank() == 0 {
		return nil, nil
	}
	vt, err := ir.ArgTensor(vals, "self")
	if err != nil || st.Rank() > 1 && vt.Rank() != st.Rank() {
		return nil, nil
	}
	right := n.Arg("right").Bool()
	if s := n.Arg("side"); s.Kind == ir.ArgString {
		switch s.Str {
		case "right":
			right = true
		case "left":
			if right {
				return nil, n.Errorf("searchsorted: side=left contradicts right=True")
			}
		default:
			return nil, n.Errorf("searchsorted: side must be 'left' or 'right', got %q", s.Str)
		}
	}
	seq, detail := seqA.Value, ""
	if s := n.Arg("sorter"); !s.IsNone() {
		if s.Kind != ir.ArgValue {
			return nil, nil
		}
		seq, err = b.Value(tpOpGather, seqA, ir.IntArg(int64(st.Rank()-1)), s)
		if err != nil {
			return nil, n.Errorf("searchsorted: building the sorter gather: %w", err)
		}
		detail = ", sorter applied"
	}
	return finishCompareCount(n, b, c, seq, vals.Value, right, "count of sequence entries", detail)
}

// finishCompareCount builds the count, checks it has n's result type and
// reports the firing.
func finishCompareCount(n *ir.Node, b *ir.Builder, c *pm.Ctx, seq, vals *ir.Value, right bool, what, detail string) ([]*ir.Value, error) {
	t := NewBuilder(b, n)
	res := compareCount(t, seq, vals, right, countIndexDType(n))
	if t.Err != nil {
		return nil, t.Err
	}
	out := []*ir.Value{res}
	if len(n.Results) != 1 || !SameTypes(n, out) {
		return nil, nil
	}
	side := "left"
	if right {
		side = "right"
	}
	c.Fired(n, what+", side "+side+detail)
	return out, nil
}

// compareCount is the insertion index of every value into the sorted last
// dim of seq: the number of entries e with e < v (right=false) or e <= v
// (right=true), summed in dt. A 1-D seq [M] is compared with every value
// (values [..., 1]); an N-D seq [..., M] with values [..., K] is compared
// row by row as seq [..., 1, M] against values [..., K, 1]. Empty sequences
// sum over an empty dim and give zeros, which is torch's answer; for
// unsorted sequences the result is unspecified, as in torch.
func compareCount(t *Builder, seq, vals *ir.Value, right bool, dt ir.DType) *ir.Value {
	x := t.insertOnes(vals, vals.Tensor().Rank())
	if r := seq.Tensor().Rank(); r > 1 {
		seq = t.insertOnes(seq, r-1)
	}
	op := tpOpLtTensor
	if right {
		op = OpLeTensor
	}
	if t.Err != nil {
		return nil
	}
	cmp := t.V(op, ir.ValueArg(seq), ir.ValueArg(x))
	return t.Kw(OpSumDim, []ir.Arg{ir.ValueArg(cmp), ir.IntsArg(-1)}, map[string]ir.Arg{"dtype": ir.DTypeArg(dt)})
}

// insertOnes reshapes v with size-1 dims at pos (see etInsertOnes).
func (t *Builder) insertOnes(v *ir.Value, pos ...int) *ir.Value {
	if t.Err != nil {
		return nil
	}
	r, err := InsertOnes(t.b, t.n, ir.ValueArg(v), pos...)
	if err != nil {
		t.Err = err
	}
	return r
}

// countIndexDType is the count's dtype: int32 when out_int32 is set, else int64.
func countIndexDType(n *ir.Node) ir.DType {
	if a := n.Arg("out_int32"); a.Kind == ir.ArgBool && a.Bool() {
		return ir.Int32
	}
	return ir.Int64
}

var tpOpGather = ir.OpAtenGather
