package bundle

import (
	"fmt"

	"github.com/fxport/fxport/interp"
	"github.com/fxport/fxport/ir"
	etfb "github.com/fxport/fxport/targets/executorch/fb/executorch_flatbuffer"
	"github.com/fxport/fxport/targets/executorch/pte"
	etrun "github.com/fxport/fxport/targets/executorch/run"
)

// Origin says where a case's expected outputs came from.
type Origin int

const (
	// FromFiles: every expected output was read from output_<i>.npy.
	FromFiles Origin = iota
	// FromInterpreter: every expected output was computed by the reference
	// interpreter on the unlowered program (the directory had none).
	FromInterpreter
	// FromBoth: the user outputs were read from the files, the leading
	// mutated-buffer outputs (which torch does not save) computed by the
	// interpreter.
	FromBoth
)

func (o Origin) String() string {
	switch o {
	case FromFiles:
		return "expected outputs from the directory's output_<i>.npy"
	case FromInterpreter:
		return "expected outputs computed with the interpreter on the unlowered program (no output_<i>.npy)"
	}
	return "user outputs from the directory's output_<i>.npy, mutated-buffer outputs computed with the interpreter on the unlowered program"
}

// Suite builds the test suite of method (the program's only method when
// "") of f, the decoded .pte fxport emitted from src (src is the program
// before lowering: the interpreter runs it when a case lacks expected
// outputs). It returns the suite and, per case, where its expected outputs
// came from.
func Suite(src *ir.Program, f *pte.File, method string, cases []Case) (pte.BundledSuite, []Origin, error) {
	plan, err := findPlan(f, method)
	if err != nil {
		return pte.BundledSuite{}, nil, err
	}
	s := pte.BundledSuite{Method: plan.Name}
	var origins []Origin
	for ci, c := range cases {
		bc, o, err := buildCase(src, plan, c)
		if err != nil {
			return pte.BundledSuite{}, nil, fmt.Errorf("test case %d (%s): %w", ci, c.Dir, err)
		}
		s.Cases = append(s.Cases, bc)
		origins = append(origins, o)
	}
	return s, origins, nil
}

func findPlan(f *pte.File, method string) (*etfb.ExecutionPlanT, error) {
	var names []string
	for _, m := range f.Methods {
		names = append(names, m.Plan.Name)
		if m.Plan.Name == method || (method == "" && len(f.Methods) == 1) {
			return m.Plan, nil
		}
	}
	if method == "" {
		return nil, fmt.Errorf("%s: %d methods (%v): name the one to bundle", f.Name, len(names), names)
	}
	return nil, fmt.Errorf("%s: no method %q (methods: %v)", f.Name, method, names)
}

func buildCase(src *ir.Program, plan *etfb.ExecutionPlanT, c Case) (pte.BundledCase, Origin, error) {
	var bc pte.BundledCase
	if len(c.Inputs) != len(plan.Inputs) {
		return bc, 0, fmt.Errorf("%d inputs, method %s takes %d", len(c.Inputs), plan.Name, len(plan.Inputs))
	}
	for i, x := range c.Inputs {
		v, err := Value(x, plan.Values[plan.Inputs[i]])
		if err != nil {
			return bc, 0, fmt.Errorf("input %d: %w", i, err)
		}
		bc.Inputs = append(bc.Inputs, v)
	}
	outs, origin := c.Outputs, FromFiles
	switch n := len(plan.Outputs); {
	case len(outs) > n:
		return bc, 0, fmt.Errorf("%d expected outputs, method %s returns %d", len(outs), plan.Name, n)
	case len(outs) < n:
		// No outputs, or torch's user outputs only: the method also
		// returns the mutated buffers first. The interpreter computes
		// what the files lack.
		if src == nil {
			return bc, 0, fmt.Errorf("%d expected outputs for %d method outputs, and no program to compute the rest with", len(outs), n)
		}
		res, err := interp.Run(src, c.Inputs, interp.Options{})
		if err != nil {
			return bc, 0, fmt.Errorf("computing the expected outputs: %w", err)
		}
		if len(res.Outputs) != n {
			return bc, 0, fmt.Errorf("the interpreted program returns %d outputs, method %s %d", len(res.Outputs), plan.Name, n)
		}
		for i, r := range res.Random {
			if r {
				return bc, 0, fmt.Errorf("output %d depends on a random op: the interpreter cannot compute its expected value", i)
			}
		}
		if len(outs) == 0 {
			outs, origin = res.Outputs, FromInterpreter
		} else {
			outs, origin = append(append([]interp.Value(nil), res.Outputs[:n-len(outs)]...), outs...), FromBoth
		}
	}
	for i, x := range outs {
		v, err := Value(x, plan.Values[plan.Outputs[i]])
		if err != nil {
			return bc, 0, fmt.Errorf("expected output %d: %w", i, err)
		}
		bc.ExpectedOutputs = append(bc.ExpectedOutputs, v)
	}
	return bc, origin, nil
}

