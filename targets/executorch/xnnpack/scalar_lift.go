package xnnpack

import (
	"encoding/binary"
	"fmt"
	"math"
	"strconv"

	"github.com/fxport/fxport/ir"
)

// Lifted scalar operands. exir's to_edge turns a Python number in a tensor
// slot into a tensor (ScalarToTensorPass: torch.tensor(value), so a float
// is a 0-d fp32 tensor and an int a 0-d int64 one), lifts it into a
// constant placeholder (_lifted_tensor_constant, input kind
// CONSTANT_TENSOR), and casts an operand whose dtype differs from the op's
// (RemoveMixedTypeOperators: _to_copy, which becomes _to_dim_order_copy).
// The op is then a plain binary op of the generic configs, and its constant
// is an input of the lowered module (const_external.go): x * 2.0 on fp32 is
// DelegateCall [x, c, out] (ecn_xnnpack_mul_scalar_dynamic_bound.pte), and
// x[0, 0] * 64 reads the int64 constant through a portable
// _to_dim_order_copy (djl_mixed_xnnpack_portable_stress_mlp.pte).
//
// liftScalars does the same for the binary ops the partitioner would
// otherwise claim (fp32 operand and result, alpha 1, config not
// excluded); other ops keep their literal (the portable kernels take it as
// a Scalar).
//
// The .Scalar overloads (add/sub/mul/div.Scalar) are rewritten into their
// .Tensor form with the same lifted constant. exir itself never lifts a
// .Scalar overload (ScalarToTensorPass coerces only numbers in Tensor
// slots), but it never sees the ones fxport's decompositions write either:
// torch's decomposition of hardsigmoid is clamp(clamp(x + 3, min=0),
// max=6) / 6, traced as add.Tensor(x, 3) and div.Tensor(·, 6), whose
// literals ScalarToTensorPass lifts (an int one as an int64 constant that
// RemoveMixedTypeOperators casts), so XNNPACK's Add/Div configs claim the
// whole block; decompose-to-core writes add.Scalar and div.Scalar (and
// rsub.Scalar as add.Scalar(mul.Scalar(x, −alpha), s)). Turning them back
// into the .Tensor form gives the graph exir partitions. A .Scalar op with
// alpha ≠ 1 is left as it is, as exir leaves an add.Tensor with alpha ≠ 1
// to the portable kernels (AddConfig/SubConfig require alpha 1);
// clamp and hardtanh take their bounds as node parameters (XNNClamp's
// output_min_max) and need no constant.

var liftOps = map[ir.Op]bool{ir.OpAtenAddTensor: true, ir.OpAtenSubTensor: true, ir.OpAtenMulTensor: true, ir.OpAtenDivTensor: true}

// tensorForms maps each .Scalar overload liftScalars rewrites to its
// .Tensor form (whose rule and config decide whether it is lifted).
var tensorForms = map[ir.Op]ir.Op{
	ir.OpAtenAddScalar: ir.OpAtenAddTensor,
	ir.OpAtenSubScalar: ir.OpAtenSubTensor,
	ir.OpAtenMulScalar: ir.OpAtenMulTensor,
	ir.OpAtenDivScalar: ir.OpAtenDivTensor,
}

var opToDimOrderCopy = ir.OpDimOrderOps_ToDimOrderCopy

// liftScalars rewrites the literal second operand of each liftable binary
// op of the main graph into a lifted 0-d constant.
func (c *checker) liftScalars() error {
	var names liftNames
	for _, n := range c.p.Main.Nodes() {
		if !c.liftable(n) {
			continue
		}
		lit := n.Args[1]
		dt, data := ir.Float32, make([]byte, 4)
		if lit.Kind == ir.ArgInt {
			dt, data = ir.Int64, make([]byte, 8)
			binary.LittleEndian.PutUint64(data, uint64(lit.Int))
		} else {
			binary.LittleEndian.PutUint32(data, math.Float32bits(float32(lit.Float)))
		}
		v, err := c.liftConstant(dt, data, &names)
		if err != nil {
			return n.Errorf("xnnpack partition: lifting the scalar operand: %v", err)
		}
		operand := v
		if dt != ir.Float32 {
			b := ir.NewBuilder(c.p.Main)
			b.SetInsertBefore(n)
			b.Pass = "xnnpack-partition"
			cast, err := b.CallKw(opToDimOrderCopy, []ir.Arg{ir.ValueArg(v)}, map[string]ir.Arg{
				"dtype": ir.DTypeArg(ir.Float32), "dim_order": ir.IntsArg(),
			})
			if err != nil {
				return n.Errorf("xnnpack partition: casting the lifted scalar: %v", err)
			}
			operand = cast.Results[0]
		}
		if op, ok := tensorForms[n.Op]; ok {
			if err := retarget(n, op, operand); err != nil {
				return n.Errorf("xnnpack partition: rewriting %s as %s: %v", n.Op.Info().Name, op.Info().Name, err)
			}
			continue
		}
		n.SetArg(1, ir.ValueArg(operand))
	}
	return nil
}

