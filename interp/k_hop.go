package interp

import (
	"fmt"

	"github.com/fxport/fxport/ir"
)

// Higher-order ops run their region graphs.

func init() {
	register(kCond, ir.OpHigherOrderCond)
	register(kWhileLoop, ir.OpHigherOrderWhileLoop)
	register(kMapImpl, ir.OpHigherOrderMapImpl)
	register(kScan, ir.OpHigherOrderScan)
	register(kAssociativeScan, ir.OpHigherOrderAssociativeScan)
	register(kWrap, ir.OpHigherOrderWrapWithSetGradEnabled, ir.OpHigherOrderWrapWithAutocast, ir.OpHigherOrderInvokeSubgraph)
	register(kWithEffects, ir.OpHigherOrderWithEffects)
	register(kAutoFunctionalized, ir.OpHigherOrderAutoFunctionalized)
}

// runRegion runs a region on inputs.
func (c *call) runRegion(g *ir.Graph, inputs []Value) ([]Value, error) {
	outs, _, err := c.m.runGraph(g, inputs, make([]bool, len(inputs)))
	if err != nil {
		return nil, fmt.Errorf("region %s: %w", g.Name, err)
	}
	return outs, nil
}

func kCond(c *call) ([]Value, error) {
	p, err := c.arg("pred")
	if err != nil {
		return nil, err
	}
	pred, err := toBool(p)
	if err != nil {
		return nil, fmt.Errorf("cond predicate: %w", err)
	}
	branch := "false_fn"
	if pred {
		branch = "true_fn"
	}
	g, err := c.graph(branch)
	if err != nil {
		return nil, err
	}
	ops, err := c.list("operands")
	if err != nil {
		return nil, err
	}
	return c.runRegion(g, ops)
}

func kWhileLoop(c *call) ([]Value, error) {
	condG, err := c.graph("cond_fn")
	if err != nil {
		return nil, err
	}
	body, err := c.graph("body_fn")
	if err != nil {
		return nil, err
	}
	carried, err := c.list("carried_inputs")
	if err != nil {
		return nil, err
	}
	extra, err := c.list("additional_inputs")
	if err != nil {
		return nil, err
	}
	for it := 0; ; it++ {
		if it >= c.m.opts.MaxIterations {
			return nil, fmt.Errorf("while_loop ran more than %d iterations", c.m.opts.MaxIterations)
		}
		args := append(append([]Value{}, carried...), extra...)
		outs, err := c.runRegion(condG, args)
		if err != nil {
			return nil, err
		}
		if len(outs) != 1 {
			return nil, fmt.Errorf("while_loop cond_fn returned %d values, want 1", len(outs))
		}
		goOn, err := toBool(outs[0])
		if err != nil {
			return nil, fmt.Errorf("while_loop cond_fn: %w", err)
		}
		if !goOn {
			return carried, nil
		}
		next, err := c.runRegion(body, args)
		if err != nil {
			return nil, err
		}
		if len(next) != len(carried) {
			return nil, fmt.Errorf("while_loop body returned %d values for %d carried values", len(next), len(carried))
		}
		carried = next
	}
}

// slicesAt selects index i along dim 0 of every tensor of xs.
func slicesAt(xs []Value, i int64) ([]Value, error) {
	out := make([]Value, len(xs))
	for k, x := range xs {
		t, ok := x.(*Tensor)
		if !ok {
			return nil, fmt.Errorf("cannot iterate over a %s", kindOf(x))
		}
		s, err := selectView(t, 0, i)
		if err != nil {
			return nil, err
		}
		out[k] = s
	}
	return out, nil
}

func leading(xs []Value) (int64, error) {
	for _, x := range xs {
		if t, ok := x.(*Tensor); ok {
			if t.Rank() == 0 {
				return 0, fmt.Errorf("cannot iterate over a 0-dim tensor")
			}
			return t.Shape[0], nil
		}
	}
	return 0, fmt.Errorf("no tensor to iterate over")
}

// stackSteps stacks per-step outputs (steps × k) into k tensors.
func stackSteps(steps [][]Value, k int) ([]Value, error) {
	out := make([]Value, k)
	for j := 0; j < k; j++ {
		ts := make([]*Tensor, len(steps))
		for i, s := range steps {
			t, ok := s[j].(*Tensor)
			if !ok {
				return nil, fmt.Errorf("output %d of step %d is a %s, not a tensor", j, i, kindOf(s[j]))
			}
			u, err := unsqueezeView(t, 0)
			if err != nil {
				return nil, err
			}
			ts[i] = u
		}
		r, err := catTensors(ts, 0, ts[0].DType)
		if err != nil {
			return nil, err
		}
		out[j] = r
	}
	return out, nil
}

