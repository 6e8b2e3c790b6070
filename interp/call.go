package interp

import (
	"fmt"

	"github.com/fxport/fxport/ir"
)

// call is what a kernel sees: the node, the op whose semantics run and the
// evaluated arguments, bound to the schema of the op named by schema.
type call struct {
	m      *machine
	node   *ir.Node
	op     ir.Op // the op whose semantics the kernel implements
	schema ir.Op // the op whose schema the args follow (differs for in-place/out twins)
	args   []Value
}

// kernel computes an op's results.
type kernel func(c *call) ([]Value, error)

func one(v Value) []Value { return []Value{v} }

func (c *call) errorf(format string, args ...any) error { return fmt.Errorf(format, args...) }

// has reports whether the schema has the named argument.
func (c *call) has(name string) bool {
	i := c.schema.ArgIndex(name)
	return i >= 0 && i < len(c.args)
}

func (c *call) arg(name string) (Value, error) {
	i := c.schema.ArgIndex(name)
	if i < 0 || i >= len(c.args) {
		return nil, fmt.Errorf("no argument %q", name)
	}
	return c.args[i], nil
}

func (c *call) pos(i int) (Value, error) {
	if i >= len(c.args) {
		return nil, fmt.Errorf("missing positional argument %d", i)
	}
	return c.args[i], nil
}

func (c *call) tensor(name string) (*Tensor, error) {
	v, err := c.arg(name)
	if err != nil {
		return nil, err
	}
	t, ok := v.(*Tensor)
	if !ok {
		return nil, fmt.Errorf("argument %q: expected a tensor, got %s", name, kindOf(v))
	}
	return t, nil
}

func (c *call) optTensor(name string) (*Tensor, error) {
	v, err := c.arg(name)
	if err != nil || v == nil {
		return nil, err
	}
	t, ok := v.(*Tensor)
	if !ok {
		return nil, fmt.Errorf("argument %q: expected a tensor or None, got %s", name, kindOf(v))
	}
	return t, nil
}

// tensors reads a Tensor[] or Tensor?[] argument; None entries are nil.
func (c *call) tensors(name string) ([]*Tensor, error) {
	v, err := c.arg(name)
	if err != nil {
		return nil, err
	}
	return tensorList(v, name)
}

func tensorList(v Value, name string) ([]*Tensor, error) {
	l, ok := v.([]Value)
	if !ok {
		return nil, fmt.Errorf("argument %q: expected a list of tensors, got %s", name, kindOf(v))
	}
	out := make([]*Tensor, len(l))
	for i, e := range l {
		if e == nil {
			continue
		}
		t, ok := e.(*Tensor)
		if !ok {
			return nil, fmt.Errorf("argument %q[%d]: expected a tensor, got %s", name, i, kindOf(e))
		}
		out[i] = t
	}
	return out, nil
}

// toInt reads an int-like value: int64, bool, or a one-element integer tensor.
func toInt(v Value) (int64, error) {
	switch x := v.(type) {
	case int64:
		return x, nil
	case bool:
		if x {
			return 1, nil
		}
		return 0, nil
	case *Tensor:
		if x.Numel() == 1 && domainOf(x.DType) == domInt {
			return x.itemInt(), nil
		}
	}
	return 0, fmt.Errorf("expected an int, got %s", kindOf(v))
}

func (c *call) int(name string) (int64, error) {
	v, err := c.arg(name)
	if err != nil {
		return 0, err
	}
	i, err := toInt(v)
	if err != nil {
		return 0, fmt.Errorf("argument %q: %w", name, err)
	}
	return i, nil
}

func (c *call) optInt(name string) (int64, bool, error) {
	v, err := c.arg(name)
	if err != nil || v == nil {
		return 0, false, err
	}
	i, err := toInt(v)
	if err != nil {
		return 0, false, fmt.Errorf("argument %q: %w", name, err)
	}
	return i, true, nil
}

// intList reads an int[] (a bare int counts as a one-element list).
func intList(v Value, name string) ([]int64, error) {
	if l, ok := v.([]Value); ok {
		out := make([]int64, len(l))
		for i, e := range l {
			x, err := toInt(e)
			if err != nil {
				return nil, fmt.Errorf("argument %q[%d]: %w", name, i, err)
			}
			out[i] = x
		}
		return out, nil
	}
	x, err := toInt(v)
	if err != nil {
		return nil, fmt.Errorf("argument %q: expected a list of ints: %w", name, err)
	}
	return []int64{x}, nil
}

func (c *call) ints(name string) ([]int64, error) {
	v, err := c.arg(name)
	if err != nil {
		return nil, err
	}
	return intList(v, name)
}

func (c *call) optInts(name string) ([]int64, bool, error) {
	v, err := c.arg(name)
	if err != nil || v == nil {
		return nil, false, err
	}
	l, err := intList(v, name)
	return l, err == nil, err
}