// retarget replaces the .Scalar node n by op (its .Tensor form) applied
// to n's tensor operand and other, with alpha 1 (liftable required it),
// n's result type, name and metadata.
func retarget(n *ir.Node, op ir.Op, other *ir.Value) error {
	args, err := ir.BindArgs(op, []ir.Arg{n.Args[0], ir.ValueArg(other)}, nil)
	if err != nil {
		return err
	}
	b := ir.NewBuilder(n.Graph)
	b.SetInsertBefore(n)
	b.Pass = "xnnpack-partition"
	meta := n.Meta.Clone()
	b.Meta = &meta
	m, err := b.Raw(op, args, []ir.Type{n.Results[0].Type}, nil)
	if err != nil {
		return err
	}
	old, name := n.Results[0], n.Results[0].Name
	old.ReplaceAllUsesWith(m.Results[0])
	if err := n.Erase(); err != nil {
		return err
	}
	return m.Results[0].Rename(name)
}

// liftable: a binary op of liftOps, or a .Scalar overload of one
// (tensorForms), whose second operand is a number literal, whose first
// operand and result are fp32 tensors the common constraints accept, with
// alpha 1 and the config of its .Tensor form not excluded.
func (c *checker) liftable(n *ir.Node) bool {
	op := n.Op
	if t, ok := tensorForms[op]; ok {
		op = t
	}
	name := op
	if !liftOps[name] || c.exclude[ruleOf(op).config] || len(n.Args) < 2 || len(n.Results) != 1 {
		return false
	}
	if k := n.Args[1].Kind; k != ir.ArgInt && k != ir.ArgFloat {
		return false
	}
	x := n.Args[0]
	if x.Kind != ir.ArgValue || x.Value.Tensor() == nil || x.Value.Tensor().DType != ir.Float32 {
		return false
	}
	r := n.Results[0]
	if r.Tensor() == nil || r.Tensor().DType != ir.Float32 {
		return false
	}
	if c.tensorOKAs(x.Value, false) != "" || c.tensorOKAs(r, false) != "" {
		return false
	}
	if name == ir.OpAtenAddTensor || name == ir.OpAtenSubTensor {
		return checkAlphaOne(c, n) == ""
	}
	return true
}

// liftNames hands out the names of lifted constants: the next free
// _lifted_tensor_constant<N>, skipping the names weights and signature
// targets already hold (taken, built once at the first lift).
type liftNames struct {
	next  int
	taken map[string]bool
}

// fresh returns the next free name and marks it taken.
func (l *liftNames) fresh(p *ir.Program) string {
	if l.taken == nil {
		l.taken = make(map[string]bool, len(p.Signature.Inputs))
		for _, s := range p.Signature.Inputs {
			l.taken[s.Target] = true
		}
	}
	for {
		name := "_lifted_tensor_constant" + strconv.Itoa(l.next)
		l.next++
		if p.Weight(name) == nil && !l.taken[name] {
			l.taken[name] = true
			return name
		}
	}
}

// liftConstant adds a 0-d constant placeholder holding data (after the
// last parameter, buffer or constant input, as exir orders lifted
// constants) with its weight, named _lifted_tensor_constant<N> (names).
func (c *checker) liftConstant(dt ir.DType, data []byte, names *liftNames) (*ir.Value, error) {
	p := c.p
	name := names.fresh(p)
	if len(p.Signature.Inputs) != len(p.Main.Inputs) {
		return nil, fmt.Errorf("signature has %d inputs for %d graph inputs", len(p.Signature.Inputs), len(p.Main.Inputs))
	}
	pos := 0
	for i := len(p.Signature.Inputs) - 1; i >= 0; i-- {
		switch p.Signature.Inputs[i].Kind {
		case ir.Parameter, ir.Buffer, ir.ConstantTensor, ir.CustomObj:
			pos = i + 1
		}
		if pos > 0 {
			break
		}
	}
	t := ir.TensorOf(dt, nil)
	v, err := p.Main.InsertInput(pos, p.Main.FreshName(name), t)
	if err != nil {
		return nil, err
	}
	specs := append(p.Signature.Inputs, ir.InputSpec{})
	copy(specs[pos+1:], specs[pos:])
	specs[pos] = ir.InputSpec{Kind: ir.ConstantTensor, Name: v.Name, Target: name}
	p.Signature.Inputs = specs
	wt := *t
	p.AddWeight(&ir.Weight{Name: name, Type: &wt, Source: &ir.InlineSource{Data: data}})
	c.consts[v] = true
	return v, nil
}
