package edit

import (
	"fmt"

	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/ir/sym"
)

// Helpers shared by the ONNX node fixes (ONNX-FX*).

// FixBuilder returns a builder positioned just before n that records pass
// in the provenance of what it builds and copies n's metadata (stack trace).
func FixBuilder(n *ir.Node, pass string) *ir.Builder {
	b := ir.NewBuilder(n.Graph)
	b.SetInsertBefore(n)
	b.Pass = pass
	meta := n.Meta.Clone()
	b.Meta = &meta
	return b
}

// valueOperand returns the tensor operand of a, or nil when a is not a tensor value.
func TensorOperand(a ir.Arg) (*ir.Value, *ir.TensorType) {
	if a.Kind != ir.ArgValue || a.Value == nil {
		return nil, nil
	}
	t := a.Value.Tensor()
	if t == nil {
		return nil, nil
	}
	return a.Value, t
}

// ProgramEnv is the symbol environment of n's program (nil is usable read-only).
func ProgramEnv(n *ir.Node) *sym.Env {
	if n.Graph == nil || n.Graph.Program == nil {
		return nil
	}
	return n.Graph.Program.Env
}

// ReplaceInplace finishes the rewrite of an in-place node n into its
// functional form v: every use of n's result, and every later reader of
// each value in written (the tensor n wrote and the tensors it is a full
// view of), reads v instead. "Later" means after n in n's graph, the
// graph's return included; regions are isolated from above, so a region
// reads a value only through the higher-order node that owns it, which is
// itself a reader in n's graph. Then n is erased.
func ReplaceInplace(n *ir.Node, v *ir.Value, written ...*ir.Value) error {
	for _, r := range n.Results {
		if r.Type != nil && ir.AsTensor(r.Type) != nil {
			r.ReplaceAllUsesWith(v)
		}
	}
	later := fxLaterNodes(n)
	for _, w := range written {
		if w == nil || w == v {
			continue
		}
		if !ir.TypeEqual(w.Type, v.Type) {
			return n.Errorf("cannot rewire readers of %s (%s) to %s (%s)", w, w.Type, v, v.Type)
		}
		fxReplaceUsesIn(w, v, later)
	}
	return n.Erase()
}

// fxLaterNodes is the set of nodes after n in its graph, plus the graph's return.
func fxLaterNodes(n *ir.Node) map[*ir.Node]bool {
	out := map[*ir.Node]bool{}
	for m := n.Next(); m != nil; m = m.Next() {
		out[m] = true
	}
	return out
}

// fxReplaceUsesIn makes the users of old that are in set (or the graph's
// return) use new instead, keeping use lists exact.
func fxReplaceUsesIn(old, new *ir.Value, set map[*ir.Node]bool) {
	var users []*ir.Node
	for _, u := range old.Uses() {
		if (set[u] || u.IsReturn()) && !fxContainsNodePtr(users, u) {
			users = append(users, u)
		}
	}
	for _, u := range users {
		if u.IsReturn() {
			outs := u.Graph.Outputs()
			for i := range outs {
				if a, ok := fxSubstArg(outs[i], old, new); ok {
					u.Graph.SetOutput(i, a)
				}
			}
			continue
		}
		for i := range u.Args {
			if a, ok := fxSubstArg(u.Args[i], old, new); ok {
				u.SetArg(i, a)
			}
		}
	}
}

func fxContainsNodePtr(ns []*ir.Node, n *ir.Node) bool {
	for _, m := range ns {
		if m == n {
			return true
		}
	}
	return false
}

// fxSubstArg returns a with every operand old replaced by the argument with.
func fxSubstArg(a ir.Arg, old *ir.Value, with *ir.Value) (ir.Arg, bool) {
	return fxSubstArgLit(a, old, ir.ValueArg(with))
}

// fxSubstArgLit returns a with every operand old replaced by lit (a literal or a value).
func fxSubstArgLit(a ir.Arg, old *ir.Value, lit ir.Arg) (ir.Arg, bool) {
	switch a.Kind {
	case ir.ArgValue:
		if a.Value == old {
			return lit, true
		}
	case ir.ArgList:
		out := make([]ir.Arg, len(a.List))
		changed := false
		for i, e := range a.List {
			var c bool
			out[i], c = fxSubstArgLit(e, old, lit)
			changed = changed || c
		}
		if changed {
			return ir.ListArg(out...), true
		}
	}
	return a, false
}

