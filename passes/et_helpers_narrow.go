package passes

import (
	"fmt"

	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/ir/sym"
)

var etOpNarrow = ir.OpAtenNarrow

// etPiecesAsNarrows rebuilds a split-like node (split.Tensor,
// split_with_sizes, chunk) as consecutive narrows along dim: piece i starts
// at the sum of the sizes before it and has the size its result type
// records, so the replacements have exactly the original types.
func etPiecesAsNarrows(n *ir.Node, b *ir.Builder) ([]*ir.Value, error) {
	self := n.Arg("self")
	t, err := ir.ArgTensor(self, "self")
	if err != nil {
		return nil, err
	}
	d, err := etNormDim(n.Arg("dim"), t.Rank())
	if err != nil {
		return nil, err
	}
	out := make([]*ir.Value, len(n.Results))
	start := sym.Const(0)
	for i, r := range n.Results {
		rt := r.Tensor()
		if rt == nil || rt.Rank() != t.Rank() {
			return nil, fmt.Errorf("result %s is not a piece of %s", r, self.Value)
		}
		length := rt.Shape[d]
		sa, err := etSymArg(b, n, start)
		if err != nil {
			return nil, err
		}
		la, err := etSymArg(b, n, length)
		if err != nil {
			return nil, err
		}
		v, err := b.Value(etOpNarrow, self, ir.IntArg(int64(d)), sa, la)
		if err != nil {
			return nil, err
		}
		out[i] = v
		start = sym.Add(start, length)
	}
	return out, nil
}

// etHasUnbacked reports whether e mentions a symbol the Env marks unbacked.
func etHasUnbacked(env *sym.Env, e sym.Expr) bool {
	for _, s := range e.Symbols() {
		if env.IsUnbacked(s) {
			return true
		}
	}
	return false
}
