package ir

import (
	"fmt"
	"strconv"

	"github.com/fxport/fxport/ir/sym"
)

// Helpers shared by the shape/dtype rules (infer_*.go). Rules themselves are
// the functions named infer<Rule> with the InferFunc signature; gen/opgen
// finds them by that name and signature, so helpers must not have both.

// argAt returns positional argument i, or None when the node has fewer.
func argAt(c *InferCtx, i int) Arg {
	if i < len(c.Node.Args) {
		return c.Node.Args[i]
	}
	return NoneArg()
}

// hasArg reports whether the op's schema declares the named argument.
func hasArg(c *InferCtx, name string) bool {
	i := c.Node.Op.ArgIndex(name)
	return i >= 0 && i < len(c.Node.Args)
}

// namedOrNone returns the named argument, or None when the op has no such argument.
func namedOrNone(c *InferCtx, name string) Arg {
	if !hasArg(c, name) {
		return NoneArg()
	}
	a, _ := c.Arg(name)
	return a
}

// tensorAt returns the tensor type of positional argument i.
func tensorAt(c *InferCtx, i int) (*TensorType, error) {
	a := argAt(c, i)
	what := "#" + strconv.Itoa(i)
	if s := c.Node.Op.Info().Schema.Args; i < len(s) {
		what = s[i].Name
	}
	return ArgTensor(a, what)
}

// one wraps a single result.
func one(t Type) []Type { return []Type{t} }

// cloneTensor returns a copy of t that the caller may modify.
func cloneTensor(t *TensorType) *TensorType {
	c := *t
	c.Shape = append([]sym.Expr(nil), t.Shape...)
	if t.DimOrder != nil {
		c.DimOrder = append([]int(nil), t.DimOrder...)
	}
	return &c
}

// withShapeDType builds a contiguous tensor on t's device.
func withShapeDType(t *TensorType, shape []sym.Expr, dt DType) *TensorType {
	return &TensorType{DType: dt, Shape: shape, Device: t.Device}
}

// normDim wraps a possibly negative dim into [0, rank). Like torch, a 0-dim
// tensor accepts dims 0 and -1.
func normDim(d int64, rank int) (int, error) {
	r := int64(rank)
	if r == 0 {
		r = 1
	}
	if d < -r || d >= r {
		return 0, fmt.Errorf("dim %d out of range for a tensor of rank %d", d, rank)
	}
	if d < 0 {
		d += r
	}
	return int(d), nil
}

// normDimAt normalizes a dim where rank+1 positions are valid (unsqueeze, stack).
func normDimInsert(d int64, rank int) (int, error) {
	r := int64(rank) + 1
	if d < -r || d >= r {
		return 0, fmt.Errorf("dim %d out of range for inserting into a tensor of rank %d", d, rank)
	}
	if d < 0 {
		d += r
	}
	return int(d), nil
}

// knownTrue reports that cond provably holds under the program's symbol
// ranges (the Env may be nil: it then knows nothing about symbols).
func knownTrue(c *InferCtx, cond sym.Expr) bool { return c.Env.StaticallyKnownTrue(cond) }

// knownFalse reports that cond provably fails.
func knownFalse(c *InferCtx, cond sym.Expr) bool { return c.Env.StaticallyKnownFalse(cond) }

// sameDim reports whether two dims are equal, statically.
func sameDim(c *InferCtx, a, b sym.Expr) bool {
	return a.Equal(b) || knownTrue(c, sym.Eq(a, b))
}

// isOne reports a dim known to be 1.
func isOne(c *InferCtx, d sym.Expr) bool {
	if v, ok := d.Const(); ok {
		return v == 1
	}
	return knownTrue(c, sym.Eq(d, sym.Const(1)))
}

// checkSameDim fails when two dims are provably different.
func checkSameDim(c *InferCtx, a, b sym.Expr, what string) error {
	if av, ok := a.Const(); ok {
		if bv, ok := b.Const(); ok {
			if av != bv {
				return fmt.Errorf("%s: %d != %d", what, av, bv)
			}
			return nil
		}
	}
	if knownFalse(c, sym.Eq(a, b)) {
		return fmt.Errorf("%s: %s != %s", what, a, b)
	}
	return nil
}