func kMapImpl(c *call) ([]Value, error) {
	f, err := c.graph("f")
	if err != nil {
		return nil, err
	}
	xs, err := c.list("xs")
	if err != nil {
		return nil, err
	}
	pos, err := c.list("pos_args")
	if err != nil {
		return nil, err
	}
	n, err := leading(xs)
	if err != nil {
		return nil, err
	}
	if n == 0 {
		return nil, fmt.Errorf("map over an empty leading dim is not supported")
	}
	var steps [][]Value
	for i := int64(0); i < n; i++ {
		sl, err := slicesAt(xs, i)
		if err != nil {
			return nil, err
		}
		outs, err := c.runRegion(f, append(sl, pos...))
		if err != nil {
			return nil, err
		}
		steps = append(steps, outs)
	}
	return stackSteps(steps, len(steps[0]))
}

func kScan(c *call) ([]Value, error) {
	f, err := c.graph("combine_fn")
	if err != nil {
		return nil, err
	}
	carry, err := c.list("init")
	if err != nil {
		return nil, err
	}
	xs, err := c.list("xs")
	if err != nil {
		return nil, err
	}
	extra, err := c.list("additional_inputs")
	if err != nil {
		return nil, err
	}
	n, err := leading(xs)
	if err != nil {
		return nil, err
	}
	if n == 0 {
		return nil, fmt.Errorf("scan over an empty leading dim is not supported")
	}
	var steps [][]Value
	for i := int64(0); i < n; i++ {
		sl, err := slicesAt(xs, i)
		if err != nil {
			return nil, err
		}
		args := append(append(append([]Value{}, carry...), sl...), extra...)
		outs, err := c.runRegion(f, args)
		if err != nil {
			return nil, err
		}
		if len(outs) < len(carry) {
			return nil, fmt.Errorf("scan combine_fn returned %d values for %d carries", len(outs), len(carry))
		}
		carry = outs[:len(carry)]
		steps = append(steps, outs[len(carry):])
	}
	ys, err := stackSteps(steps, len(steps[0]))
	if err != nil {
		return nil, err
	}
	return append(append([]Value{}, carry...), ys...), nil
}

// kAssociativeScan applies combine_fn left to right along dim 0:
// out[0] = xs[0], out[i] = combine(out[i-1], xs[i]).
func kAssociativeScan(c *call) ([]Value, error) {
	f, err := c.graph("combine_fn")
	if err != nil {
		return nil, err
	}
	xs, err := c.list("xs")
	if err != nil {
		return nil, err
	}
	extra, err := c.list("additional_inputs")
	if err != nil {
		return nil, err
	}
	n, err := leading(xs)
	if err != nil {
		return nil, err
	}
	if n == 0 {
		return nil, fmt.Errorf("associative_scan over an empty leading dim is not supported")
	}
	// The region takes slices without the scanned dim, or keeps it as 1.
	keepDim := false
	if len(f.Inputs) > 0 {
		if t := f.Inputs[0].Tensor(); t != nil {
			if x, ok := xs[0].(*Tensor); ok && t.Rank() == x.Rank() {
				keepDim = true
			}
		}
	}
	at := func(i int64) ([]Value, error) {
		sl, err := slicesAt(xs, i)
		if err != nil || !keepDim {
			return sl, err
		}
		for k, s := range sl {
			if sl[k], err = unsqueezeView(s.(*Tensor), 0); err != nil {
				return nil, err
			}
		}
		return sl, nil
	}
	prev, err := at(0)
	if err != nil {
		return nil, err
	}
	steps := [][]Value{prev}
	for i := int64(1); i < n; i++ {
		cur, err := at(i)
		if err != nil {
			return nil, err
		}
		outs, err := c.runRegion(f, append(append(append([]Value{}, prev...), cur...), extra...))
		if err != nil {
			return nil, err
		}
		if len(outs) != len(xs) {
			return nil, fmt.Errorf("associative_scan combine_fn returned %d values for %d inputs", len(outs), len(xs))
		}
		prev = outs
		steps = append(steps, outs)
	}
	if keepDim {
		for _, s := range steps {
			for k, v := range s {
				t, ok := v.(*Tensor)
				if !ok {
					return nil, fmt.Errorf("associative_scan output is a %s", kindOf(v))
				}
				sq, err := squeezeView(t, []int64{0}, false)
				if err != nil {
					return nil, err
				}
				s[k] = sq
			}
		}
	}
	return stackSteps(steps, len(xs))
}