// ReplaceWithLiteral makes every user of v use the literal lit instead,
// then re-infers the result types of the users (and of their users, as
// far as types change), so the program stays type-valid.
func ReplaceWithLiteral(v *ir.Value, lit ir.Arg) error {
	var users []*ir.Node
	for _, u := range v.Uses() {
		if !fxContainsNodePtr(users, u) {
			users = append(users, u)
		}
	}
	var work []*ir.Node
	for _, u := range users {
		if u.IsReturn() {
			outs := u.Graph.Outputs()
			for i := range outs {
				if a, ok := fxSubstArgLit(outs[i], v, lit); ok {
					u.Graph.SetOutput(i, a)
				}
			}
			continue
		}
		for i := range u.Args {
			if a, ok := fxSubstArgLit(u.Args[i], v, lit); ok {
				u.SetArg(i, a)
			}
		}
		work = append(work, u)
	}
	return Retype(work)
}

// Retype re-infers the result types of the nodes in work and, where a type
// changed, of the nodes that use that result, until nothing changes.
func Retype(work []*ir.Node) error {
	for len(work) > 0 {
		u := work[0]
		work = work[1:]
		if u.IsErased() || u.IsReturn() || u.Op.Info().Infer == nil {
			continue
		}
		types, err := ir.InferTypes(u)
		if err != nil {
			return fmt.Errorf("re-inferring %s: %w", u.Short(), err)
		}
		if len(types) != len(u.Results) {
			return u.Errorf("re-inferred %d results, node has %d", len(types), len(u.Results))
		}
		for i, t := range types {
			r := u.Results[i]
			if ir.TypeEqual(t, r.Type) {
				continue
			}
			r.SetType(t)
			for _, w := range r.Uses() {
				if !w.IsReturn() {
					work = append(work, w)
				}
			}
		}
	}
	return nil
}

// ScalarAsTensor builds a 0-d tensor of dtype dt holding the scalar a (a
// literal or a SymInt/SymFloat/SymBool value), for ops whose Tensor
// overload must replace a Scalar one.
func ScalarAsTensor(b *ir.Builder, a ir.Arg, dt ir.DType) (*ir.Value, error) {
	n, err := b.CallKw(fxOpScalarTensor, []ir.Arg{a}, map[string]ir.Arg{"dtype": ir.DTypeArg(dt)})
	if err != nil {
		return nil, err
	}
	return n.Result(), nil
}

// SymSizeOf returns dim d of t as an int literal when static, else as the
// result of a new sym_size.int node.
func SymSizeOf(b *ir.Builder, t *ir.Value, d int) (ir.Arg, error) {
	tt := t.Tensor()
	if c, ok := tt.Shape[d].Const(); ok {
		return ir.IntArg(c), nil
	}
	v, err := b.Value(OpSymSizeInt, ir.ValueArg(t), ir.IntArg(int64(d)))
	if err != nil {
		return ir.Arg{}, err
	}
	return ir.ValueArg(v), nil
}

var (
	fxOpScalarTensor = ir.OpAtenScalarTensor
	OpSymSizeInt     = ir.OpAtenSymSizeInt
	fxOpToCopy       = ir.OpAten_ToCopy
	OpArange         = ir.OpAtenArange
	OpEqScalar       = ir.OpAtenEqScalar
	OpFullLike       = ir.OpAtenFullLike
)

// CastTo converts v to dtype dt with _to_copy (v itself when it has dt already).
func CastTo(b *ir.Builder, v *ir.Value, dt ir.DType) (*ir.Value, error) {
	if v.Tensor().DType == dt {
		return v, nil
	}
	n, err := b.CallKw(fxOpToCopy, []ir.Arg{ir.ValueArg(v)}, map[string]ir.Arg{"dtype": ir.DTypeArg(dt)})
	if err != nil {
		return nil, err
	}
	return n.Result(), nil
}

var fxOpSliceTensor = ir.OpAtenSliceTensor

// fxFullSliceSource returns the tensor v is a full slice of (slice.Tensor with
// start 0 or None, step 1 and the same type as its input), or nil.
func fxFullSliceSource(v *ir.Value) *ir.Value {
	d := v.Def
	if d == nil || d.Op != fxOpSliceTensor {
		return nil
	}
	src, _ := TensorOperand(d.Arg("self"))
	if src == nil || !ir.TypeEqual(src.Type, v.Type) {
		return nil
	}
	if st := d.Arg("start"); !st.IsNone() && !(st.Kind == ir.ArgInt && st.Int == 0) {
		return nil
	}
	if step := d.Arg("step"); step.Kind != ir.ArgInt || step.Int != 1 {
		return nil
	}
	return src
}

// FullViewChain lists v and the tensors it is a full view of, walking back
// through full slices: [v, its source, …, the base]. An in-place write to v
// writes each of them.
func FullViewChain(v *ir.Value) []*ir.Value {
	out := []*ir.Value{v}
	for src := fxFullSliceSource(v); src != nil; src = fxFullSliceSource(src) {
		out = append(out, src)
	}
	return out
}
