package passes

import (
	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/rewrite"
)

// Sorting without a sort kernel: ExecuTorch's portable library has
// topk.values but no sort, argsort or randperm kernel, so legalize-kernels
// rewrites them as a topk over the whole dim.

func init() {
	etDecompositions = append(etDecompositions,
		&rewrite.Pattern{Name: "sort-as-topk", Root: ir.OpAtenSort, Benefit: 1, Rewrite: etlSortTopk},
		etDecomp("argsort-as-topk", ir.OpAtenArgsort, etlArgsortTopk),
		etDecomp("argsort-stable-as-topk", ir.OpAtenArgsortStable, etlArgsortTopk),
		etDecomp("randperm-as-topk", ir.OpAtenRandperm, etlRandpermTopk),
	)
	etDecompositionSet = rewrite.MustSet(etDecompositions...)
}

// etlFullTopk is topk(x, k = size(dim), dim, largest, sorted=True): every
// element of the dim in order, with its index. nil when x is 0-d.
//
// Ties: sort.default and argsort.default (stable=False) promise nothing
// about the order of equal elements, so any order topk gives is a valid
// one. A stable request (sort.stable / argsort.stable with stable=True) is
// not rewritten: the portable topk kernel does not promise to keep equal
// elements in input order either.
func etlFullTopk(b *ir.Builder, n *ir.Node, x ir.Arg, dim, largest ir.Arg) (*ir.Node, error) {
	t, err := ir.ArgTensor(x, "self")
	if err != nil || t.Rank() == 0 {
		return nil, nil
	}
	d, err := etNormDim(dim, t.Rank())
	if err != nil {
		return nil, err
	}
	k, err := etSymArg(b, n, t.Shape[d])
	if err != nil {
		return nil, err
	}
	return b.CallKw(etOpTopk, []ir.Arg{x, k, ir.IntArg(int64(d)), largest, ir.BoolArg(true)}, nil)
}

// etlStable reports whether n asks for a stable sort (stable=True).
func etlStable(n *ir.Node) bool {
	i := n.Op.ArgIndex("stable")
	return i >= 0 && i < len(n.Args) && n.Args[i].Kind == ir.ArgBool && n.Args[i].Bool()
}

// sort(x, dim, descending) → topk(x, size(dim), dim, largest=descending,
// sorted=True): the same values and indices.
func etlSortTopk(b *ir.Builder, n *ir.Node) ([]*ir.Value, error) {
	if etlStable(n) {
		return nil, nil
	}
	top, err := etlFullTopk(b, n, n.Arg("self"), n.Arg("dim"), n.Arg("descending"))
	if err != nil || top == nil {
		return nil, err
	}
	return top.Results, nil
}

// argsort(x, dim, descending) → topk(…).indices, as sort.
func etlArgsortTopk(b *ir.Builder, n *ir.Node) (*ir.Value, error) {
	if etlStable(n) {
		return nil, nil
	}
	top, err := etlFullTopk(b, n, n.Arg("self"), n.Arg("dim"), n.Arg("descending"))
	if err != nil || top == nil {
		return nil, err
	}
	return top.Results[1], nil
}

// randperm(n, dtype) → topk(rand([n]), n, 0, largest=False).indices cast
// to dtype: the ranks of n float32 uniforms are a uniformly random
// permutation (the portable library's random source is rand.out). Equal
// uniforms still give a permutation: topk's indices are distinct. The
// random stream is not torch's (ExecuTorch's generator is its own).
func etlRandpermTopk(b *ir.Builder, n *ir.Node) (*ir.Value, error) {
	out := n.Result().Tensor()
	if out == nil {
		return nil, nil
	}
	r, err := b.CallKw(ir.OpAtenRand, []ir.Arg{ir.ListArg(n.Arg("n"))}, map[string]ir.Arg{"dtype": ir.DTypeArg(ir.Float32)})
	if err != nil {
		return nil, err
	}
	top, err := b.CallKw(etOpTopk, []ir.Arg{ir.ValueArg(r.Result()), n.Arg("n"), ir.IntArg(0), ir.BoolArg(false), ir.BoolArg(true)}, nil)
	if err != nil {
		return nil, err
	}
	idx := top.Results[1]
	if out.DType == idx.Tensor().DType {
		return idx, nil
	}
	c, err := b.CallKw(etlOpToCopy, []ir.Arg{ir.ValueArg(idx)}, map[string]ir.Arg{"dtype": ir.DTypeArg(out.DType)})
	if err != nil {
		return nil, err
	}
	return c.Results[0], nil
}
