package run

import (
	"fmt"
	"strings"

	"github.com/fxport/fxport/interp"
	"github.com/fxport/fxport/ir"
	etfb "github.com/fxport/fxport/targets/executorch/fb/executorch_flatbuffer"
)

// opOf maps an Operator entry back to the IR op table: `ns::name` with
// overload `o` is `ns.name.o` (`default` when the overload is empty).
func opOf(o *etfb.OperatorT) (ir.Op, string, error) {
	if o == nil {
		return 0, "", fmt.Errorf("missing operator")
	}
	full := o.Name
	if o.Overload != "" {
		full += "." + o.Overload
	}
	name := strings.Replace(o.Name, "::", ".", 1)
	ov := o.Overload
	if ov == "" {
		ov = "default"
	}
	op, ok := ir.LookupOp(name + "." + ov)
	if !ok {
		return 0, full, fmt.Errorf("operator %s: not in fxport's op table", full)
	}
	return op, full, nil
}

// kernelCall runs one KernelCall: arguments are read from the value table
// in schema order (the out arguments last, then the returns again), the op
// runs in the interpreter, and mutated arguments and returned tensors are
// written into their memory.
func (m *Method) kernelCall(k *etfb.KernelCallT) error {
	if k.OpIndex < 0 || int(k.OpIndex) >= len(m.plan.Operators) {
		return fmt.Errorf("KernelCall: op_index %d out of range", k.OpIndex)
	}
	op, full, err := opOf(m.plan.Operators[k.OpIndex])
	if err != nil {
		return fmt.Errorf("KernelCall: %w", err)
	}
	if op == opETView {
		return m.etView(k)
	}
	if err := m.checkCopyDimOrder(op, k); err != nil {
		return err
	}
	sch := op.Info().Schema
	nargs, nret := len(sch.Args), len(sch.Returns)
	if len(k.Args) != nargs+nret && len(k.Args) != nargs {
		return fmt.Errorf("%s: %d arguments, the schema has %d arguments and %d returns", full, len(k.Args), nargs, nret)
	}
	args := make([]interp.Value, nargs)
	for i, a := range sch.Args {
		v, err := m.argValue(int(k.Args[i]), a.Type)
		if err != nil {
			return fmt.Errorf("%s: argument %d (%s): %w", full, i, a.Name, err)
		}
		args[i] = v
	}
	m.shapeDynamicOuts(sch, k.Args, args)
	outs, err := m.runOp(op, args)
	if err != nil {
		return err
	}
	written := map[int]bool{}
	for i, a := range sch.Args {
		if !a.Mutates() {
			continue
		}
		vi := int(k.Args[i])
		if err := m.store(vi, args[i]); err != nil {
			return fmt.Errorf("%s: argument %d (%s): %w", full, i, a.Name, err)
		}
		written[vi] = true
	}
	if len(k.Args) == nargs {
		return nil
	}
	if len(outs) != nret {
		return fmt.Errorf("%s: %d results for %d returns", full, len(outs), nret)
	}
	for j := range nret {
		vi := int(k.Args[nargs+j])
		if written[vi] {
			continue
		}
		if err := m.store(vi, outs[j]); err != nil {
			return fmt.Errorf("%s: return %d: %w", full, j, err)
		}
	}
	return nil
}

// argValue reads value vi as an argument of schema type t: ScalarType,
// Layout and MemoryFormat arguments are c10 enum Ints.
func (m *Method) argValue(vi int, t ir.SchemaType) (interp.Value, error) {
	v, err := m.value(vi)
	if err != nil {
		return nil, err
	}
	i, isInt := v.(int64)
	if !isInt || t.List {
		return v, nil
	}
	switch t.Base {
	case ir.KScalarType:
		return dtypeOf(etfb.ScalarType(i))
	case ir.KLayout:
		if i != 0 {
			return nil, fmt.Errorf("layout code %d: only strided (0) is supported", i)
		}
		return ir.LayoutStrided, nil
	case ir.KMemoryFormat:
		return memoryFormatOf(i)
	}
	return v, nil
}

