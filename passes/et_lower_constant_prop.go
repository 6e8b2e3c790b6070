package passes

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/fxport/fxport/interp"
	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/pm"
)

// ConstantPropagation folds the nodes whose operands are all constants into
// new lifted constants whose weights compute the op lazily (exir's
// constant_prop_pass, which to_executorch runs when
// do_quant_fusion_and_const_prop is set).
var ConstantPropagation = etlLoweringOptional(&pm.Pass{
	Name: etlConstPropName,
	Doc: `fold nodes whose operands are all constants into new lifted constants (exir's constant_prop_pass; off by default)

exir's constant_prop_pass evaluates every call whose arguments are all
constants and replaces it by a new lifted constant. Its default flow does
not run it on the program: to_executorch calls it (through
quant_fusion_and_const_prop_pass, right after to_edge_transform_and_lower's
partitioning) only when ExecutorchBackendConfig.do_quant_fusion_and_const_prop
is set, and the genuine files keep such computations (the stress MLP's
int64 lifted 64 is cast by a portable _to_dim_order_copy; a + 1 casts its
int64 1 the same way). So this pass does nothing unless its option
enable=true (the flag's counterpart). Enabled, it evaluates, in the main
graph in order, each node whose tensor operands are parameters, buffers the
program does not mutate, lifted constants or earlier folded results, and
whose other arguments are literals, with the reference interpreter's kernel
for its op. Skipped, as exir skips them: aten.full.default (a fold would
only grow the file), quantization primitives (quantized_decomposed.*,
torchao.*), random ops and ops with side effects, in-place, out= or view
semantics; skipped besides: ops without an interpreter kernel, results with
symbolic shapes, a non-default dim order, a device, or more than max-bytes
bytes (0: no limit, as exir has none), results the graph returns (exir
would return a clone of the new constant; the node is left to compute it),
nodes inside delegate or control-flow regions, and weights without data.
Each folded result that a kept node reads becomes a new graph input of kind
constant_tensor, placed after the last parameter/buffer/constant input,
named as exir names them: _prop_tensor_constant<N>, N counting up from the
program's number of lifted constants (non-persistent buffers included)
with the last such node in graph order first, and skipping taken names.
Its weight is a const_prop(...) source: the op, its literal arguments and
the sources of its operands (nested for chains), so nothing is computed
until the weight is read (when the file is written). Folded nodes are
erased; constant inputs left without users are removed, with their weights
unless another input names them. Each new constant fires on its first user;
statistics "folded" (nodes) and "constants" (new inputs).`,
	Requires: []pm.Requirement{
		{After: etlFoldViewsName, Why: "views and permutes of constants fold cheaper as byte views of the original weight"},
	},
	Options: []pm.OptionSpec{
		pm.BoolOption("enable", false, "fold (exir's ExecutorchBackendConfig.do_quant_fusion_and_const_prop, False by default)"),
		{Name: "max-bytes", Doc: "fold only results of at most this many bytes (0: no limit)", Default: "0", Check: func(v string) error {
			if n, err := strconv.ParseInt(v, 10, 64); err != nil || n < 0 {
				return fmt.Errorf("want a byte count ≥ 0, got %q", v)
			}
			return nil
		}},
	},
	Run: runConstantPropagation,
})

const etlConstPropName = "constant-propagation"

var etlOpFull = ir.OpAtenFull

// etlConstVal is a constant value of the main graph: its type and the
// source of its contiguous bytes.
type etlConstVal struct {
	dt    ir.DType
	shape []int64
	src   ir.WeightSource
}