// broadcastDims combines two dims under broadcasting. A dim known to be 1
// yields to the other; two different constants fail; two symbolic dims that
// are not known equal give the first one (torch guards that they are equal).
func broadcastDims(c *InferCtx, a, b sym.Expr) (sym.Expr, error) {
	switch {
	case a.Equal(b):
		return a, nil
	case isOne(c, a):
		return b, nil
	case isOne(c, b):
		return a, nil
	}
	av, aok := a.Const()
	bv, bok := b.Const()
	switch {
	case aok && bok:
		return sym.Expr{}, fmt.Errorf("shapes do not broadcast: %d vs %d", av, bv)
	case aok:
		return a, nil
	case bok:
		return b, nil
	}
	if knownFalse(c, sym.Eq(a, b)) {
		return sym.Expr{}, fmt.Errorf("shapes do not broadcast: %s vs %s", a, b)
	}
	return a, nil
}

// broadcastShapes is torch's broadcast_shapes over any number of shapes.
func broadcastShapes(c *InferCtx, shapes ...[]sym.Expr) ([]sym.Expr, error) {
	rank := 0
	for _, s := range shapes {
		if len(s) > rank {
			rank = len(s)
		}
	}
	out := make([]sym.Expr, rank)
	for i := range out {
		out[i] = sym.Const(1)
	}
	for _, s := range shapes {
		off := rank - len(s)
		for i, d := range s {
			r, err := broadcastDims(c, out[off+i], d)
			if err != nil {
				return nil, err
			}
			out[off+i] = r
		}
	}
	return out, nil
}

// symListOf reads a list argument of ints/SymInts (a bare int is a one-element list).
func symListOf(a Arg, what string) ([]sym.Expr, error) {
	if a.Kind != ArgList {
		e, err := SymIntOf(a)
		if err != nil {
			return nil, fmt.Errorf("argument %q: expected a list of ints: %w", what, err)
		}
		return []sym.Expr{e}, nil
	}
	out := make([]sym.Expr, len(a.List))
	for i, el := range a.List {
		e, err := SymIntOf(el)
		if err != nil {
			return nil, fmt.Errorf("argument %q[%d]: %w", what, i, err)
		}
		out[i] = e
	}
	return out, nil
}

// intListOf reads a list argument of static ints.
func intListOf(a Arg, what string) ([]int64, error) {
	es, err := symListOf(a, what)
	if err != nil {
		return nil, err
	}
	out := make([]int64, len(es))
	for i, e := range es {
		v, ok := e.Const()
		if !ok {
			return nil, fmt.Errorf("argument %q[%d]: expected a static int, got %s", what, i, e)
		}
		out[i] = v
	}
	return out, nil
}

// expandList repeats a one-element list to n elements (int[2] stride=1 style)
// and checks the length otherwise. An empty list gives def when def != nil.
func expandList(xs []sym.Expr, n int, what string, def []sym.Expr) ([]sym.Expr, error) {
	switch {
	case len(xs) == 0 && def != nil:
		return def, nil
	case len(xs) == 1 && n > 1:
		out := make([]sym.Expr, n)
		for i := range out {
			out[i] = xs[0]
		}
		return out, nil
	case len(xs) != n:
		return nil, fmt.Errorf("%s must have %d elements, got %d", what, n, len(xs))
	}
	return xs, nil
}

// constsOf wraps ints as expressions.
func constsOf(xs ...int64) []sym.Expr {
	out := make([]sym.Expr, len(xs))
	for i, x := range xs {
		out[i] = sym.Const(x)
	}
	return out
}

// numel multiplies dims.
func numel(shape []sym.Expr) sym.Expr {
	if len(shape) == 0 {
		return sym.Const(1)
	}
	return sym.Mul(shape...)
}

// dtypeArg reads an optional dtype argument by name (missing argument = None).
func dtypeArg(c *InferCtx, name string) (DType, bool, error) {
	if !hasArg(c, name) {
		return Undefined, false, nil
	}
	return c.OptDType(name)
}

// deviceArg reads an optional device argument by name; "cpu" is the default
// device and reads as "".
func deviceArg(c *InferCtx, name string) (string, bool, error) {
	a := namedOrNone(c, name)
	switch a.Kind {
	case ArgNone:
		return "", false, nil
	case ArgDevice, ArgString:
		return normDevice(a.Str), true, nil
	}
	return "", false, fmt.Errorf("argument %q: expected a device, got %s %s", name, a.Kind, a)
}

func normDevice(d string) string {
	if d == "cpu" || d == "cpu:0" {
		return ""
	}
	return d
}

