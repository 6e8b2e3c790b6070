package ir

import (
	"fmt"

	"github.com/fxport/fxport/ir/sym"
)

// Reduction rules: sum/mean/amax/any/var…, arg-reductions, reductions that
// also return indices, cumulative ops, sort and topk.

// reduceDims reads the dims to reduce from the named argument: an int, a
// list of ints, None or a missing argument (= every dim). With emptyAll an
// empty list also means every dim, as in torch's sum(dim=[]); prims reduce
// nothing for an empty list.
func reduceDims(c *InferCtx, name string, rank int, emptyAll bool) ([]bool, error) {
	mask := make([]bool, rank)
	a := namedOrNone(c, name)
	all := func() []bool {
		for i := range mask {
			mask[i] = true
		}
		return mask
	}
	if a.Kind == ArgNone {
		return all(), nil
	}
	dims, err := intListOf(a, name)
	if err != nil {
		return nil, err
	}
	if len(dims) == 0 && emptyAll {
		return all(), nil
	}
	for _, d := range dims {
		n, err := normDim(d, rank)
		if err != nil {
			return nil, err
		}
		if rank == 0 {
			continue
		}
		if mask[n] {
			return nil, fmt.Errorf("dim %d appears multiple times in the list of dims", n)
		}
		mask[n] = true
	}
	return mask, nil
}

// reducedShape drops (or, with keepdim, sets to 1) the masked dims.
func reducedShape(shape []sym.Expr, mask []bool, keepdim bool) []sym.Expr {
	out := []sym.Expr{}
	for i, d := range shape {
		switch {
		case !mask[i]:
			out = append(out, d)
		case keepdim:
			out = append(out, sym.Const(1))
		}
	}
	return out
}

// reduction reads self, the dims and keepdim and returns self and the reduced shape.
func reduction(c *InferCtx) (*TensorType, []sym.Expr, error) {
	t, err := tensorAt(c, 0)
	if err != nil {
		return nil, nil, err
	}
	mask, err := reduceDims(c, "dim", t.Rank(), true)
	if err != nil {
		return nil, nil, err
	}
	keepdim := false
	if hasArg(c, "keepdim") {
		if keepdim, err = c.Bool("keepdim"); err != nil {
			return nil, nil, err
		}
	}
	return t, reducedShape(t.Shape, mask, keepdim), nil
}

// inferReduceSum: sum/prod/nansum: integer and bool inputs accumulate in
// int64 unless dtype is given.
func inferReduceSum(c *InferCtx) ([]Type, error) {
	t, shape, err := reduction(c)
	if err != nil {
		return nil, err
	}
	dt := t.DType
	if isIntegral(dt) {
		dt = Int64
	}
	if d, ok, err := dtypeArg(c, "dtype"); err != nil {
		return nil, err
	} else if ok {
		dt = d
	}
	return one(withShapeDType(t, shape, dt)), nil
}

// inferReduceMean: mean needs a floating or complex input (or a dtype).
func inferReduceMean(c *InferCtx) ([]Type, error) {
	t, shape, err := reduction(c)
	if err != nil {
		return nil, err
	}
	dt := t.DType
	if d, ok, err := dtypeArg(c, "dtype"); err != nil {
		return nil, err
	} else if ok {
		dt = d
	}
	if isIntegral(dt) {
		return nil, fmt.Errorf("mean(): could not infer output dtype: input dtype must be floating point or complex, got %s", dt)
	}
	return one(withShapeDType(t, shape, dt)), nil
}

// inferReduceSame: amax/amin/max()/min(): the input's dtype.
func inferReduceSame(c *InferCtx) ([]Type, error) {
	t, shape, err := reduction(c)
	if err != nil {
		return nil, err
	}
	return one(withShapeDType(t, shape, t.DType)), nil
}

// inferReduceBool: any/all: bool (uint8 stays uint8, as in torch).
func inferReduceBool(c *InferCtx) ([]Type, error) {
	t, shape, err := reduction(c)
	if err != nil {
		return nil, err
	}
	dt := Bool
	if t.DType == Uint8 {
		dt = Uint8
	}
	return one(withShapeDType(t, shape, dt)), nil
}

// inferReduceFloat: logsumexp/norm/linalg_vector_norm: floating results
// (integers give the default float, complex gives its real type; an explicit
// dtype wins).
func inferReduceFloat(c *InferCtx) ([]Type, error) {
	t, shape, err := reduction(c)
	if err != nil {
		return nil, err
	}
	dt := toFloatIfIntegral(t.DType)
	if c.Op().Info().Base != "logsumexp" {
		dt = dt.ToReal()
	}
	if d, ok, err := dtypeArg(c, "dtype"); err != nil {
		return nil, err
	} else if ok {
		dt = d.ToReal()
	}
	return one(withShapeDType(t, shape, dt)), nil
}

// inferReduceVar: var/std: floating or complex input, real result.
func inferReduceVar(c *InferCtx) ([]Type, error) {
	t, shape, err := reduction(c)
	if err != nil {
		return nil, err
	}
	if isIntegral(t.DType) {
		return nil, fmt.Errorf("std and var only support floating point and complex dtypes, got %s", t.DType)
	}
	return one(withShapeDType(t, shape, t.DType.ToReal())), nil
}

