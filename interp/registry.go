package interp

import (
	"fmt"

	"github.com/fxport/fxport/ir"
)

// kernels holds the kernels, registered from the init functions of the
// kernel files.
var kernels = ir.NewOpTable[kernel]("interp kernels")

// register adds a kernel for one or more ops.
func register(k kernel, ops ...ir.Op) { kernels.Add(k, ops...) }

// lookup returns the kernel for op, the op whose schema names its arguments
// and the op whose semantics the kernel implements. In-place and out=
// variants without a kernel of their own run their functional twin.
func lookup(op ir.Op) (k kernel, schema, sem ir.Op) {
	if k, ok := kernels.Lookup(op); ok {
		return k, op, op
	}
	f := op.FunctionalTwin()
	if !f.Valid() {
		return nil, op, op
	}
	fk, ok := kernels.Lookup(f)
	if !ok {
		return nil, op, op
	}
	switch {
	case op.Has(ir.PropInplace):
		return inplaceAdapter(fk), op, f
	case op.Has(ir.PropOutVariant):
		return outAdapter(fk, f), op, f
	}
	return nil, op, op
}

// Supported reports whether the interpreter can run op.
func Supported(op ir.Op) bool {
	k, _, _ := lookup(op)
	return k != nil
}

// Unsupported lists the ops of the op table the interpreter cannot run, in
// table order.
func Unsupported() []ir.Op {
	var out []ir.Op
	for _, op := range ir.AllOps() {
		if !Supported(op) {
			out = append(out, op)
		}
	}
	return out
}

// Nondeterministic reports ops whose results depend on random draws; the
// difference harness does not compare values that depend on them.
func Nondeterministic(op ir.Op) bool { return op.Has(ir.PropRandom) }

// canCast is torch's can_cast for writing a result into an existing tensor:
// no float into an integer, no complex into a real, nothing but bool into bool.
func canCast(from, to ir.DType) bool {
	switch {
	case from.IsComplex() && !to.IsComplex():
		return false
	case isFloatDT(from) && (isIntDT(to) || to == ir.Bool):
		return false
	case from != ir.Bool && to == ir.Bool:
		return false
	}
	return true
}

// inplaceAdapter runs a functional kernel and writes its first result into
// the first argument.
func inplaceAdapter(fk kernel) kernel {
	return func(c *call) ([]Value, error) {
		self, ok := c.args[0].(*Tensor)
		if !ok {
			return nil, fmt.Errorf("in-place op on a %s", kindOf(c.args[0]))
		}
		outs, err := fk(c)
		if err != nil {
			return nil, err
		}
		r, ok := outs[0].(*Tensor)
		if !ok {
			return nil, fmt.Errorf("functional twin returned a %s", kindOf(outs[0]))
		}
		if err := writeInto(self, r); err != nil {
			return nil, err
		}
		return one(self), nil
	}
}

// writeInto copies r into dst in place, as an in-place op's result.
func writeInto(dst, r *Tensor) error {
	if !canCast(r.DType, dst.DType) {
		return fmt.Errorf("result type %s can't be cast to the desired output type %s", r.DType, dst.DType)
	}
	if !sameShape(dst.Shape, r.Shape) {
		b, err := expandTo(r, dst.Shape)
		if err != nil {
			return fmt.Errorf("output with shape %v doesn't match the broadcast shape %v", dst.Shape, r.Shape)
		}
		r = b
	}
	copyInto(dst, r)
	return nil
}

// outAdapter runs a functional kernel and writes its results into the
// out= arguments (resizing them when their shape differs, as torch does).
// The out variant of a factory op (ones.out, full.out, arange.out: the
// functional twin takes a dtype the out schema lacks) produces values in the
// out tensor's dtype, so its result is converted whatever the kinds.
func outAdapter(fk kernel, functional ir.Op) kernel {
	takesDType := functional.ArgIndex("dtype") >= 0
	return func(c *call) ([]Value, error) {
		factory := takesDType && c.schema.ArgIndex("dtype") < 0
		outs, err := fk(c)
		if err != nil {
			return nil, err
		}
		var dests []*Tensor
		for i, a := range c.schema.Info().Schema.Args {
			if !a.Mutates() || i >= len(c.args) {
				continue
			}
			switch v := c.args[i].(type) {
			case *Tensor:
				dests = append(dests, v)
			case []Value:
				ts, err := tensorList(v, a.Name)
				if err != nil {
					return nil, err
				}
				dests = append(dests, ts...)
			}
		}
		var results []Value
		for _, o := range outs {
			if l, ok := o.([]Value); ok {
				results = append(results, l...)
			} else {
				results = append(results, o)
			}
		}
		if len(results) != len(dests) {
			return nil, fmt.Errorf("%d results for %d out= tensors", len(results), len(dests))
		}
		ret := make([]Value, len(dests))
		for i, d := range dests {
			r, ok := results[i].(*Tensor)
			if !ok || d == nil {
				return nil, fmt.Errorf("out= argument %d: not a tensor", i)
			}
			if !factory && !canCast(r.DType, d.DType) {
				return nil, fmt.Errorf("result type %s can't be cast to the desired output type %s", r.DType, d.DType)
			}
			if !sameShape(d.Shape, r.Shape) {
				resizeInPlace(d, r.Shape)
			}
			copyInto(d, r)
			ret[i] = d
		}
		return ret, nil
	}
}

// resizeInPlace gives t a new contiguous storage of the given shape (torch's
// resize_ of an out= tensor); other views of the old storage are detached.
func resizeInPlace(t *Tensor, shape []int64) {
	fresh := NewTensor(t.DType, shape...)
	t.Shape, t.Strides, t.Offset, t.st = fresh.Shape, fresh.Strides, 0, fresh.st
}

func sameShape(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