func runConstantPropagation(p *ir.Program, c *pm.Ctx) (pm.Result, error) {
	g := p.Main
	if !c.BoolOption("enable") || g == nil || len(p.Signature.Inputs) != len(g.Inputs) {
		return pm.Result{}, nil
	}
	maxBytes, err := strconv.ParseInt(c.Option("max-bytes"), 10, 64)
	if err != nil {
		return pm.Result{}, fmt.Errorf("%s: max-bytes: %w", etlConstPropName, err)
	}
	weights := etConstantWeights(p)
	consts := map[*ir.Value]etlConstVal{}
	for v, w := range weights {
		if cv, ok := etlWeightConst(w); ok {
			consts[v] = cv
		}
	}
	var folded []*ir.Node
	isFolded := map[*ir.Node]bool{}
	for _, n := range g.Nodes() {
		if n.IsErased() {
			continue
		}
		vals, why := etlConstPropEval(n, consts, maxBytes)
		if vals == nil {
			if why != "" {
				c.Debugf(n, "not folded: %s", why)
			}
			continue
		}
		for i, r := range n.Results {
			consts[r] = vals[i]
		}
		folded = append(folded, n)
		isFolded[n] = true
	}
	if len(folded) == 0 {
		return pm.Result{}, nil
	}
	// The folded results some kept node reads become new constants.
	var keep []*ir.Value
	for _, n := range folded {
		for _, r := range n.Results {
			for _, u := range r.Uses() {
				if !isFolded[u] {
					keep = append(keep, r)
					break
				}
			}
		}
	}
	names := etlConstPropNames(p, len(keep))
	pos := 0
	for i, spec := range p.Signature.Inputs {
		switch spec.Kind {
		case ir.Parameter, ir.Buffer, ir.ConstantTensor, ir.CustomObj:
			pos = i + 1
		}
	}
	// exir names the last kept result first and places the inputs in name
	// order, so the input order is the reverse of the graph order.
	for i := len(keep) - 1; i >= 0; i-- {
		r := keep[i]
		cv := consts[r]
		name := names[len(keep)-1-i]
		wt := ir.Tensor(cv.dt, cv.shape...)
		nw := &ir.Weight{Name: name, Type: wt, Source: cv.src}
		v, err := g.InsertInput(pos, g.FreshName(name), wt)
		if err != nil {
			return pm.Result{}, fmt.Errorf("%s: %w", etlConstPropName, err)
		}
		specs := append(p.Signature.Inputs, ir.InputSpec{})
		copy(specs[pos+1:], specs[pos:])
		specs[pos] = ir.InputSpec{Kind: ir.ConstantTensor, Name: v.Name, Target: name}
		p.Signature.Inputs = specs
		pos++
		p.AddWeight(nw)
		weights[v] = nw
		first := r.Uses()[0]
		r.ReplaceAllUsesWith(v)
		c.Stat("constants", 1)
		c.Fired(first, fmt.Sprintf("%s folded into constant %s", r.Name, v.Name))
	}
	for i := len(folded) - 1; i >= 0; i-- {
		n := folded[i]
		for _, r := range n.Results {
			if r.NumUses() > 0 {
				return pm.Result{}, n.Errorf("%s: folded result %s still has users", etlConstPropName, r.Name)
			}
		}
		if err := n.Erase(); err != nil {
			return pm.Result{}, n.Errorf("%s: %v", etlConstPropName, err)
		}
		c.Stat("folded", 1)
	}
	err = etDropUnusedInputs(p, c, etlConstPropName, weights, func(in *ir.Value) bool { return weights[in] != nil })
	return pm.Result{Changed: true}, err
}

// etlWeightConst is the contiguous constant a weight holds, when it has
// data and a static shape.
func etlWeightConst(w *ir.Weight) (etlConstVal, bool) {
	if w.Source == nil || w.Type == nil || w.Type.Device != "" || !etlConstPropDType(w.Type.DType) {
		return etlConstVal{}, false
	}
	shape, ok := w.Type.StaticShape()
	if !ok {
		return etlConstVal{}, false
	}
	cv := etlConstVal{dt: w.Type.DType, shape: shape, src: w.Source}
	item := int64(w.Type.DType.Size())
	if (w.Strides != nil && !etStridesContiguous(shape, w.Strides)) || w.StorageOffset != 0 {
		strides := w.Strides
		if strides == nil {
			strides = etRowMajorStrides(shape)
		}
		src, err := newContiguousSource(w.Source, item, shape, strides, w.StorageOffset)
		if err != nil {
			return etlConstVal{}, false
		}
		cv.src = src
	}
	if cv.src.Size() != etNumel(shape)*item {
		return etlConstVal{}, false
	}
	return cv, true
}

func etlConstPropDType(dt ir.DType) bool {
	return dt.Bits()%8 == 0 && dt.Size() > 0 && interp.SupportedDType(dt)
}

