package ir

import (
	"fmt"

	"github.com/fxport/fxport/ir/sym"
)

// Higher-order op rules: result types come from the region graphs' outputs
// (and, for with_effects and auto_functionalized, from the wrapped op's rule).

// graphArg returns the named region graph.
func graphArg(c *InferCtx, name string) (*Graph, error) {
	a, err := c.Arg(name)
	if err != nil {
		return nil, err
	}
	if a.Kind != ArgGraph || a.Graph == nil {
		return nil, fmt.Errorf("argument %q: expected a graph, got %s", name, a.Kind)
	}
	return a.Graph, nil
}

// regionOutputs is the types of a region's outputs.
func regionOutputs(g *Graph) []Type {
	outs := g.Outputs()
	types := make([]Type, len(outs))
	for i, o := range outs {
		types[i] = typeOfArg(o)
	}
	return types
}

// mergeTypes combines the types two branches (or loop iterations) produce
// for one result: equal types stay; tensors of the same dtype and rank whose
// dims differ get fresh unbacked symbols for those dims (sym counts the
// symbols made so far on this node).
func mergeTypes(c *InferCtx, a, b Type, what string, k *int) (Type, error) {
	if TypeEqual(a, b) {
		return a, nil
	}
	ta, tb := AsTensor(a), AsTensor(b)
	if ta != nil && tb != nil {
		if ta.DType != tb.DType || ta.Rank() != tb.Rank() {
			return nil, fmt.Errorf("%s: %s vs %s", what, ta, tb)
		}
		shape := make([]sym.Expr, ta.Rank())
		for i := range shape {
			if sameDim(c, ta.Shape[i], tb.Shape[i]) {
				shape[i] = ta.Shape[i]
			} else {
				shape[i] = unbackedSym(c, *k)
				*k++
			}
		}
		return withShapeDType(ta, shape, ta.DType), nil
	}
	if _, ok := a.(*SymIntType); ok {
		if _, ok := b.(*SymIntType); ok {
			return &SymIntType{Expr: unbackedSym(c, func() int { n := *k; *k++; return n }())}, nil
		}
	}
	return nil, fmt.Errorf("%s: %s vs %s", what, a, b)
}

