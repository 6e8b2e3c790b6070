package passes

import (
	"fmt"
	"sort"

	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/pm"
)

// ToEdgeViews replaces view ops by their copying twins (ExecuTorch's
// ReplaceViewOpsWithViewCopyOpsPass; ET-P09 invariant).
var ToEdgeViews = etlLowering(&pm.Pass{
	Name: etlEdgeViewsName,
	ID:   "ET-P09",
	Doc: `replace view ops by their _copy forms (view → view_copy, expand → expand_copy, …)

The edge dialect has no aliasing views: every aten view op whose copying
twin (same base name with "_copy", same overload, same argument names) is
in the op table becomes that twin, and a few views are spelled with core
copies: reshape and _unsafe_view become view_copy, t and transpose.int
become permute_copy with an explicit permutation.

Invariants (catalog rows marked invariant): expand becomes expand_copy,
which materializes its result, so no tensor of the lowered program has a
stride-0 dim (ET-P09: dim-order types cannot express one, and the memory
planner sizes expand_copy at its full element count). Only
replace-view-copy-with-view turns a view_copy back into an aliasing view,
and only when its shape dynamism matches its base's (ET-P35); every other
view_copy gets storage of its own from the memory planner. Views whose twin is missing (e.g. view_as_real) stay and are counted in the
statistic "kept-view".`,
	Run: runToEdgeViews,
})

const etlEdgeViewsName = "to-edge-views"

var (
	etlOpViewCopy    = ir.OpAtenViewCopy
	etlOpPermuteCopy = ir.OpAtenPermuteCopy
	etlOpReshape     = ir.OpAtenReshape
	etlOpUnsafeView  = ir.OpAten_UnsafeView
	etlOpT           = ir.OpAtenT
	etlOpTranspose   = ir.OpAtenTransposeInt
)

// etlViewCopyTwins maps view ops to copy twins with the same argument
// names, built once from the op table.
var etlViewCopyTwins = etlBuildViewCopyTwins()

func etlBuildViewCopyTwins() map[ir.Op]ir.Op {
	m := map[ir.Op]ir.Op{}
	for _, op := range ir.AllOps() {
		info := op.Info()
		if info.Namespace != "aten" || !op.Has(ir.PropView) {
			continue
		}
		twin, ok := ir.LookupOp("aten." + info.Base + "_copy." + info.Overload)
		if !ok || !etlSameArgNames(op, twin) {
			continue
		}
		m[op] = twin
	}
	return m
}

// EdgeViewCopyTwins lists the view → copy pairs to-edge-views applies by
// name, sorted by the view's name (for docs and tests).
func EdgeViewCopyTwins() [][2]string {
	var out [][2]string
	for v, c := range etlViewCopyTwins {
		out = append(out, [2]string{v.String(), c.String()})
	}
	sort.Slice(out, func(i, j int) bool { return out[i][0] < out[j][0] })
	return out
}

func etlSameArgNames(a, b ir.Op) bool {
	sa, sb := a.Info().Schema.Args, b.Info().Schema.Args
	if len(sa) != len(sb) {
		return false
	}
	for i := range sa {
		if sa[i].Name != sb[i].Name {
			return false
		}
	}
	return true
}

func runToEdgeViews(p *ir.Program, c *pm.Ctx) (pm.Result, error) {
	changed := false
	err := etlEachNode(p, func(n *ir.Node) error {
		op, kw, err := etlEdgeViewOf(n)
		if err != nil {
			return err
		}
		if op == ir.OpInvalid {
			if n.Op.Has(ir.PropView) && n.Op.Info().Namespace == "aten" {
				c.Stat("kept-view", 1)
			}
			return nil
		}
		from := n.Op.String()
		nn, err := etlRebuild(n, op, kw, etlEdgeViewsName)
		if err != nil {
			return err
		}
		c.Fired(nn, from+" → "+op.String())
		c.Stat("views-copied", 1)
		changed = true
		return nil
	})
	return pm.Result{Changed: changed}, err
}

// etlEdgeViewOf returns the copy op and keyword arguments that replace n,
// or OpInvalid when n is not a view this pass rewrites.
func etlEdgeViewOf(n *ir.Node) (ir.Op, map[string]ir.Arg, error) {
	switch n.Op {
	case etlOpReshape, etlOpUnsafeView:
		return etlOpViewCopy, map[string]ir.Arg{"self": n.Arg("self"), "size": n.Arg(etlSizeArgName(n))}, nil
	case etlOpT, etlOpTranspose:
		t, err := ir.ArgTensor(n.Arg("self"), "self")
		if err != nil {
			return ir.OpInvalid, nil, n.Errorf("%s: %v", etlEdgeViewsName, err)
		}
		r := t.Rank()
		perm := make([]int64, r)
		for i := range perm {
			perm[i] = int64(i)
		}
		if n.Op == etlOpT {
			if r == 2 {
				perm[0], perm[1] = 1, 0
			}
		} else {
			d0, d1, err := etlDims(n, r, "dim0", "dim1")
			if err != nil {
				return ir.OpInvalid, nil, err
			}
			perm[d0], perm[d1] = perm[d1], perm[d0]
		}
		return etlOpPermuteCopy, map[string]ir.Arg{"self": n.Arg("self"), "dims": ir.IntsArg(perm...)}, nil
	}
	if twin, ok := etlViewCopyTwins[n.Op]; ok {
		return twin, etlNamedArgs(n), nil
	}
	return ir.OpInvalid, nil, nil
}

// etlSizeArgName is the name of the size argument of reshape ("shape") or
// _unsafe_view ("size").
func etlSizeArgName(n *ir.Node) string {
	for _, a := range n.Op.Info().Schema.Args {
		if a.Name == "shape" || a.Name == "size" {
			return a.Name
		}
	}
	return "size"
}

// etlDims reads int arguments naming dims of a rank-r tensor, normalized.
func etlDims(n *ir.Node, r int, names ...string) (int, int, error) {
	var ds []int
	for _, name := range names {
		a := n.Arg(name)
		if a.Kind != ir.ArgInt {
			return 0, 0, n.Errorf("%s: %s is not an int literal", etlEdgeViewsName, name)
		}
		d := int(a.Int)
		if d < 0 {
			d += r
		}
		if d < 0 || d >= r && !(r == 0 && d == 0) {
			return 0, 0, n.Errorf("%s: %s=%d out of range for rank %d", etlEdgeViewsName, name, a.Int, r)
		}
		ds = append(ds, d)
	}
	if r == 0 {
		return 0, 0, fmt.Errorf("%s: transpose of a 0-d tensor", n.Short())
	}
	return ds[0], ds[1], nil
}