// Value converts an interpreter value into a bundled value of the kind
// decl (the method's declared input or output) has: a tensor of its scalar
// type and rank, laid out in its dim order; an Int, Bool or Double from a
// Go scalar or a one-element tensor.
func Value(x interp.Value, decl *etfb.EValueT) (pte.BundledValue, error) {
	if decl == nil || decl.Val == nil {
		return pte.BundledValue{}, fmt.Errorf("the method's value is missing")
	}
	if decl.Val.Type != etfb.KernelTypesTensor {
		return scalarValue(x, decl.Val.Type)
	}
	t, ok := x.(*interp.Tensor)
	if !ok {
		return pte.BundledValue{}, fmt.Errorf("got %s for a tensor", interp.Describe(x))
	}
	want := decl.Val.Value.(*etfb.TensorT)
	st, err := etrun.ScalarTypeOf(t.DType)
	if err != nil {
		return pte.BundledValue{}, err
	}
	if st != want.ScalarType || len(t.Shape) != len(want.Sizes) {
		return pte.BundledValue{}, fmt.Errorf("got %s%v, the method declares %s with sizes %v", t.DType.Abbr(), t.Shape, want.ScalarType, want.Sizes)
	}
	bt := &pte.BundledTensorData{ScalarType: st, DimOrder: append([]uint8(nil), want.DimOrder...)}
	if len(bt.DimOrder) != len(t.Shape) {
		bt.DimOrder = make([]uint8, len(t.Shape))
		for i := range bt.DimOrder {
			bt.DimOrder[i] = uint8(i)
		}
	}
	for _, d := range t.Shape {
		if d > 1<<31-1 {
			return pte.BundledValue{}, fmt.Errorf("size %d does not fit an int32", d)
		}
		bt.Sizes = append(bt.Sizes, int32(d))
	}
	phys, err := physical(t, bt.DimOrder)
	if err != nil {
		return pte.BundledValue{}, err
	}
	bt.Data = phys.Contiguous().Bytes()
	if err := bt.Check(); err != nil {
		return pte.BundledValue{}, err
	}
	return pte.BundledValue{Kind: pte.BundledTensor, Tensor: bt}, nil
}

// physical permutes t so that its dimensions run in dim order.
func physical(t *interp.Tensor, order []uint8) (*interp.Tensor, error) {
	identity := true
	perm := make([]interp.Value, len(order))
	for i, d := range order {
		perm[i] = int64(d)
		identity = identity && int(d) == i
	}
	if identity {
		return t, nil
	}
	outs, err := interp.RunOp(ir.OpAtenPermute, []interp.Value{t, perm})
	if err != nil {
		return nil, fmt.Errorf("laying out in dim order %v: %w", order, err)
	}
	return outs[0].(*interp.Tensor), nil
}

func scalarValue(x interp.Value, kind etfb.KernelTypes) (pte.BundledValue, error) {
	if t, ok := x.(*interp.Tensor); ok {
		if t.Numel() != 1 {
			return pte.BundledValue{}, fmt.Errorf("a %d-element tensor for a %s", t.Numel(), kind)
		}
		item, err := t.Item()
		if err != nil {
			return pte.BundledValue{}, err
		}
		x = item
	}
	switch kind {
	case etfb.KernelTypesInt:
		switch v := x.(type) {
		case int64:
			return pte.BundledValue{Kind: pte.BundledInt, Int: v}, nil
		case bool:
			return pte.BundledValue{}, fmt.Errorf("a bool for an Int")
		}
	case etfb.KernelTypesBool:
		switch v := x.(type) {
		case bool:
			return pte.BundledValue{Kind: pte.BundledBool, Bool: v}, nil
		case int64:
			if v == 0 || v == 1 {
				return pte.BundledValue{Kind: pte.BundledBool, Bool: v == 1}, nil
			}
		}
	case etfb.KernelTypesDouble:
		switch v := x.(type) {
		case float64:
			return pte.BundledValue{Kind: pte.BundledDouble, Double: v}, nil
		case int64:
			return pte.BundledValue{Kind: pte.BundledDouble, Double: float64(v)}, nil
		}
	default:
		return pte.BundledValue{}, fmt.Errorf("the method's value is a %s, which a bundled program cannot hold", kind)
	}
	return pte.BundledValue{}, fmt.Errorf("got %s for a %s", interp.Describe(x), kind)
}
