package passes

import (
	"fmt"
	"strings"

	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/pm"
)

// ContiguousConstants stores every strided weight contiguously (ET-PF04).
var ContiguousConstants = pm.RegisterProgramFix(&pm.ProgramFix{
	ID:      "ET-PF04",
	Name:    "contiguous-constants",
	Backend: pm.BackendExecuTorch,
	Stage:   pm.StageFXProgramFixes,
	Requires: []pm.Requirement{{
		After: etDropAssertsName,
		Why:   "the Python fixes run in catalog order (ET-PF03 before ET-PF04)",
	}},
	Doc: `store parameters, buffers and constants with non-contiguous strides contiguously

ExecuTorch serializes constants in the default dim order, so a weight whose
strides are not the row-major ones of its shape (a transposed parameter, a
permuted buffer) is rewritten like tensor.contiguous() in Python: its
strides and storage offset are cleared and its source becomes a
contiguous(src=…, itemsize=…, shape=…, strides=…, offset=…) source that
reorders the original bytes when they are opened. Nothing is read by the
pass itself: weights stay lazy, and the wrapper prints and parses back as
IR text. On Open it reads the original storage once and yields the
contiguous bytes in chunks. Graph inputs that carry such a weight get the
default dim order, and the dim orders of the nodes derived from them are
re-inferred. Strides that differ only on dims of size 1 are contiguous
already. Weights without data (no source) just lose their strides.

fxport rewrites the weight rather than inserting a clone after the
placeholder, as Python does, so the program does not copy the weight at
every call.`,
	Fix: contiguousConstants,
})

func contiguousConstants(p *ir.Program, c *pm.Ctx) (bool, error) {
	var fixed []string
	for _, w := range p.Weights {
		if w.Strides == nil || w.Type == nil {
			continue
		}
		shape, ok := w.Type.StaticShape()
		if !ok {
			return false, fmt.Errorf("weight %q: symbolic shape %s", w.Name, w.Type)
		}
		if len(w.Strides) != len(shape) {
			return false, fmt.Errorf("weight %q: %d strides for %d dims", w.Name, len(w.Strides), len(shape))
		}
		if etStridesContiguous(shape, w.Strides) {
			// Contiguous (a view at an offset included), as torch sees it.
			continue
		}
		if w.Source != nil {
			src, err := newContiguousSource(w.Source, int64(w.Type.DType.Size()), shape, w.Strides, w.StorageOffset)
			if err != nil {
				return false, fmt.Errorf("weight %q: %w", w.Name, err)
			}
			w.Source = src
		}
		fixed = append(fixed, fmt.Sprintf("%q (strides %v)", w.Name, w.Strides))
		w.Strides = nil
		w.StorageOffset = 0
		if err := etContiguousPlaceholders(p, w.Name); err != nil {
			return false, err
		}
		c.Stat("contiguous-weights", 1)
	}
	if len(fixed) == 0 {
		return false, nil
	}
	c.Fired(nil, "made contiguous: "+strings.Join(fixed, ", "))
	return true, nil
}

// etStridesContiguous reports whether strides are the row-major strides of
// shape, ignoring dims of size 1.
func etStridesContiguous(shape, strides []int64) bool {
	want := int64(1)
	for i := len(shape) - 1; i >= 0; i-- {
		if shape[i] != 1 && strides[i] != want {
			return false
		}
		want *= shape[i]
	}
	return true
}

// etContiguousPlaceholders gives the main-graph inputs bound to weight name
// the default dim order and re-infers the dim orders of the nodes that
// depend on them.
func etContiguousPlaceholders(p *ir.Program, name string) error {
	g := p.Main
	if g == nil {
		return nil
	}
	changed := map[*ir.Value]bool{}
	for i, spec := range p.Signature.Inputs {
		if i >= len(g.Inputs) || spec.Target != name {
			continue
		}
		in := g.Inputs[i]
		t := in.Tensor()
		if t == nil || t.IsContiguous() {
			continue
		}
		nt := *t
		nt.DimOrder = nil
		in.SetType(&nt)
		changed[in] = true
	}
	if len(changed) == 0 {
		return nil
	}
	for n := g.First(); n != nil; n = n.Next() {
		touched := false
		for _, v := range n.Operands() {
			touched = touched || changed[v]
		}
		if !touched {
			continue
		}
		types, err := ir.InferTypes(n)
		if err != nil {
			return fmt.Errorf("%s: re-inferring after making weight %q contiguous: %w", n.Short(), name, err)
		}
		for i, r := range n.Results {
			if i >= len(types) || ir.TypeEqual(types[i], r.Type) {
				continue
			}
			if !etSameButDimOrder(types[i], r.Type) {
				continue
			}
			r.SetType(types[i])
			changed[r] = true
		}
	}
	return nil
}

// etSameButDimOrder reports whether a and b are tensor types equal up to
// their dim orders.
func etSameButDimOrder(a, b ir.Type) bool {
	ta, tb := ir.AsTensor(a), ir.AsTensor(b)
	if ta == nil || tb == nil {
		return false
	}
	ca, cb := *ta, *tb
	ca.DimOrder, cb.DimOrder = nil, nil
	return ir.TypeEqual(&ca, &cb)
}
