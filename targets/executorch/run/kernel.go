package run

import (
	"fmt"
	"strings"

	"github.com/fxport/fxport/interp"
	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/targets/executorch/callconv"
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
	nargs := len(sch.Args)
	if want := callconv.Arity(&sch); len(k.Args) != want {
		return fmt.Errorf("%s: %d arguments, its kernel takes %d (%d schema arguments and %s): the runtime refuses the call (InvalidProgram)", full, len(k.Args), want, nargs, callconv.ReturnSlot(&sch))
	}
	args := make([]interp.Value, nargs)
	for i, a := range sch.Args {
		if err := m.checkKind(int(k.Args[i]), a.Type); err != nil {
			return fmt.Errorf("%s: argument %d (%s): %w", full, i, a.Name, err)
		}
		v, err := m.argValue(int(k.Args[i]), a.Type)
		if err != nil {
			return fmt.Errorf("%s: argument %d (%s): %w", full, i, a.Name, err)
		}
		args[i] = v
	}
	if err := kernelRefuses(op, args); err != nil {
		return fmt.Errorf("%s: %w", full, err)
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
		if l, ok := m.vals[vi].(tensorList); ok {
			for _, e := range l {
				written[int(e)] = true
			}
		}
	}
	return m.storeReturn(full, &sch, k.Args[nargs:], outs, written)
}

// storeReturn writes the op's results into a kernel call's return slot
// (callconv), except for out variants, whose out arguments the call
// already wrote.
func (m *Method) storeReturn(full string, sch *ir.Schema, slot []int32, outs []interp.Value, written map[int]bool) error {
	kind := callconv.ReturnSlot(sch)
	if kind == callconv.NoSlot {
		return nil
	}
	vi := int(slot[0])
	if vi < 0 || vi >= len(m.vals) {
		return fmt.Errorf("%s: return value index %d out of range (%d values)", full, vi, len(m.vals))
	}
	if callconv.IsOut(sch) {
		// The out arguments hold the results; the runtime's kernel wrapper
		// does not read or write an out variant's return slot (a slot that
		// is not the out tensors still runs on the genuine runtime).
		return nil
	}
	if kind == callconv.ListSlot {
		res := interp.Value(outs)
		if len(sch.Returns) == 1 && len(outs) == 1 { // one Tensor[] return
			res = outs[0]
		}
		if err := m.store(vi, res); err != nil {
			return fmt.Errorf("%s: return: %w", full, err)
		}
		return nil
	}
	if written[vi] {
		return nil
	}
	if len(outs) != 1 {
		return fmt.Errorf("%s: %d results for one return value", full, len(outs))
	}
	if err := m.store(vi, outs[0]); err != nil {
		return fmt.Errorf("%s: return: %w", full, err)
	}
	return nil
}

// checkKind refuses value vi where a kernel argument of schema type t
// cannot read it: the runtime's EValue accessors (toTensor, toInt,
// toDouble, toBool, toScalar, toIntList, …) abort on a value of another
// kind, so such a call would crash the genuine runtime.
func (m *Method) checkKind(vi int, t ir.SchemaType) error {
	if vi < 0 || vi >= len(m.vals) {
		return fmt.Errorf("value index %d out of range (%d values)", vi, len(m.vals))
	}
	v := m.vals[vi]
	if v == nil {
		if t.Optional {
			return nil
		}
		if t.Base == ir.KTensor && !t.List {
			return fmt.Errorf("a None value where the kernel expects a Tensor (exir passes an empty BYTE tensor)")
		}
		if t.Base == ir.KScalarType || t.Base == ir.KLayout || t.Base == ir.KMemoryFormat || t.Base == ir.KDevice {
			return nil
		}
		return fmt.Errorf("a None value where the kernel expects %s", t)
	}
	ok := true
	want := t.String()
	if t.List {
		switch t.Base {
		case ir.KInt, ir.KSymInt:
			_, ok = v.(intList)
			want = "an IntList"
		case ir.KFloat, ir.KSymFloat:
			_, ok = v.(doubleList)
			want = "a DoubleList"
		case ir.KBool, ir.KSymBool:
			_, ok = v.(boolList)
			want = "a BoolList"
		case ir.KTensor:
			if t.ElemOptional {
				_, ok = v.(optTensorList)
				want = "an OptionalTensorList"
			} else {
				_, ok = v.(tensorList)
				want = "a TensorList"
			}
		}
	} else {
		switch t.Base {
		case ir.KTensor:
			_, ok = v.(*slot)
			want = "a Tensor"
		case ir.KInt, ir.KSymInt, ir.KScalarType, ir.KLayout, ir.KMemoryFormat:
			_, ok = v.(int64)
			want = "an Int"
		case ir.KFloat, ir.KSymFloat:
			_, ok = v.(float64)
			want = "a Double"
		case ir.KBool, ir.KSymBool:
			_, ok = v.(bool)
			want = "a Bool"
		case ir.KScalar:
			switch v.(type) {
			case int64, float64, bool:
			default:
				ok = false
			}
			want = "a Scalar (Int, Double or Bool)"
		case ir.KStr:
			_, ok = v.(string)
			want = "a String"
		}
	}
	if !ok {
		return fmt.Errorf("%s value where the kernel expects %s (%s): the runtime aborts reading it", kindName(v), want, t)
	}
	return nil
}

// kindName names the EValue kind of a value-table entry.
func kindName(v any) string {
	switch x := v.(type) {
	case nil:
		return "a None"
	case *slot:
		return "a Tensor"
	case int64:
		return fmt.Sprintf("an Int (%d)", x)
	case float64:
		return fmt.Sprintf("a Double (%g)", x)
	case bool:
		return fmt.Sprintf("a Bool (%t)", x)
	case string:
		return "a String"
	case intList:
		return "an IntList"
	case doubleList:
		return "a DoubleList"
	case boolList:
		return "a BoolList"
	case tensorList:
		return "a TensorList"
	case optTensorList:
		return "an OptionalTensorList"
	}
	return fmt.Sprintf("a %T", v)
}

var opConvolutionOut = ir.OpAtenConvolutionOut

// kernelRefuses reports operands a portable kernel refuses (it fails the
// call with InvalidArgument): convolution.out takes 3-D and 4-D inputs only.
func kernelRefuses(op ir.Op, args []interp.Value) error {
	if op != opConvolutionOut || len(args) == 0 {
		return nil
	}
	if in, ok := args[0].(*interp.Tensor); ok && in.Rank() != 3 && in.Rank() != 4 {
		return fmt.Errorf("a %d-D input: the portable kernel takes 3-D and 4-D inputs only (the runtime fails the call)", in.Rank())
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
	fn := op.FunctionalTwin()
	if !op.Has(ir.PropOutVariant) || !fn.Valid() || op.ArgIndex("dtype") >= 0 {
		return interp.RunOp(op, args)
	}
	if fn.ArgIndex("dtype") < 0 {
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