// store writes a kernel's result into value vi: tensors into their memory,
// tensor lists element by element, scalars into the value table.
func (m *Method) store(vi int, r interp.Value) error {
	if vi < 0 || vi >= len(m.vals) {
		return fmt.Errorf("value index %d out of range", vi)
	}
	switch dst := m.vals[vi].(type) {
	case *slot:
		t, ok := r.(*interp.Tensor)
		if !ok {
			return fmt.Errorf("%s for tensor value %d", interp.Describe(r), vi)
		}
		return dst.write(t)
	case tensorList:
		l, ok := r.([]interp.Value)
		if !ok || len(l) != len(dst) {
			return fmt.Errorf("%s for a %d-tensor list (value %d)", interp.Describe(r), len(dst), vi)
		}
		for i, e := range dst {
			if int(e) >= 0 && int(e) < len(m.vals) && isList(m.vals[e]) {
				return fmt.Errorf("item %d: value %d is a list inside list %d", i, e, vi)
			}
			if err := m.store(int(e), l[i]); err != nil {
				return fmt.Errorf("item %d: %w", i, err)
			}
		}
		return nil
	case nil:
		if r == nil {
			return nil
		}
	}
	switch r.(type) {
	case int64, float64, bool:
		m.vals[vi] = r
		return nil
	case *interp.Tensor:
		return fmt.Errorf("a tensor result for non-tensor value %d (%T)", vi, m.vals[vi])
	}
	m.vals[vi] = r
	return nil
}

// shapeDynamicOuts gives each dynamic-bound out argument the shape of the
// op's self argument, as ExecuTorch's kernels resize their out tensor before
// writing: copies whose out shape must match self then see the actual shape,
// not the planned upper bound (other ops resize out themselves). The tensor
// handed to the kernel is a fresh one; the arena is written afterwards.
func (m *Method) shapeDynamicOuts(sch ir.Schema, vis []int32, args []interp.Value) {
	si := -1
	for i, a := range sch.Args {
		if a.Name == "self" {
			si = i
		}
	}
	if si < 0 {
		return
	}
	self, ok := args[si].(*interp.Tensor)
	if !ok {
		return
	}
	for i, a := range sch.Args {
		if !a.Mutates() || i == si || vis[i] == vis[si] {
			continue
		}
		s, ok := m.vals[vis[i]].(*slot)
		out, isT := args[i].(*interp.Tensor)
		if !ok || !isT || s.dyn == etfb.TensorShapeDynamismSTATIC || out.Rank() != self.Rank() {
			continue
		}
		args[i] = interp.NewTensor(out.DType, self.Shape...)
	}
}

// runOp runs op; an out variant whose functional twin takes a dtype the
// out variant lacks (factories such as ones.out, full.out) runs the twin
// with the out tensor's dtype, as ExecuTorch's kernels fill out in its own
// dtype, and copies the result into out.
func (m *Method) runOp(op ir.Op, args []interp.Value) ([]interp.Value, error) {
	info := op.Info()
	if info.Props&ir.PropOutVariant == 0 || info.Functional == "" || op.ArgIndex("dtype") >= 0 {
		return interp.RunOp(op, args)
	}
	fn, ok := ir.LookupOp(info.Functional)
	if !ok || fn.ArgIndex("dtype") < 0 {
		return interp.RunOp(op, args)
	}
	oi := op.ArgIndex("out")
	if oi < 0 || oi >= len(args) {
		return interp.RunOp(op, args)
	}
	out, ok := args[oi].(*interp.Tensor)
	if !ok {
		return interp.RunOp(op, args)
	}
	fargs := make([]interp.Value, len(fn.Info().Schema.Args))
	for i, a := range fn.Info().Schema.Args {
		switch j := op.ArgIndex(a.Name); {
		case a.Name == "dtype":
			fargs[i] = out.DType
		case j >= 0 && j < len(args):
			fargs[i] = args[j]
		case a.Type.Base == ir.KBool && a.Default == "False":
			fargs[i] = false
		}
	}
	res, err := interp.RunOp(fn, fargs)
	if err != nil {
		return nil, err
	}
	r, ok := res[0].(*interp.Tensor)
	if !ok {
		return nil, fmt.Errorf("%s returned %s", fn, interp.Describe(res[0]))
	}
	args[oi] = r
	return []interp.Value{r}, nil
}
