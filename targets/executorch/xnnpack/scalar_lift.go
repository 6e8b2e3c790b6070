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

var liftOps = map[string]bool{"aten.add.Tensor": true, "aten.sub.Tensor": true, "aten.mul.Tensor": true, "aten.div.Tensor": true}

var opToDimOrderCopy = ir.MustLookupOp("dim_order_ops._to_dim_order_copy.default")

// liftScalars rewrites the literal second operand of each liftable binary
// op of the main graph into a lifted 0-d constant.
func (c *checker) liftScalars() error {
	next := 0
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
		v, err := c.liftConstant(dt, data, &next)
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
		n.SetArg(1, ir.ValueArg(operand))
	}
	return nil
}

// liftable: a binary op of liftOps whose second operand is a number
// literal, whose first operand and result are fp32 tensors the common
// constraints accept, with alpha 1 and its config not excluded.
func (c *checker) liftable(n *ir.Node) bool {
	name := n.Op.Info().Name
	if !liftOps[name] || c.exclude[rules[n.Op].config] || len(n.Args) < 2 || len(n.Results) != 1 {
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
	if name == "aten.add.Tensor" || name == "aten.sub.Tensor" {
		return checkAlphaOne(c, n) == ""
	}
	return true
}

// liftConstant adds a 0-d constant placeholder holding data (after the
// last parameter, buffer or constant input, as exir orders lifted
// constants) with its weight, named _lifted_tensor_constant<N>.
func (c *checker) liftConstant(dt ir.DType, data []byte, next *int) (*ir.Value, error) {
	p := c.p
	name := ""
	for {
		name = "_lifted_tensor_constant" + strconv.Itoa(*next)
		*next++
		if p.Weight(name) == nil && !c.targetTaken(name) {
			break
		}
	}
	if len(p.Signature.Inputs) != len(p.Main.Inputs) {
		return nil, fmt.Errorf("signature has %d inputs for %d graph inputs", len(p.Signature.Inputs), len(p.Main.Inputs))
	}
	pos := 0
	for i, spec := range p.Signature.Inputs {
		switch spec.Kind {
		case ir.Parameter, ir.Buffer, ir.ConstantTensor, ir.CustomObj:
			pos = i + 1
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

func (c *checker) targetTaken(name string) bool {
	for _, s := range c.p.Signature.Inputs {
		if s.Target == name {
			return true
		}
	}
	return false
}
