package passes

import (
	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/pm"
	"github.com/fxport/fxport/targets/executorch/plan"
)

// ReplaceViewCopyWithView turns view_copy nodes into aliasing
// executorch_prim::et_view nodes (exir's NormalizeViewCopyBasePass and
// ReplaceViewCopyWithViewPass, on by default: remove_view_copy=True).
var ReplaceViewCopyWithView = etlLoweringOptional(&pm.Pass{
	Name: etlMemoryViewName,
	Doc: `turn view_copy nodes into aliasing et_view nodes that share their base's storage (exir's remove_view_copy)

exir's to_executorch (remove_view_copy=True, the default) replaces every
view_copy that no graph output reads by memory.view, which the memory
planner gives its base's storage (the base's lifetime extended over the
view's uses) and the emitter writes as the kernel call
executorch_prim::et_view.default(self, size, out): out's TensorMeta has the
base's allocation, and the kernel points out's data at self's bytes, so
nothing is copied. Here, in the main graph and in control-flow regions, a

  %v = aten.view_copy.default(%base, size)

becomes

  %v = executorch_prim.et_view.default(%root, size)

when (exir's conditions with ET-P35's shape-dynamism check): no return (of
the main graph or of a region) reads %v; %v and %base are both static or
both symbolic (a symbolic view is planned at its base's upper bound and
the kernel resizes out within it); they have the same dtype and the
default dim order; %base's storage is neither a parameter, a non-mutated
buffer nor a lifted constant (those are folded by fold-constant-views or
keep their copy); nothing
writes %v, and nothing writes %base's storage except the write-back copy_
that insert-write-back adds after every other node. First the base is
normalized as exir's NormalizeViewCopyBasePass does: a view of a view
(view_copy or et_view) reads the first view's base instead, and a view
left without users is removed. Statistics: "views-aliased", "kept-output",
"kept-dynamism", "kept-constant", "kept-mutated", "kept-layout",
"views-rebased", "views-removed".

Disable it (--disable replace-view-copy-with-view, exir's
remove_view_copy=False) to keep every view_copy as a copy with storage of
its own. It runs after to-edge-views (which makes the view_copy nodes) and
fold-constant-views (which folds views of constants) in the default
pipeline, and before to-out-variants (checked) and so before plan-memory,
which gives each et_view its base's storage.`,
	Requires: []pm.Requirement{
		{Before: etlOutVariantsName, Why: "a view_copy left to to-out-variants gets a memory.alloc of its own (exir runs ReplaceViewCopyWithViewPass before ToOutVarPass)"},
	},
	Run: runReplaceViewCopyWithView,
})

const etlMemoryViewName = "replace-view-copy-with-view"

// OpETView is the aliasing view ExecuTorch's emitter writes for memory.view.
var OpETView = ir.OpExecutorchPrimEtView

// etlLoweringOptional declares a lowering pass that may be disabled.
func etlLoweringOptional(p *pm.Pass) *pm.Pass {
	p.Kind = pm.KindLowering
	p.Backends = []string{pm.BackendExecuTorch}
	p.Stage = pm.StageLowering
	return pm.RegisterPass(p)
}

func runReplaceViewCopyWithView(p *ir.Program, c *pm.Ctx) (pm.Result, error) {
	changed := false
	// NormalizeViewCopyBasePass: a view of a view reads the first view's base.
	err := etlEachNode(p, func(n *ir.Node) error {
		if !etlIsView(n) {
			return nil
		}
		if root := etlViewRoot(n); root != n.Args[0].Value {
			n.SetArg(0, ir.ValueArg(root))
			n.AddProvenance(etlMemoryViewName)
			c.Stat("views-rebased", 1)
			changed = true
		}
		return nil
	})
	if err != nil {
		return pm.Result{}, err
	}
	// Views the rebasing left without users (exir: dead_code_elimination_pass).
	for removed := true; removed; {
		removed = false
		err = etlEachNode(p, func(n *ir.Node) error {
			if !etlIsView(n) || n.Results[0].NumUses() > 0 {
				return nil
			}
			if err := n.Erase(); err != nil {
				return n.Errorf("%s: removing the unused view: %v", etlMemoryViewName, err)
			}
			c.Stat("views-removed", 1)
			removed, changed = true, true
			return nil
		})
		if err != nil {
			return pm.Result{}, err
		}
	}
	// ReplaceViewCopyWithViewPass.
	st := newEtlViewState(p)
	err = etlEachNode(p, func(n *ir.Node) error {
		if n.Op != etlOpViewCopy {
			return nil
		}
		if why := st.keep(n); why != "" {
			c.Stat("kept-"+why, 1)
			c.Debugf(n, "view_copy kept (%s)", why)
			return nil
		}
		nn, err := etlRebuild(n, OpETView, map[string]ir.Arg{"self": n.Args[0], "size": n.Args[1]}, etlMemoryViewName)
		if err != nil {
			return err
		}
		c.Fired(nn, "aten.view_copy.default → executorch_prim.et_view.default (aliases %"+nn.Args[0].Value.Name+")")
		c.Stat("views-aliased", 1)
		changed = true
		return nil
	})
	return pm.Result{Changed: changed}, err
}

// etlIsView reports whether n is a view_copy or an et_view of a value.
func etlIsView(n *ir.Node) bool {
	return (n.Op == etlOpViewCopy || n.Op == OpETView) && len(n.Args) > 0 && n.Args[0].Kind == ir.ArgValue && len(n.Results) == 1
}

// etlViewRoot returns the base view node n reads after following views of
// views (view_copy and et_view of the same dtype) to the first non-view.
func etlViewRoot(n *ir.Node) *ir.Value {
	v := n.Args[0].Value
	for v.Def != nil && etlIsView(v.Def) {
		v = v.Def.Args[0].Value
	}
	return v
}

