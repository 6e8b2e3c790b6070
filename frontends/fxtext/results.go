package fxtext

import (
	"fmt"
	"strings"

	"github.com/fxport/fxport/ir"
)

// Result handling. FX gives a multi-result node one name and selects its
// results with getitem nodes; the IR gives the node one result per element,
// so the getitem statements name (and, in the readable form, type) the
// results and disappear. torch's .pt2 serializer does the same.

// slot is one position of a node's result tuple as FX sees it: an IR
// result index, or a nested tuple (with_effects wraps a multi-result op's
// results in a tuple after the token).
type slot struct {
	index int
	elems []slot
}

// isTupleLike reports ops whose FX value is a tuple: several returns, a list
// return, or a higher-order op's Any[].
func isTupleLike(op ir.Op) bool {
	rs := op.Info().Schema.Returns
	return len(rs) != 1 || rs[0].Type.List
}

// resultCount is how many results the node has: from the schema when it is
// fixed, otherwise from shape inference, otherwise from the getitems.
func (gb *gbuild) resultCount(st *fxStmt, op ir.Op, args []ir.Arg) (int, error) {
	rs := op.Info().Schema.Returns
	fixed := true
	for _, r := range rs {
		if r.Type.List {
			fixed = false
		}
	}
	if fixed {
		if len(rs) == 1 && rs[0].Type.Base == ir.KNone {
			return 0, nil
		}
		return len(rs), nil
	}
	// A detached probe: no graph, so no symbols are declared for it.
	probe := &ir.Node{Op: op, Args: args}
	types, err := ir.InferTypes(probe)
	if err == nil {
		return len(types), nil
	}
	if items := gb.items[st.name]; st.name != "" && len(items) > 0 {
		n := int64(0)
		for i := range items {
			if i >= n {
				n = i + 1
			}
		}
		return int(n), nil
	}
	if isOpaque(op) || anyUnknown(args) {
		return 1, nil // nothing selects from it: one value, typed later or never
	}
	return 0, gb.nodeErr(st, "cannot tell how many results %s has: shape inference failed (%v) and no getitem selects them", op, unwrapNodeError(err))
}

// layoutOf maps FX tuple positions to IR results.
func layoutOf(op ir.Op, k int) []slot {
	if op.Info().Name == "higher_order.with_effects" && k > 2 {
		inner := make([]slot, k-1)
		for i := range inner {
			inner[i] = slot{index: i + 1}
		}
		return []slot{{index: 0}, {index: -1, elems: inner}}
	}
	out := make([]slot, k)
	for i := range out {
		out[i] = slot{index: i}
	}
	return out
}

// nameSlots takes result names and annotations from the getitem statements
// that select from base.
func (gb *gbuild) nameSlots(base string, layout []slot, names []string, annots []*annot) {
	items := gb.items[base]
	for j, s := range layout {
		it := items[int64(j)]
		if it == nil {
			continue
		}
		if s.index >= 0 {
			names[s.index], annots[s.index] = it.name, it.annot
		} else {
			gb.nameSlots(it.name, s.elems, names, annots)
		}
	}
}

func bindSlots(layout []slot, results []*ir.Value) binding {
	b := binding{kind: bTuple}
	for _, s := range layout {
		if s.index >= 0 {
			b.elems = append(b.elems, binding{kind: bValue, value: results[s.index]})
		} else {
			b.elems = append(b.elems, bindSlots(s.elems, results))
		}
	}
	return b
}

