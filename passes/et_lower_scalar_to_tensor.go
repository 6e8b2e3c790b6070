package passes

import (
	"fmt"
	"strconv"

	"github.com/fxport/fxport/interp"
	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/pm"
)

// ScalarToTensor turns scalars in Tensor argument slots into 0-dim tensors
// (exir's ScalarToTensorPass and the constant lifting after it): ExecuTorch's kernels read a Tensor argument with
// EValue::toTensor, which aborts on an Int, Double or Bool.
var ScalarToTensor = etlLowering(&pm.Pass{
	Name: etlScalarToTensorName,
	Doc: `give every Tensor argument a tensor: literals become 0-dim lifted constants (full([], v) inside regions)

torch.export records Python numbers where a schema takes a Tensor
(mul.Tensor(x, 0.5), div.Tensor(x, 4), add.Tensor(x, 1e-05)): eager
torch wraps them, but an ExecuTorch kernel reads its Tensor arguments with
EValue::toTensor and aborts on a scalar EValue, so the genuine runtime
crashes on such a call. exir's to_edge runs ScalarToTensorPass (a literal
becomes torch.tensor(value), lifted by lift_constant_tensor_pass). Here, in the main
graph and control-flow regions (not inside delegates), each plain Tensor
argument (not Tensor?, not a list) holding an int, float or bool literal
gets a 0-dim constant: a new graph input of kind constant_tensor named
_lifted_tensor_constant<N> (the first free N), placed after the last
parameter/buffer/constant input, whose inline weight holds the value. Its
dtype is the node's result_type over its Tensor arguments with the literal
counted as a Python scalar — what exir's RemoveMixedTypeOperators casts
add/mul/sub/div/minimum's constants to — so the result dtype does not
change (x: f16 * 0.5 reads an f16 0.5; x: i64 * 0.5 an f32 0.5). One
constant serves every use of the same dtype and value. Inside a
control-flow region (whose nodes cannot read a new main-graph input) the
tensor is made by aten.full.default([], value, dtype=…) before the node
(full.out runs on the portable library). The IR verifier already refuses a
SymInt, SymFloat or SymBool value in a Tensor slot. Statistics "constants" (new inputs) and
"rewritten" (arguments).`,
	Run: runScalarToTensor,
})

const etlScalarToTensorName = "scalar-to-tensor"

// etlS2TKey identifies one lifted scalar constant.
type etlS2TKey struct {
	dt  ir.DType
	lit string
}