// inferCond: cond(pred, true_fn, false_fn, operands): the branches' outputs,
// merged.
func inferCond(c *InferCtx) ([]Type, error) {
	p, err := c.Arg("pred")
	if err != nil {
		return nil, err
	}
	switch p.Kind {
	case ArgBool:
	case ArgValue:
		switch t := p.Value.Type.(type) {
		case *TensorType:
			if t.Numel().IsConst() {
				if v, _ := t.Numel().Const(); v != 1 {
					return nil, fmt.Errorf("cond predicate must be a one-element tensor, got %s", t)
				}
			}
		case *SymBoolType, *ScalarType, *SymIntType:
		default:
			return nil, fmt.Errorf("cond predicate of type %s", t)
		}
	default:
		return nil, fmt.Errorf("cond predicate must be a bool or a tensor, got %s", p.Kind)
	}
	tg, err := graphArg(c, "true_fn")
	if err != nil {
		return nil, err
	}
	fg, err := graphArg(c, "false_fn")
	if err != nil {
		return nil, err
	}
	tt, ft := regionOutputs(tg), regionOutputs(fg)
	if len(tt) != len(ft) {
		return nil, fmt.Errorf("cond branches return %d and %d values", len(tt), len(ft))
	}
	out := make([]Type, len(tt))
	k := 0
	for i := range tt {
		if out[i], err = mergeTypes(c, tt[i], ft[i], fmt.Sprintf("cond output %d differs between branches", i), &k); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// listTypes is the types of the elements of a list argument.
func listTypes(c *InferCtx, name string) ([]Type, error) {
	a, err := c.Arg(name)
	if err != nil {
		return nil, err
	}
	if a.Kind == ArgNone {
		return nil, nil
	}
	if a.Kind != ArgList {
		return nil, fmt.Errorf("argument %q: expected a list, got %s", name, a.Kind)
	}
	out := make([]Type, len(a.List))
	for i, e := range a.List {
		out[i] = typeOfArg(e)
	}
	return out, nil
}

// inferWhileLoop: while_loop(cond_fn, body_fn, carried_inputs, …): one
// result per carried value, merged with what the body returns.
func inferWhileLoop(c *InferCtx) ([]Type, error) {
	body, err := graphArg(c, "body_fn")
	if err != nil {
		return nil, err
	}
	if _, err := graphArg(c, "cond_fn"); err != nil {
		return nil, err
	}
	carried, err := listTypes(c, "carried_inputs")
	if err != nil {
		return nil, err
	}
	bt := regionOutputs(body)
	if len(bt) != len(carried) {
		return nil, fmt.Errorf("while_loop body returns %d values for %d carried inputs", len(bt), len(carried))
	}
	out := make([]Type, len(bt))
	k := 0
	for i := range bt {
		if out[i], err = mergeTypes(c, carried[i], bt[i], fmt.Sprintf("while_loop carried value %d changes type", i), &k); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// leadingDim is the size of dim 0 of the first tensor in a list of types.
func leadingDim(types []Type, what string) (sym.Expr, error) {
	for _, t := range types {
		if tt := AsTensor(t); tt != nil {
			if tt.Rank() == 0 {
				return sym.Expr{}, fmt.Errorf("%s: cannot iterate over a 0-dim tensor", what)
			}
			return tt.Shape[0], nil
		}
	}
	return sym.Expr{}, fmt.Errorf("%s: no tensor to iterate over", what)
}

// stacked prepends dim n to a tensor type.
func stacked(t Type, n sym.Expr) (Type, error) {
	tt := AsTensor(t)
	if tt == nil {
		return nil, fmt.Errorf("mapped function output of type %s is not a tensor", t)
	}
	return withShapeDType(tt, append([]sym.Expr{n}, tt.Shape...), tt.DType), nil
}

// inferMapImpl: map_impl(f, xs, pos_args): f's outputs stacked along a new
// leading dim of xs' length.
func inferMapImpl(c *InferCtx) ([]Type, error) {
	f, err := graphArg(c, "f")
	if err != nil {
		return nil, err
	}
	xs, err := listTypes(c, "xs")
	if err != nil {
		return nil, err
	}
	n, err := leadingDim(xs, "map")
	if err != nil {
		return nil, err
	}
	ft := regionOutputs(f)
	out := make([]Type, len(ft))
	for i, t := range ft {
		if out[i], err = stacked(t, n); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// inferScan: scan(combine_fn, init, xs, additional_inputs): the final carries
// (typed like init) followed by the per-step outputs stacked along xs' length.
func inferScan(c *InferCtx) ([]Type, error) {
	f, err := graphArg(c, "combine_fn")
	if err != nil {
		return nil, err
	}
	init, err := listTypes(c, "init")
	if err != nil {
		return nil, err
	}
	xs, err := listTypes(c, "xs")
	if err != nil {
		return nil, err
	}
	n, err := leadingDim(xs, "scan")
	if err != nil {
		return nil, err
	}
	ft := regionOutputs(f)
	if len(ft) < len(init) {
		return nil, fmt.Errorf("scan combine_fn returns %d values for %d carries", len(ft), len(init))
	}
	out := make([]Type, len(ft))
	k := 0
	for i, t := range ft {
		if i < len(init) {
			if out[i], err = mergeTypes(c, init[i], t, fmt.Sprintf("scan carry %d changes type", i), &k); err != nil {
				return nil, err
			}
			continue
		}
		if out[i], err = stacked(t, n); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// inferAssociativeScan: associative_scan(combine_fn, xs, …): typed like xs.
func inferAssociativeScan(c *InferCtx) ([]Type, error) {
	if _, err := graphArg(c, "combine_fn"); err != nil {
		return nil, err
	}
	return listTypes(c, "xs")
}

// inferWrap: wrap_with_set_grad_enabled/wrap_with_autocast/invoke_subgraph:
// the outputs of the wrapped graph.
func inferWrap(c *InferCtx) ([]Type, error) {
	for _, a := range c.Node.Args {
		if a.Kind == ArgGraph && a.Graph != nil {
			return regionOutputs(a.Graph), nil
		}
	}
	return nil, fmt.Errorf("no graph argument")
}

// opArg reads an ArgOp (or a string naming an op) at position i.
func opArg(c *InferCtx, i int) (Op, error) {
	a, err := c.Pos(i)
	if err != nil {
		return OpInvalid, err
	}
	if a.Kind != ArgOp && a.Kind != ArgString {
		return OpInvalid, fmt.Errorf("argument %d: expected an op, got %s %s", i, a.Kind, a)
	}
	op, ok := LookupOp(a.Str)
	if !ok {
		return OpInvalid, fmt.Errorf("unknown op %q", a.Str)
	}
	return op, nil
}

// inferWrapped binds args to op and runs op's rule on a detached node that
// stands for the wrapped call.
func inferWrapped(c *InferCtx, op Op, args []Arg) ([]Type, []Arg, error) {
	bound, err := BindArgs(op, args, nil)
	if err != nil {
		return nil, nil, err
	}
	info := op.Info()
	if info.Infer == nil {
		return nil, nil, fmt.Errorf("no shape/dtype rule for the wrapped op %s yet", info.Name)
	}
	n := &Node{ID: c.Node.ID, Op: op, Args: bound, Graph: c.Node.Graph}
	types, err := info.Infer(&InferCtx{Node: n, Env: c.Env})
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", info.Name, err)
	}
	return types, bound, nil
}

// inferWithEffects: with_effects(token, op, args…): a new token, then the
// op's results. The op's arguments follow positionally.
func inferWithEffects(c *InferCtx) ([]Type, error) {
	tok, err := c.Pos(0)
	if err != nil {
		return nil, err
	}
	if tok.Kind != ArgValue {
		return nil, fmt.Errorf("with_effects expects a token operand first, got %s", tok.Kind)
	}
	op, err := opArg(c, 1)
	if err != nil {
		return nil, err
	}
	types, _, err := inferWrapped(c, op, c.Node.Args[2:])
	if err != nil {
		return nil, err
	}
	return append([]Type{Token}, types...), nil
}

// inferAutoFunctionalized: auto_functionalized(op, args…) (the op's
// arguments follow in schema order): the op's results, then one new value
// per argument the op mutates.
func inferAutoFunctionalized(c *InferCtx) ([]Type, error) {
	op, err := opArg(c, 0)
	if err != nil {
		return nil, err
	}
	types, bound, err := inferWrapped(c, op, c.Node.Args[1:])
	if err != nil {
		return nil, err
	}
	for i, as := range op.Info().Schema.Args {
		if as.Mutates() {
			types = append(types, typeOfArg(bound[i]))
		}
	}
	return types, nil
}

// inferAutoFunctionalizedV2: auto_functionalized_v2(op, _all_bases, args…):
// the op's results, then one new value per base.
func inferAutoFunctionalizedV2(c *InferCtx) ([]Type, error) {
	op, err := opArg(c, 0)
	if err != nil {
		return nil, err
	}
	bases, err := c.Pos(1)
	if err != nil {
		return nil, err
	}
	if bases.Kind != ArgList {
		return nil, fmt.Errorf("_all_bases must be a list, got %s", bases.Kind)
	}
	types, _, err := inferWrapped(c, op, c.Node.Args[2:])
	if err != nil {
		return nil, err
	}
	for _, b := range bases.List {
		types = append(types, typeOfArg(b))
	}
	return types, nil
}

// inferFlexAttention: flex_attention(query [B, Hq, L, E], key, value
// [B, Hkv, S, Ev], score_mod, …) → (out [B, Hq, L, Ev], logsumexp [B, Hq, L] float32).
func inferFlexAttention(c *InferCtx) ([]Type, error) {
	q, err := c.Tensor("query")
	if err != nil {
		return nil, err
	}
	k, err := c.Tensor("key")
	if err != nil {
		return nil, err
	}
	v, err := c.Tensor("value")
	if err != nil {
		return nil, err
	}
	if q.Rank() != 4 || k.Rank() != 4 || v.Rank() != 4 {
		return nil, fmt.Errorf("flex_attention expects 4-D query, key and value, got %s, %s, %s", q, k, v)
	}
	if _, err := graphArg(c, "score_mod"); err != nil {
		return nil, err
	}
	shape, err := attentionOut(c, q, k, v)
	if err != nil {
		return nil, err
	}
	return []Type{withShapeDType(q, shape, q.DType), withShapeDType(q, append([]sym.Expr(nil), q.Shape[:3]...), Float32)}, nil
}