// memoryFormatArg reads an optional memory_format argument.
func memoryFormatArg(c *InferCtx, name string) (MemoryFormat, bool, error) {
	a := namedOrNone(c, name)
	switch a.Kind {
	case ArgNone:
		return 0, false, nil
	case ArgMemoryFormat, ArgInt:
		return MemoryFormat(a.Int), true, nil
	case ArgString:
		if m, ok := MemoryFormatFromName(a.Str); ok {
			return m, true, nil
		}
	}
	return 0, false, fmt.Errorf("argument %q: expected a memory format, got %s %s", name, a.Kind, a)
}

// dimOrderFor is the dim order a memory format gives a tensor of the rank:
// nil (contiguous) or channels-last orders; preserve keeps keep.
func dimOrderFor(m MemoryFormat, rank int, keep []int) ([]int, error) {
	switch m {
	case ContiguousFormat:
		return nil, nil
	case PreserveFormat, MemoryFormatUnknown:
		return keep, nil
	case ChannelsLast:
		if rank != 4 {
			return nil, fmt.Errorf("channels_last needs a rank-4 tensor, got rank %d", rank)
		}
		return []int{0, 2, 3, 1}, nil
	case ChannelsLast3d:
		if rank != 5 {
			return nil, fmt.Errorf("channels_last_3d needs a rank-5 tensor, got rank %d", rank)
		}
		return []int{0, 2, 3, 4, 1}, nil
	}
	return nil, fmt.Errorf("unknown memory format %d", m)
}

// checkDimOrder validates an explicit dim order (a permutation of 0..rank-1).
func checkDimOrder(order []int64, rank int) ([]int, error) {
	if len(order) != rank {
		return nil, fmt.Errorf("dim_order has %d entries for a tensor of rank %d", len(order), rank)
	}
	seen := make([]bool, rank)
	out := make([]int, rank)
	contiguous := true
	for i, d := range order {
		if d < 0 || d >= int64(rank) || seen[d] {
			return nil, fmt.Errorf("dim_order %v is not a permutation of 0..%d", order, rank-1)
		}
		seen[d] = true
		out[i] = int(d)
		if int(d) != i {
			contiguous = false
		}
	}
	if contiguous {
		return nil, nil
	}
	return out, nil
}

// unbackedSym makes a fresh unbacked size symbol for a data-dependent dim of
// this node: u<node ID>, then u<node ID>_1, …, and declares it in the Env
// (range [0, inf]) when there is one.
func unbackedSym(c *InferCtx, k int) sym.Expr {
	name := "u" + strconv.Itoa(c.Node.ID)
	if k > 0 {
		name += "_" + strconv.Itoa(k)
	}
	if c.Env != nil {
		if _, known := c.Env.Range(name); !known {
			c.Env.Declare(name, sym.Range{Lo: sym.Finite(0), Hi: sym.PosInf()}, nil, true)
		}
	}
	return sym.Sym(name)
}

// typeOfArg is the IR type of an argument: an operand's type or a literal's.
func typeOfArg(a Arg) Type {
	switch a.Kind {
	case ArgValue:
		return a.Value.Type
	case ArgNone:
		return None
	case ArgInt:
		return IntType
	case ArgFloat:
		return FloatType
	case ArgBool:
		return BoolType
	case ArgString:
		return StringType
	case ArgDType:
		return DTypeType
	case ArgLayout:
		return LayoutType
	case ArgMemoryFormat:
		return MemoryFormatType
	case ArgDevice:
		return DeviceType
	case ArgList:
		elems := make([]Type, len(a.List))
		for i, e := range a.List {
			elems[i] = typeOfArg(e)
		}
		return &TupleType{Elems: elems}
	}
	return None
}

// ceilDivExpr and floorDivExpr are the sym helpers with constant folding
// checks for division by zero.
func floorDivExpr(a, b sym.Expr) (sym.Expr, error) {
	if v, ok := b.Const(); ok && v == 0 {
		return sym.Expr{}, fmt.Errorf("division by zero")
	}
	return sym.FloorDiv(a, b), nil
}

// positive fails when a dim expression is provably < 1 (or < 0 with allowZero).
func checkNonNegative(c *InferCtx, e sym.Expr, what string) error {
	if v, ok := e.Const(); ok {
		if v < 0 {
			return fmt.Errorf("%s is negative (%d)", what, v)
		}
		return nil
	}
	if knownTrue(c, sym.Lt(e, sym.Const(0))) {
		return fmt.Errorf("%s is negative (%s)", what, e)
	}
	return nil
}