func runScalarToTensor(p *ir.Program, c *pm.Ctx) (pm.Result, error) {
	st := &etlS2TState{p: p, c: c, made: map[etlS2TKey]*ir.Value{}}
	err := etlEachNode(p, func(n *ir.Node) error {
		if n.Op == OpMemoryAlloc || n.Op.Has(ir.PropHigherOrder) || len(n.Regions()) > 0 {
			return nil
		}
		info := n.Op.Info()
		if info.Schema.VarArgs {
			return nil
		}
		for i, a := range info.Schema.Args {
			if i >= len(n.Args) || a.Type.Base != ir.KTensor || a.Type.List || a.Type.Optional {
				continue
			}
			if err := st.rewrite(n, i); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return pm.Result{}, err
	}
	return pm.Result{Changed: st.changed}, nil
}

type etlS2TState struct {
	p       *ir.Program
	c       *pm.Ctx
	made    map[etlS2TKey]*ir.Value // main-graph constants by dtype and value
	next    int
	changed bool
}

// rewrite gives argument i of n (a plain Tensor slot) a tensor when it
// holds a scalar.
func (st *etlS2TState) rewrite(n *ir.Node, i int) error {
	a := n.Args[i]
	switch a.Kind {
	case ir.ArgInt, ir.ArgFloat, ir.ArgBool:
	default:
		return nil // a tensor (the IR verifier refuses symbolic scalars there)
	}
	dt, err := etlS2TDType(n)
	if err != nil {
		return n.Errorf("%s: argument %q: %v", etlScalarToTensorName, n.Op.Info().Schema.Args[i].Name, err)
	}
	var v *ir.Value
	if n.Graph != st.p.Main {
		v, err = st.full(n, a, dt)
	} else {
		v, err = st.constant(a, dt)
	}
	if err != nil {
		return n.Errorf("%s: argument %q: %v", etlScalarToTensorName, n.Op.Info().Schema.Args[i].Name, err)
	}
	n.SetArg(i, ir.ValueArg(v))
	n.AddProvenance(etlScalarToTensorName)
	st.c.Stat("rewritten", 1)
	st.c.Fired(n, fmt.Sprintf("scalar %s → 0-dim %s tensor %s", a, dt, v.Name))
	st.changed = true
	return nil
}

// etlS2TDType is the dtype of n's scalar operands as tensors: torch's
// result_type over n's plain Tensor arguments, literals and symbolic
// scalars counted as Python scalars.
func etlS2TDType(n *ir.Node) (ir.DType, error) {
	var args []ir.Arg
	for i, a := range n.Op.Info().Schema.Args {
		if i < len(n.Args) && a.Type.Base == ir.KTensor && !a.Type.List && n.Args[i].Kind != ir.ArgNone {
			args = append(args, n.Args[i])
		}
	}
	dt, err := ir.ResultType(args...)
	if err != nil {
		return ir.Undefined, err
	}
	if dt == ir.Undefined {
		return ir.Undefined, fmt.Errorf("no common dtype for %v", args)
	}
	return dt, nil
}

// full builds aten.full.default([], a, dtype=dt) before n.
func (st *etlS2TState) full(n *ir.Node, a ir.Arg, dt ir.DType) (*ir.Value, error) {
	b := ir.NewBuilder(n.Graph)
	b.SetInsertBefore(n)
	b.Pass = etlScalarToTensorName
	meta := n.Meta.Clone()
	b.Meta = &meta
	nn, err := b.CallKw(etlOpFull, nil, map[string]ir.Arg{
		"size":       ir.ListArg(),
		"fill_value": a,
		"dtype":      ir.DTypeArg(dt),
	})
	if err != nil {
		return nil, fmt.Errorf("building full: %w", err)
	}
	return nn.Results[0], nil
}

// constant returns the main-graph constant input holding a as a 0-dim dt
// tensor, adding it when new.
func (st *etlS2TState) constant(a ir.Arg, dt ir.DType) (*ir.Value, error) {
	key := etlS2TKey{dt: dt, lit: a.Kind.String() + ":" + a.String()}
	if v, ok := st.made[key]; ok {
		return v, nil
	}
	var t *interp.Tensor
	switch a.Kind {
	case ir.ArgFloat:
		t = interp.Scalar0(dt, a.Float)
	case ir.ArgInt:
		if dt.IsFloat() {
			t = interp.Scalar0(dt, float64(a.Int))
		} else {
			t = interp.ScalarInt0(dt, a.Int)
		}
	case ir.ArgBool:
		b := int64(0)
		if a.Bool() {
			b = 1
		}
		if dt.IsFloat() {
			t = interp.Scalar0(dt, float64(b))
		} else {
			t = interp.ScalarInt0(dt, b)
		}
	default:
		return nil, fmt.Errorf("%s is not a literal", a)
	}
	typ := &ir.TensorType{DType: dt}
	w := &ir.Weight{Name: st.freshName(), Type: typ, Source: &ir.InlineSource{Data: t.Bytes()}}
	p, g := st.p, st.p.Main
	pos := 0
	for i, spec := range p.Signature.Inputs {
		switch spec.Kind {
		case ir.Parameter, ir.Buffer, ir.ConstantTensor, ir.CustomObj:
			pos = i + 1
		}
	}
	v, err := g.InsertInput(pos, g.FreshName(w.Name), typ)
	if err != nil {
		return nil, err
	}
	specs := append(p.Signature.Inputs, ir.InputSpec{})
	copy(specs[pos+1:], specs[pos:])
	specs[pos] = ir.InputSpec{Kind: ir.ConstantTensor, Name: v.Name, Target: w.Name}
	p.Signature.Inputs = specs
	p.AddWeight(w)
	st.made[key] = v
	st.c.Stat("constants", 1)
	return v, nil
}

// freshName returns the next _lifted_tensor_constant<N> that no weight or
// input target uses.
func (st *etlS2TState) freshName() string {
	taken := map[string]bool{}
	for _, s := range st.p.Signature.Inputs {
		taken[s.Target] = true
	}
	for {
		name := "_lifted_tensor_constant" + strconv.Itoa(st.next)
		st.next++
		if !taken[name] && st.p.Weight(name) == nil {
			return name
		}
	}
}