// inferVarMean: (var, mean).
func inferVarMean(c *InferCtx) ([]Type, error) {
	t, shape, err := reduction(c)
	if err != nil {
		return nil, err
	}
	if isIntegral(t.DType) {
		return nil, fmt.Errorf("var_mean only supports floating point and complex dtypes, got %s", t.DType)
	}
	return []Type{withShapeDType(t, shape, t.DType.ToReal()), withShapeDType(t, shape, t.DType)}, nil
}

// inferArgreduce: argmax/argmin: int64; dim=None reduces everything.
func inferArgreduce(c *InferCtx) ([]Type, error) {
	t, shape, err := reduction(c)
	if err != nil {
		return nil, err
	}
	return one(withShapeDType(t, shape, Int64)), nil
}

// inferReduceWithIndices: max.dim/min.dim: (values, int64 indices).
func inferReduceWithIndices(c *InferCtx) ([]Type, error) {
	t, shape, err := reduction(c)
	if err != nil {
		return nil, err
	}
	return []Type{withShapeDType(t, shape, t.DType), withShapeDType(t, append([]sym.Expr(nil), shape...), Int64)}, nil
}

// checkedDim reads the named dim argument and normalizes it for t.
func checkedDim(c *InferCtx, name string, t *TensorType) (int, error) {
	d, err := c.Int(name)
	if err != nil {
		return 0, err
	}
	return normDim(d, t.Rank())
}

// inferCumulative: cumsum/cumprod: same shape; integers accumulate in int64
// unless dtype is given.
func inferCumulative(c *InferCtx) ([]Type, error) {
	t, err := tensorAt(c, 0)
	if err != nil {
		return nil, err
	}
	if _, err := checkedDim(c, "dim", t); err != nil {
		return nil, err
	}
	dt := t.DType
	if isIntegral(dt) {
		dt = Int64
	}
	if d, ok, err := dtypeArg(c, "dtype"); err != nil {
		return nil, err
	} else if ok {
		dt = d
	}
	return one(withShapeDType(t, append([]sym.Expr(nil), t.Shape...), dt)), nil
}

// inferCumulativeWithIndices: cummax/cummin: (values, int64 indices), same shape.
func inferCumulativeWithIndices(c *InferCtx) ([]Type, error) {
	t, err := tensorAt(c, 0)
	if err != nil {
		return nil, err
	}
	if _, err := checkedDim(c, "dim", t); err != nil {
		return nil, err
	}
	return []Type{cloneTensor(t), withShapeDType(t, append([]sym.Expr(nil), t.Shape...), Int64)}, nil
}

// inferSort: (values, int64 indices), same shape.
func inferSort(c *InferCtx) ([]Type, error) {
	return inferCumulativeWithIndices(c)
}

// inferArgsort: int64 indices, same shape.
func inferArgsort(c *InferCtx) ([]Type, error) {
	t, err := tensorAt(c, 0)
	if err != nil {
		return nil, err
	}
	if _, err := checkedDim(c, "dim", t); err != nil {
		return nil, err
	}
	return one(withShapeDType(t, append([]sym.Expr(nil), t.Shape...), Int64)), nil
}

// inferTopk: (values, indices) with dim replaced by k.
func inferTopk(c *InferCtx) ([]Type, error) {
	t, err := tensorAt(c, 0)
	if err != nil {
		return nil, err
	}
	dim, err := checkedDim(c, "dim", t)
	if err != nil {
		return nil, err
	}
	k, err := c.SymInt("k")
	if err != nil {
		return nil, err
	}
	if err := checkNonNegative(c, k, "k"); err != nil {
		return nil, err
	}
	shape := append([]sym.Expr(nil), t.Shape...)
	if t.Rank() == 0 {
		if kv, ok := k.Const(); ok && kv > 1 {
			return nil, fmt.Errorf("selected index k out of range")
		}
		return []Type{cloneTensor(t), withShapeDType(t, nil, Int64)}, nil
	}
	if knownTrue(c, sym.Gt(k, shape[dim])) {
		return nil, fmt.Errorf("selected index k=%s out of range for dim of size %s", k, shape[dim])
	}
	shape[dim] = k
	return []Type{withShapeDType(t, shape, t.DType), withShapeDType(t, append([]sym.Expr(nil), shape...), Int64)}, nil
}

// inferPrimsReduce: prims.sum/prod/amax/amin/var(inp, dims, output_dtype):
// no keepdim; dims=None reduces everything.
func inferPrimsReduce(c *InferCtx) ([]Type, error) {
	t, err := tensorAt(c, 0)
	if err != nil {
		return nil, err
	}
	mask, err := reduceDims(c, "dims", t.Rank(), false)
	if err != nil {
		return nil, err
	}
	dt := t.DType
	if c.Op().Info().Base == "var" {
		dt = dt.ToReal()
	}
	if d, ok, err := dtypeArg(c, "output_dtype"); err != nil {
		return nil, err
	} else if ok {
		dt = d
	}
	return one(withShapeDType(t, reducedShape(t.Shape, mask, false), dt)), nil
}