func toFloat(v Value) (float64, error) {
	switch x := v.(type) {
	case float64:
		return x, nil
	case int64:
		return float64(x), nil
	case bool:
		if x {
			return 1, nil
		}
		return 0, nil
	case *Tensor:
		if x.Numel() == 1 {
			return x.itemFloat(), nil
		}
	}
	return 0, fmt.Errorf("expected a float, got %s", kindOf(v))
}

func (c *call) float(name string) (float64, error) {
	v, err := c.arg(name)
	if err != nil {
		return 0, err
	}
	f, err := toFloat(v)
	if err != nil {
		return 0, fmt.Errorf("argument %q: %w", name, err)
	}
	return f, nil
}

func (c *call) optFloat(name string) (float64, bool, error) {
	v, err := c.arg(name)
	if err != nil || v == nil {
		return 0, false, err
	}
	f, err := toFloat(v)
	if err != nil {
		return 0, false, fmt.Errorf("argument %q: %w", name, err)
	}
	return f, true, nil
}

func (c *call) optFloats(name string) ([]float64, bool, error) {
	v, err := c.arg(name)
	if err != nil || v == nil {
		return nil, false, err
	}
	l, ok := v.([]Value)
	if !ok {
		f, err := toFloat(v)
		if err != nil {
			return nil, false, fmt.Errorf("argument %q: %w", name, err)
		}
		return []float64{f}, true, nil
	}
	out := make([]float64, len(l))
	for i, e := range l {
		f, err := toFloat(e)
		if err != nil {
			return nil, false, fmt.Errorf("argument %q[%d]: %w", name, i, err)
		}
		out[i] = f
	}
	return out, true, nil
}

func toBool(v Value) (bool, error) {
	switch x := v.(type) {
	case bool:
		return x, nil
	case int64:
		return x != 0, nil
	case float64:
		return x != 0, nil
	case *Tensor:
		if x.Numel() == 1 {
			// NaN is true, as bool(float("nan")) is in Python.
			return x.itemFloat() != 0, nil
		}
		return false, fmt.Errorf("a tensor with %d elements has no truth value", x.Numel())
	case nil:
		return false, nil
	}
	return false, fmt.Errorf("expected a bool, got %s", kindOf(v))
}

func (c *call) bool(name string) (bool, error) {
	v, err := c.arg(name)
	if err != nil {
		return false, err
	}
	b, err := toBool(v)
	if err != nil {
		return false, fmt.Errorf("argument %q: %w", name, err)
	}
	return b, nil
}

// optBool returns def when the argument is None.
func (c *call) optBool(name string, def bool) (bool, error) {
	v, err := c.arg(name)
	if err != nil {
		return false, err
	}
	if v == nil {
		return def, nil
	}
	return toBool(v)
}

func (c *call) str(name string) (string, error) {
	v, err := c.arg(name)
	if err != nil {
		return "", err
	}
	s, ok := v.(string)
	if !ok {
		return "", fmt.Errorf("argument %q: expected a string, got %s", name, kindOf(v))
	}
	return s, nil
}

func (c *call) optStr(name string) (string, bool, error) {
	v, err := c.arg(name)
	if err != nil || v == nil {
		return "", false, err
	}
	s, ok := v.(string)
	if !ok {
		return "", false, fmt.Errorf("argument %q: expected a string, got %s", name, kindOf(v))
	}
	return s, true, nil
}

func toDType(v Value) (ir.DType, error) {
	switch x := v.(type) {
	case ir.DType:
		return x, nil
	case int64: // torch.export ScalarType codes
		if d, ok := ir.DTypeFromPT2(int(x)); ok {
			return d, nil
		}
	}
	return ir.Undefined, fmt.Errorf("expected a dtype, got %s", kindOf(v))
}

func (c *call) optDType(name string) (ir.DType, bool, error) {
	v, err := c.arg(name)
	if err != nil || v == nil {
		return ir.Undefined, false, err
	}
	d, err := toDType(v)
	if err != nil {
		return ir.Undefined, false, fmt.Errorf("argument %q: %w", name, err)
	}
	return d, true, nil
}

func (c *call) graph(name string) (*ir.Graph, error) {
	v, err := c.arg(name)
	if err != nil {
		return nil, err
	}
	g, ok := v.(*ir.Graph)
	if !ok || g == nil {
		return nil, fmt.Errorf("argument %q: expected a graph, got %s", name, kindOf(v))
	}
	return g, nil
}

func (c *call) list(name string) ([]Value, error) {
	v, err := c.arg(name)
	if err != nil {
		return nil, err
	}
	if v == nil {
		return nil, nil
	}
	l, ok := v.([]Value)
	if !ok {
		return nil, fmt.Errorf("argument %q: expected a list, got %s", name, kindOf(v))
	}
	return l, nil
}

// declaredDType is the dtype the node declares for result i, if it is a tensor.
func (c *call) declaredDType(i int) (ir.DType, bool) {
	if c.node == nil || i >= len(c.node.Results) {
		return ir.Undefined, false
	}
	if t := c.node.Results[i].Tensor(); t != nil {
		return t.DType, true
	}
	return ir.Undefined, false
}