// kWrap runs the wrapped graph on the operands that follow it.
func kWrap(c *call) ([]Value, error) {
	for i, a := range c.args {
		g, ok := a.(*ir.Graph)
		if !ok || g == nil {
			continue
		}
		rest := c.args[i+1:]
		if c.op == ir.OpHigherOrderInvokeSubgraph && len(rest) > 0 {
			rest = rest[1:] // the identifier
		}
		return c.runRegion(g, rest)
	}
	return nil, fmt.Errorf("no graph argument")
}

// bindValues binds positional values to op's schema, filling defaults.
func bindValues(op ir.Op, vals []Value) ([]Value, error) {
	schema := op.Info().Schema
	if schema.VarArgs {
		return vals, nil
	}
	if len(vals) > len(schema.Args) {
		return nil, fmt.Errorf("%s takes %d arguments, got %d", op, len(schema.Args), len(vals))
	}
	out := append([]Value{}, vals...)
	for i := len(vals); i < len(schema.Args); i++ {
		a := schema.Args[i]
		if !a.HasDefault() {
			return nil, fmt.Errorf("%s: missing argument %q", op, a.Name)
		}
		d, err := ir.ParseDefault(a.Type, a.Default)
		if err != nil {
			return nil, err
		}
		v, err := literalDeep(d)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

func literalDeep(a ir.Arg) (Value, error) {
	if a.Kind == ir.ArgList {
		l := make([]Value, len(a.List))
		for i, e := range a.List {
			v, err := literalDeep(e)
			if err != nil {
				return nil, err
			}
			l[i] = v
		}
		return l, nil
	}
	return Literal(a)
}

// callOp runs op on positional values (the wrapped call of with_effects and
// auto_functionalized).
func (c *call) callOp(op ir.Op, vals []Value) ([]Value, error) {
	args, err := bindValues(op, vals)
	if err != nil {
		return nil, err
	}
	k, schema, sem := lookup(op)
	if k == nil {
		return nil, fmt.Errorf("wrapped op %s is not supported by the interpreter", op)
	}
	sub := &call{m: c.m, node: nil, op: sem, schema: schema, args: args}
	outs, err := runKernel(k, sub)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	return outs, nil
}

func kWithEffects(c *call) ([]Value, error) {
	if len(c.args) < 2 {
		return nil, fmt.Errorf("with_effects needs a token and an op")
	}
	if _, ok := c.args[0].(Token); !ok {
		return nil, fmt.Errorf("with_effects expects a token first, got %s", kindOf(c.args[0]))
	}
	op, ok := c.args[1].(ir.Op)
	if !ok {
		return nil, fmt.Errorf("with_effects expects an op second, got %s", kindOf(c.args[1]))
	}
	outs, err := c.callOp(op, c.args[2:])
	if err != nil {
		return nil, err
	}
	return append([]Value{Token{}}, outs...), nil
}

// kAutoFunctionalized runs a mutating op on copies of the arguments it
// mutates and returns its results followed by the mutated copies.
func kAutoFunctionalized(c *call) ([]Value, error) {
	if len(c.args) < 1 {
		return nil, fmt.Errorf("auto_functionalized needs an op")
	}
	op, ok := c.args[0].(ir.Op)
	if !ok {
		return nil, fmt.Errorf("auto_functionalized expects an op first, got %s", kindOf(c.args[0]))
	}
	args, err := bindValues(op, c.args[1:])
	if err != nil {
		return nil, err
	}
	var mutated []int
	for i, a := range op.Info().Schema.Args {
		if a.Mutates() && i < len(args) {
			if t, ok := args[i].(*Tensor); ok {
				args[i] = t.Clone()
			}
			mutated = append(mutated, i)
		}
	}
	outs, err := c.callOp(op, args)
	if err != nil {
		return nil, err
	}
	for _, i := range mutated {
		outs = append(outs, args[i])
	}
	return outs, nil
}
