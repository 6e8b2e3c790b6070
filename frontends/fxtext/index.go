package fxtext

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/fxport/fxport/ir"
)

// Tensor indexing in Dynamo-level graphs: x[0], x[:, 1:3], x[..., None],
// x[idx] (operator.getitem on a tensor) become the ATen ops torch
// decomposes them into: select.int, slice.Tensor, unsqueeze, index.Tensor.

// indexItem is one element of a subscript.
type indexItem struct {
	kind     byte // 'i' int, 's' slice, 'n' None, 'e' Ellipsis, 't' a value (advanced index)
	i        int64
	bounds   [3]*expr // slice start, stop, step (nil: omitted)
	value    *expr
	original *expr
}

// indexItems splits a subscript into items; ok is false for what fxtext
// does not map.
func (gb *gbuild) indexItems(idx *expr) ([]indexItem, bool) {
	elems := []*expr{idx}
	if idx.kind == eTuple {
		elems = idx.elems
	}
	var out []indexItem
	for _, e := range elems {
		it := indexItem{original: e}
		var wordInt int64
		_, werr := fmt.Sscan(e.name, &wordInt)
		switch {
		case e.kind == eInt:
			it.kind, it.i = 'i', e.i
		case e.kind == eWord && werr == nil && strconv.FormatInt(wordInt, 10) == e.name:
			it.kind, it.i = 'i', wordInt
		case e.kind == eUnary && e.name == "-" && len(e.elems) == 1 && e.elems[0].kind == eInt:
			it.kind, it.i = 'i', -e.elems[0].i
		case isNoneExpr(e):
			it.kind = 'n'
		case (e.kind == eName || e.kind == eWord) && (e.name == "Ellipsis" || e.name == "..."):
			it.kind = 'e'
		case e.kind == eCall && e.fn.kind == eName && e.fn.name == "slice" && len(e.elems) <= 3 && len(e.keys) == 0:
			it.kind = 's'
			b := e.elems
			if len(b) == 1 {
				b = []*expr{nil, b[0], nil}
			}
			for j := range b {
				if b[j] != nil && !isNoneExpr(b[j]) {
					it.bounds[j] = b[j]
				}
			}
		case e.kind == eWord && strings.HasPrefix(e.name, "slice(") && strings.HasSuffix(e.name, ")"):
			parts := strings.Split(e.name[len("slice("):len(e.name)-1], ",")
			if len(parts) != 3 {
				return nil, false
			}
			it.kind = 's'
			for j, p := range parts {
				p = strings.TrimSpace(p)
				if p == "None" {
					continue
				}
				if _, err := strconv.ParseInt(p, 10, 64); err == nil {
					it.bounds[j] = &expr{kind: eWord, name: p, pos: e.pos}
					continue
				}
				it.bounds[j] = &expr{kind: eRef, name: strings.TrimPrefix(p, "%"), pos: e.pos}
			}
		default:
			b, ok := gb.lookup(e)
			if !ok || b.kind != bValue {
				return nil, false
			}
			if t := b.value.Type; ir.AsTensor(t) == nil && !ir.IsUnknown(t) {
				if _, isSym := t.(*ir.SymIntType); isSym {
					it.kind, it.value = 'i', e // x[n] with a SymInt n
					out = append(out, it)
					continue
				}
				return nil, false
			}
			it.kind, it.value = 't', e
		}
		out = append(out, it)
	}
	return out, true
}

// tensorIndex emits the ops for st: base[idx]. done is false when the
// subscript is not one fxtext maps (the caller keeps it opaque).
func (gb *gbuild) tensorIndex(st *fxStmt, base *expr, idx *expr) (bool, error) {
	items, ok := gb.indexItems(idx)
	if !ok {
		return false, nil
	}
	// An advanced index only alone: x[idx].
	for _, it := range items {
		if it.kind == 't' && len(items) != 1 {
			return false, nil
		}
	}
	type step struct {
		op   string
		args []*expr
	}
	num := func(v int64) *expr { return &expr{kind: eInt, i: v, pos: st.pos} }
	var steps []step
	cur := 0 // the dim the next item indexes (from the front)
	ell := -1
	for i, it := range items {
		if it.kind == 'e' {
			if ell >= 0 {
				return false, nil
			}
			ell = i
		}
	}
	front := items
	var back []indexItem
	if ell >= 0 {
		front, back = items[:ell], items[ell+1:]
	}
	for _, it := range front {
		switch it.kind {
		case 'i':
			iv := it.value
			if iv == nil {
				iv = num(it.i)
			}
			steps = append(steps, step{"aten.select.int", []*expr{num(int64(cur)), iv}})
		case 's':
			if it.bounds == [3]*expr{} {
				cur++
				continue
			}
			steps = append(steps, step{"aten.slice.Tensor", sliceArgs(num(int64(cur)), it.bounds)})
			cur++
		case 'n':
			steps = append(steps, step{"aten.unsqueeze.default", []*expr{num(int64(cur))}})
			cur++
		case 't':
			steps = append(steps, step{"aten.index.Tensor", []*expr{{kind: eList, elems: []*expr{it.value}, pos: st.pos}}})
		}
	}
	// After an Ellipsis, items count from the last dim (right to left);
	// trailing Nones add trailing dims first.
	trailing := 0
	for j := len(back) - 1; j >= 0 && back[j].kind == 'n'; j-- {
		steps = append(steps, step{"aten.unsqueeze.default", []*expr{num(-1)}})
		trailing++
	}
	end := int64(-1 - trailing)
	for j := len(back) - 1 - trailing; j >= 0; j-- {
		it := back[j]
		switch it.kind {
		case 'i':
			if it.value != nil {
				return false, nil
			}
			steps = append(steps, step{"aten.select.int", []*expr{num(end), num(it.i)}})
		case 's':
			if it.bounds != [3]*expr{} {
				steps = append(steps, step{"aten.slice.Tensor", sliceArgs(num(end), it.bounds)})
			}
			end--
		default:
			return false, nil
		}
	}
	if len(steps) == 0 {
		b, _ := gb.lookup(base)
		gb.bind(st, b) // x[:] is x
		return true, nil
	}
	cur2 := base
	for i, s := range steps {
		sub := st
		if i < len(steps)-1 {
			sub = &fxStmt{name: gb.fresh(s.op[strings.IndexByte(s.op, '.')+1 : strings.LastIndexByte(s.op, '.')]), pos: st.pos, stack: st.stack}
		}
		if err := gb.call(sub, ir.MustLookupOp(s.op), append([]*expr{cur2}, s.args...), nil, nil); err != nil {
			return true, err
		}
		cur2 = &expr{kind: eName, name: sub.name, pos: st.pos}
	}
	return true, nil
}

func sliceArgs(dim *expr, b [3]*expr) []*expr {
	none := func(e *expr) *expr {
		if e == nil {
			return &expr{kind: eName, name: "None"}
		}
		return e
	}
	step := b[2]
	if step == nil {
		step = &expr{kind: eInt, i: 1}
	}
	return []*expr{dim, none(b[0]), none(b[1]), step}
}
