package passes

import (
	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/ir/sym"
	"github.com/fxport/fxport/pm"
)

// NarrowAsSliceCopy lowers aten.narrow (a view without a _copy twin, so
// to-edge-views keeps it) to slice_copy, which has a portable out kernel
// and an XNNPACK node.
var NarrowAsSliceCopy = etlLowering(&pm.Pass{
	Name: etlNarrowName,
	Doc: `lower narrow(x, dim, start, length) to slice_copy(x, dim, start, start + length, 1)

narrow is a view whose edge form exir spells as slice_copy; ExecuTorch has
no narrow kernel, so a narrow left in the graph (ET-P01/P02/P17 split and
chunk pieces, ET-P20 crops) would stop emission. The end bound is computed
as a literal when start and length are literals, otherwise by an
executorch_prim::add.Scalar node (this pass runs after to-executorch-prim,
so it builds the prim op itself; no symbol is specialized). A negative
literal start is made non-negative with the dim's static size; when the
size is symbolic, start + length = 0 becomes an open end (None) and a
literal negative end stays negative (slice counts it from the end as narrow
does). A narrow whose start may be negative and whose end cannot be
written this way (symbolic start not provably >= 0, or a negative literal
start with a symbolic length on a symbolic dim) stays and is counted
("kept-narrow"); the emitter then refuses it with an error naming the node.
Runs before xnnpack-partition so delegated crops see slice_copy.`,
	Requires: []pm.Requirement{
		{After: etlPrimName, Why: "builds executorch_prim::add.Scalar for symbolic ends, which to-executorch-prim would otherwise have to lower"},
	},
	Run: runNarrowAsSliceCopy,
})

const etlNarrowName = "narrow-as-slice-copy"

var etlOpSliceCopy = ir.OpAtenSliceCopyTensor

func runNarrowAsSliceCopy(p *ir.Program, c *pm.Ctx) (pm.Result, error) {
	changed := false
	err := etlEachNodeOf(p, func(op ir.Op) bool { return op == etOpNarrow }, func(n *ir.Node) error {
		kw, ok, err := etlNarrowSliceArgs(p, n)
		if err != nil {
			return err
		}
		if !ok {
			c.Stat("kept-narrow", 1)
			return nil
		}
		nn, err := etlRebuild(n, etlOpSliceCopy, kw, etlNarrowName)
		if err != nil {
			return err
		}
		c.Fired(nn, "narrow → slice_copy")
		c.Stat("narrows-lowered", 1)
		changed = true
		return nil
	})
	return pm.Result{Changed: changed}, err
}

// etlNarrowSliceArgs returns slice_copy's arguments for narrow node n; ok
// is false when the end bound cannot be written without knowing the sign
// of a symbolic start. Nodes computing a symbolic end are inserted before n.
func etlNarrowSliceArgs(p *ir.Program, n *ir.Node) (map[string]ir.Arg, bool, error) {
	self := n.Arg("self")
	t, err := ir.ArgTensor(self, "self")
	if err != nil {
		return nil, false, n.Errorf("%s: %v", etlNarrowName, err)
	}
	d, err := etNormDim(n.Arg("dim"), t.Rank())
	if err != nil {
		return nil, false, n.Errorf("%s: %v", etlNarrowName, err)
	}
	start, length := n.Arg("start"), n.Arg("length")
	kw := map[string]ir.Arg{"self": self, "dim": ir.IntArg(int64(d)), "start": start, "step": ir.IntArg(1)}
	switch start.Kind {
	case ir.ArgInt:
		s := start.Int
		if s < 0 {
			if size, ok := t.Shape[d].Const(); ok {
				s += size
				kw["start"] = ir.IntArg(s)
			} else if length.Kind == ir.ArgInt {
				// Both bounds count from the end, as narrow's do.
				if e := s + length.Int; e == 0 {
					kw["end"] = ir.NoneArg()
				} else {
					kw["end"] = ir.IntArg(e)
				}
				return kw, true, nil
			} else {
				return nil, false, nil
			}
		}
		if s == 0 {
			kw["end"] = length
			return kw, true, nil
		}
		if length.Kind == ir.ArgInt {
			kw["end"] = ir.IntArg(s + length.Int)
			return kw, true, nil
		}
	case ir.ArgValue:
		st, ok := start.Value.Type.(*ir.SymIntType)
		if !ok || !st.Expr.IsValid() {
			return nil, false, nil
		}
		if p.Env.LowerBound(st.Expr).Cmp(sym.Finite(0)) < 0 {
			return nil, false, nil
		}
		if length.Kind == ir.ArgInt && length.Int == 0 {
			kw["end"] = start
			return kw, true, nil
		}
	default:
		return nil, false, n.Errorf("%s: start %s is neither an int nor a SymInt value", etlNarrowName, start)
	}
	if length.Kind != ir.ArgInt && length.Kind != ir.ArgValue {
		return nil, false, n.Errorf("%s: length %s is neither an int nor a SymInt value", etlNarrowName, length)
	}
	b := ir.NewBuilder(n.Graph)
	b.SetInsertBefore(n)
	b.Pass = etlNarrowName
	end, err := b.Value(etlOpPrimAdd, kw["start"], length)
	if err != nil {
		return nil, false, n.Errorf("%s: building the end bound: %v", etlNarrowName, err)
	}
	if _, ok := end.Type.(*ir.SymIntType); !ok {
		return nil, false, n.Errorf("%s: end bound %s has type %s, want a SymInt", etlNarrowName, end, end.Type)
	}
	kw["end"] = ir.ValueArg(end)
	return kw, true, nil
}