// etlConstPropEval returns the lazily folded results of n, or nil and why
// not (an empty reason for nodes that are simply not constant).
func etlConstPropEval(n *ir.Node, consts map[*ir.Value]etlConstVal, maxBytes int64) ([]etlConstVal, string) {
	info := n.Op.Info()
	if info == nil {
		return nil, ""
	}
	const impure = ir.PropRandom | ir.PropSideEffects | ir.PropInplace | ir.PropOutVariant | ir.PropView | ir.PropHigherOrder | ir.PropSymbolic
	if !n.Op.Has(ir.PropFunctional) || info.Props&impure != 0 || interp.Nondeterministic(n.Op) || info.Schema.VarArgs {
		return nil, ""
	}
	if n.Op == etlOpFull || info.Namespace == "quantized_decomposed" || info.Namespace == "torchao" {
		return nil, ""
	}
	if len(n.Results) == 0 || len(n.Results) != len(info.Schema.Returns) {
		return nil, ""
	}
	// Arguments: literals and constant tensors only.
	args := make([]ir.Arg, len(n.Args))
	var ops []ConstPropOperand
	operand := func(v *ir.Value, arg, elem int) bool {
		cv, ok := consts[v]
		if ok {
			ops = append(ops, ConstPropOperand{Arg: arg, Elem: elem, DType: cv.dt, Shape: cv.shape, Source: cv.src})
		}
		return ok
	}
	for i, a := range n.Args {
		switch a.Kind {
		case ir.ArgValue:
			if !operand(a.Value, i, -1) {
				return nil, ""
			}
			args[i] = ir.NoneArg()
		case ir.ArgList:
			l := make([]ir.Arg, len(a.List))
			for j, e := range a.List {
				switch e.Kind {
				case ir.ArgValue:
					if !operand(e.Value, i, j) {
						return nil, ""
					}
					l[j] = ir.NoneArg()
				case ir.ArgList, ir.ArgGraph, ir.ArgOp:
					return nil, ""
				default:
					l[j] = e
				}
			}
			args[i] = ir.ListArg(l...)
		case ir.ArgGraph, ir.ArgOp:
			return nil, ""
		default:
			args[i] = a
		}
	}
	if !interp.Supported(n.Op) {
		return nil, "no interpreter kernel for " + n.Op.String()
	}
	var out []etlConstVal
	for i, r := range n.Results {
		if info.Schema.Returns[i].Type.Base != ir.KTensor || info.Schema.Returns[i].Type.List {
			return nil, "result " + r.Name + " is not a tensor"
		}
		t := r.Tensor()
		if t == nil || t.Device != "" || !t.IsContiguous() || !etlConstPropDType(t.DType) {
			return nil, "result " + r.Name + " is not a contiguous CPU tensor"
		}
		shape, ok := t.StaticShape()
		if !ok {
			return nil, "result " + r.Name + " has a symbolic shape"
		}
		size := etNumel(shape) * int64(t.DType.Size())
		if maxBytes > 0 && size > maxBytes {
			return nil, fmt.Sprintf("result %s has %d bytes, more than max-bytes=%d", r.Name, size, maxBytes)
		}
		for _, u := range r.Uses() {
			if u.IsReturn() {
				return nil, "result " + r.Name + " is returned"
			}
		}
		out = append(out, etlConstVal{dt: t.DType, shape: shape, src: &ConstPropSource{
			Op: n.Op, Result: i, DType: t.DType, Shape: shape, Args: args, Operands: ops}})
	}
	return out, ""
}

// etlConstPropNames returns k fresh _prop_tensor_constant<N> names as exir
// picks them: N starts at the number of lifted constants (constant_tensor
// inputs and non-persistent buffers, exir's ExportedProgram.constants) and
// counts up; a taken name restarts after the largest taken suffix.
func etlConstPropNames(p *ir.Program, k int) []string {
	const prefix = "_prop_tensor_constant"
	taken := map[string]bool{}
	n := 0
	for _, s := range p.Signature.Inputs {
		taken[s.Target] = true
		if s.Kind == ir.ConstantTensor || s.Kind == ir.Buffer && !s.Persistent {
			n++
		}
	}
	for _, w := range p.Weights {
		taken[w.Name] = true
	}
	var out []string
	for len(out) < k {
		name := prefix + strconv.Itoa(n)
		if taken[name] {
			max := -1
			for t := range taken {
				if d, err := strconv.Atoi(strings.TrimPrefix(t, prefix)); err == nil && strings.HasPrefix(t, prefix) && d > max {
					max = d
				}
			}
			n = max + 1
			name = prefix + strconv.Itoa(n)
		}
		taken[name] = true
		out = append(out, name)
		n++
	}
	return out
}