// emitCall creates the node for st with bound arguments: it names and types
// the results and binds st's name.
func (gb *gbuild) emitCall(st *fxStmt, op ir.Op, args []ir.Arg) error {
	k, err := gb.resultCount(st, op, args)
	if err != nil {
		return err
	}
	name := st.name
	if st.rebind {
		name = gb.fresh(st.name) // "x += y" gives x a new value
	}
	if name == "" {
		name = gb.fresh(op.Info().Base)
	}
	names := make([]string, k)
	annots := make([]*annot, k)
	direct := !isTupleLike(op) || (k == 1 && len(gb.items[st.name]) == 0)
	if !isTupleLike(op) && k > 1 {
		return gb.nodeErr(st, "%s returns %d results for a single return", op, k)
	}
	var layout []slot
	if direct {
		if k == 1 {
			names[0], annots[0] = name, st.annot
		}
	} else {
		layout = layoutOf(op, k)
		if st.name != "" {
			gb.nameSlots(st.name, layout, names, annots)
		}
		for i := range names {
			if names[i] == "" {
				names[i] = gb.fresh(fmt.Sprintf("%s_unused_%d", name, i))
			}
		}
	}
	needInfer := gb.opts.CheckTypes || op.Has(ir.PropHigherOrder)
	types := make([]ir.Type, k)
	isSym := make([]bool, k)
	for i, a := range annots {
		if a != nil {
			t, s, ok, err := annotType(a.text)
			if err != nil {
				return errAt(gb.file, a.pos, "node %%%s: %v", names[i], err)
			}
			if ok {
				types[i] = t
			}
			isSym[i] = s
			needInfer = needInfer || s
		}
		if types[i] == nil {
			needInfer = true
		}
	}
	tmp := make([]ir.Type, k)
	for i, t := range types {
		tmp[i] = t
		if t == nil {
			tmp[i] = ir.None
		}
	}
	n, err := gb.ib.Raw(op, args, tmp, names)
	if err != nil {
		return gb.nodeErr(st, "%v", err)
	}
	if needInfer {
		inferred, ierr := ir.InferTypes(n)
		if ierr == nil && len(inferred) != k {
			ierr = fmt.Errorf("shape inference gives %d results, the node has %d", len(inferred), k)
		}
		for i := range types {
			switch {
			case types[i] == nil:
				if ierr != nil {
					if isOpaque(op) || op.Info().Infer == nil || anyUnknown(args) {
						types[i] = ir.Unknown
						if t := opaqueOutType(op, args); t != nil && k == 1 {
							types[i] = t
						}
						continue
					}
					_ = n.Erase()
					return gb.nodeErr(st, "no type for %%%s: the dump does not annotate it and shape inference failed: %v", names[i], unwrapNodeError(ierr))
				}
				types[i] = inferred[i]
			case ierr != nil:
			case isSym[i] && !sameKind(types[i], inferred[i]):
				// "Sym(...)" also annotates SymFloat and SymBool values.
				types[i] = inferred[i]
			case isTokenType(inferred[i]):
				// torch annotates effect tokens as empty tensors.
				types[i] = inferred[i]
			case gb.opts.CheckTypes && !ir.TypesCompatible(types[i], inferred[i]):
				_ = n.Erase()
				return gb.nodeErr(st, "%%%s is annotated %s, shape inference gives %s", names[i], types[i], inferred[i])
			}
		}
	}
	for i, t := range types {
		n.Results[i].SetType(t)
		gb.declareSymbols(t)
	}
	if st.stack != "" {
		n.Meta.Set(ir.MetaStackTrace, st.stack)
	}
	if isOpaque(op) && gb.opaqueWhy != "" {
		n.Meta.Set(MetaNote, gb.opaqueWhy)
	}
	switch {
	case k == 0:
		gb.bind(st, binding{kind: bNone})
	case direct:
		gb.bind(st, binding{kind: bValue, value: n.Results[0]})
	default:
		gb.bind(st, bindSlots(layout, n.Results))
	}
	return nil
}

func isTokenType(t ir.Type) bool { _, ok := t.(*ir.TokenType); return ok }

// sameKind reports types of the same kind (both SymInt, both tensors, ...).
func sameKind(a, b ir.Type) bool { return fmt.Sprintf("%T", a) == fmt.Sprintf("%T", b) }

var opaqueOp = ir.MustLookupOp("opaque.call.default")

func isOpaque(op ir.Op) bool { return op == opaqueOp }

// anyUnknown reports an argument whose value has an unknown type.
func anyUnknown(args []ir.Arg) bool {
	for _, a := range args {
		switch a.Kind {
		case ir.ArgValue:
			if ir.IsUnknown(a.Value.Type) {
				return true
			}
		case ir.ArgList:
			if anyUnknown(a.List) {
				return true
			}
		}
	}
	return false
}

// opaqueOutType is the type of an opaque out-variant call
// (aten.sin.out(x, out=alloc)): the type of its out argument, which it
// returns; nil otherwise.
func opaqueOutType(op ir.Op, args []ir.Arg) ir.Type {
	if !isOpaque(op) || len(args) < 2 || args[0].Kind != ir.ArgString || args[1].Kind != ir.ArgList {
		return nil
	}
	target := args[0].Str
	if !strings.HasSuffix(target, ".out") && !strings.HasSuffix(target, "_out") {
		return nil
	}
	keys := args[1].List
	vals := args[len(args)-len(keys):]
	for i, k := range keys {
		if k.Str == "out" && vals[i].Kind == ir.ArgValue && !ir.IsUnknown(vals[i].Value.Type) {
			return vals[i].Value.Type
		}
	}
	return nil
}