// etlViewState holds what the conditions need: the program's constant
// inputs and the storages something writes.
type etlViewState struct {
	p        *ir.Program
	constant map[*ir.Value]bool // main-graph inputs that are constants
	written  map[*ir.Value]bool // storages (etlStorage) some node writes
}

func newEtlViewState(p *ir.Program) *etlViewState {
	st := &etlViewState{p: p, constant: map[*ir.Value]bool{}, written: map[*ir.Value]bool{}}
	mutated := map[string]bool{}
	for _, o := range p.Signature.Outputs {
		if o.Kind == ir.BufferMutation || o.Kind == ir.ParameterMutation {
			mutated[o.Target] = true
		}
	}
	for i, v := range p.Main.Inputs {
		if i >= len(p.Signature.Inputs) {
			break
		}
		switch in := p.Signature.Inputs[i]; in.Kind {
		case ir.Parameter, ir.ConstantTensor:
			st.constant[v] = true
		case ir.Buffer:
			st.constant[v] = !mutated[in.Target]
		}
	}
	for _, g := range p.Graphs() {
		for _, n := range g.Nodes() {
			for i, a := range n.Op.Info().Schema.Args {
				if !a.Mutates() || i >= len(n.Args) {
					continue
				}
				for _, v := range etlArgValues(n.Args[i]) {
					if s := etlStorage(v); s != nil {
						st.written[s] = true
					}
				}
			}
		}
	}
	return st
}

func etlArgValues(a ir.Arg) []*ir.Value {
	switch a.Kind {
	case ir.ArgValue:
		return []*ir.Value{a.Value}
	case ir.ArgList:
		var out []*ir.Value
		for _, e := range a.List {
			out = append(out, etlArgValues(e)...)
		}
		return out
	}
	return nil
}

// keep returns why view_copy n must stay a copy, or "" when it may alias.
func (st *etlViewState) keep(n *ir.Node) string {
	v, base := n.Results[0], n.Args[0].Value
	for _, u := range v.Uses() {
		if u.IsReturn() {
			return "output" // exir: the output pointer may change at run time
		}
	}
	vt, bt := v.Tensor(), base.Tensor()
	if vt == nil || bt == nil {
		return "layout"
	}
	if etlStaticShape(vt) != etlStaticShape(bt) {
		return "dynamism" // ET-P35: only a view whose shape dynamism matches its base's
	}
	if vt.DType != bt.DType || !etlDefaultOrder(vt) || !etlDefaultOrder(bt) {
		return "layout"
	}
	s := etlStorage(base)
	if s == nil {
		return "constant" // a region input bound to no value
	}
	if s.Def == nil && s.Graph == st.p.Main && st.constant[s] {
		return "constant"
	}
	if st.written[s] || st.written[v] {
		return "mutated"
	}
	return ""
}

func etlStaticShape(t *ir.TensorType) bool {
	for _, d := range t.Shape {
		if _, ok := d.Const(); !ok {
			return false
		}
	}
	return true
}

func etlDefaultOrder(t *ir.TensorType) bool {
	for i, d := range t.DimOrder {
		if d != i {
			return false
		}
	}
	return true
}

// etlStorage returns the value whose storage v reads: through in-place
// results (the mutated operand), et_view results (the base), and region
// inputs bound to an outer operand (a cond's operands, the additional
// inputs of while_loop, scan and map_impl). A loop's carried input and a
// scan's xs slice are storages of their own. It returns nil for a region
// input bound to no value.
func etlStorage(v *ir.Value) *ir.Value {
	for v != nil {
		if n := v.Def; n != nil {
			switch {
			case n.Op == OpETView && n.Args[0].Kind == ir.ArgValue:
				v = n.Args[0].Value
			case n.Op.Has(ir.PropInplace) && len(n.Args) > 0 && n.Args[0].Kind == ir.ArgValue:
				v = n.Args[0].Value
			default:
				return v
			}
			continue
		}
		owner := v.Graph.Parent
		if owner == nil {
			return v
		}
		outer, own := etlRegionOperand(owner, v)
		if own {
			return v
		}
		v = outer
	}
	return nil
}

// etlRegionOperand returns the outer value region input v of owner stands
// for, or own = true when v has storage of its own (a carried slot, an xs
// slice).
func etlRegionOperand(owner *ir.Node, v *ir.Value) (outer *ir.Value, own bool) {
	i := v.Index
	pick := func(l []ir.Arg, k int) *ir.Value {
		if k >= 0 && k < len(l) && l[k].Kind == ir.ArgValue {
			return l[k].Value
		}
		return nil
	}
	switch owner.Op {
	case etlOpCond:
		if len(owner.Args) == 4 && owner.Args[3].Kind == ir.ArgList {
			return pick(owner.Args[3].List, i), false
		}
	case etlOpWhile:
		if len(owner.Args) == 4 && owner.Args[2].Kind == ir.ArgList && owner.Args[3].Kind == ir.ArgList {
			nc := len(owner.Args[2].List)
			if i < nc {
				return nil, true
			}
			return pick(owner.Args[3].List, i-nc), false
		}
	default:
		if s, ok := plan.ScanParts(owner); ok {
			ni, nx := len(s.Init), len(s.Xs)
			if i < ni+nx {
				return nil, true
			}
			return pick(s.Extra, i-ni-nx), false
		}
	}
	return nil, false
}

var (
	etlOpCond  = ir.OpHigherOrderCond
	etlOpWhile = ir.OpHigherOrderWhileLoop
)
