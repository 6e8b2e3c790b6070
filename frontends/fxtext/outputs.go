package fxtext

// The return statement, and operator.getitem.

import (
	"strings"

	"github.com/fxport/fxport/ir"
)

// outputs converts the return statement.
func (gb *gbuild) outputs() ([]ir.Arg, error) {
	fn := gb.fn
	if fn.ret == nil {
		return nil, nil
	}
	e := fn.ret
	// "return pytree.tree_unflatten((a, b), self._out_spec)" in unflattened modules.
	if e.kind == eCall && e.fn.kind == eName && strings.HasSuffix(e.fn.name, "tree_unflatten") && len(e.elems) >= 1 {
		e = e.elems[0]
	}
	elems := []*expr{e}
	if e.kind == eTuple || e.kind == eList || e.kind == eDict {
		// A dict (make_fx of a function returning one) flattens to its
		// values in key order, as torch's pytree does.
		elems = e.elems
	}
	var outs []ir.Arg
	var names []string
	var add func(el *expr) error
	add = func(el *expr) error {
		if el.kind == eTuple || el.kind == eList || el.kind == eDict {
			for _, x := range el.elems {
				if err := add(x); err != nil {
					return err
				}
			}
			return nil
		}
		if b, ok := gb.lookup(el); ok {
			name, _ := el.simpleName()
			switch b.kind {
			case bValue:
				outs = append(outs, ir.ValueArg(b.value))
				names = append(names, name)
			case bTuple:
				for _, v := range b.values() {
					outs = append(outs, ir.ValueArg(v))
					names = append(names, v.Name)
				}
			case bNone:
				outs = append(outs, ir.NoneArg())
				names = append(names, "")
			default:
				return gb.errorf(el.pos, "return: %s is a subgraph, not a value", name)
			}
			return nil
		}
		a, err := gb.literalArg(el)
		if err != nil {
			return gb.errorf(el.pos, "return: %v", err)
		}
		outs = append(outs, a)
		names = append(names, "")
		return nil
	}
	for _, el := range elems {
		if err := add(el); err != nil {
			return nil, err
		}
	}
	gb.outNames = names
	return outs, nil
}

// getitem selects result idx of a multi-result node, or builds an
// operator.getitem node on a list- or tuple-typed value.
func (gb *gbuild) getitem(st *fxStmt, baseName string, idx int64) error {
	b, ok := gb.scope[baseName]
	if !ok {
		return gb.nodeErr(st, "undefined name %s", baseName)
	}
	switch b.kind {
	case bTuple:
		i := idx
		if i < 0 {
			i += int64(len(b.elems))
		}
		if i < 0 || i >= int64(len(b.elems)) {
			return gb.nodeErr(st, "index %d out of range: %s has %d results", idx, baseName, len(b.elems))
		}
		gb.bind(st, b.elems[i])
		return nil
	case bValue:
		switch b.value.Type.(type) {
		case *ir.ListType, *ir.TupleType:
			op, _ := ir.LookupOp("operator.getitem")
			return gb.emitCall(st, op, []ir.Arg{ir.ValueArg(b.value), ir.IntArg(idx)})
		}
		return gb.nodeErr(st, "getitem on %s, which has type %s and is not a tuple", baseName, b.value.Type)
	case bNone:
		return gb.nodeErr(st, "getitem on %s, which has no results", baseName)
	}
	return gb.nodeErr(st, "getitem on %s, which is a subgraph", baseName)
}
