package onnx

import "github.com/fxport/fxport/ir"

func init() {
	lower(17, func(b *Builder, n *ir.Node) error {
		// argsort (and argsort.stable): the indices of a TopK over the
		// whole dim. ONNX's TopK puts the lower index first among equal
		// elements, in both directions, which is the stable order: the
		// stable flag needs nothing more.
		return fullTopK(b, n, []*ir.Value{nil, n.Result()})
	}, ir.OpAtenArgsort, ir.OpAtenArgsortStable)
}

// fullTopK lowers a sort of n's self along its dim (descending: the
// largest first) as TopK with k = the dim's size, sorted=1, int64 indices;
// results are TopK's (values, indices), nil for an unused one. A 0-d self
// is its own sort, at index 0.
func fullTopK(b *Builder, n *ir.Node, results []*ir.Value) error {
	r := reader(b, n)
	x := r.T("self")
	rank := r.Rank("self")
	if r.err != nil {
		return r.err
	}
	if rank == 0 {
		if results[0] != nil {
			b.Emit(results[0], "Identity", []string{x})
		}
		if results[1] != nil {
			b.Emit(results[1], "Identity", []string{b.I64(0)})
		}
		return nil
	}
	dim := normDim(r.Int("dim"), rank)
	desc := r.Bool("descending")
	if r.err != nil {
		return r.err
	}
	shape := b.Tmp("Shape", []string{x})
	k := b.Tmp("Gather", []string{shape, b.I64s(dim)}, AttrInt("axis", 0))
	largest := int64(0)
	if desc {
		largest = 1
	}
	b.EmitN(results, "TopK", []string{x, k}, AttrInt("axis", dim), AttrInt("largest", largest), AttrInt("sorted", 1))
	return nil
}
