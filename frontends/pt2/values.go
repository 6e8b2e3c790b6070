package pt2

import (
	"fmt"
	"math"
	"math/bits"
	"strconv"

	"github.com/fxport/fxport/internal/pt2schema"
	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/ir/sym"
)

// maxRank bounds tensor ranks (torch allows 64 dims).
const maxRank = 64

// validName reports whether s can be an IR value or region name.
func validName(s string) bool {
	if s == "" || len(s) > 1024 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// deviceString spells a Device the way the IR does: "" for the CPU,
// "cuda:0", "cuda", "meta".
func deviceString(d pt2schema.Device) (string, error) {
	t := d.Type
	if !validDeviceType(t) {
		return "", fmt.Errorf("bad device type %q (torch's device types are lowercase names such as cpu, cuda, mps, meta)", t)
	}
	if d.Index != nil {
		if *d.Index < 0 {
			if t == "cpu" {
				return "", nil
			}
			return t, nil
		}
		if t == "cpu" && *d.Index == 0 {
			return "", nil
		}
		return t + ":" + strconv.FormatInt(*d.Index, 10), nil
	}
	if t == "cpu" {
		return "", nil
	}
	return t, nil
}

// validDeviceType reports a name torch could give a device type: a
// lowercase letter, then lowercase letters, digits and underscores.
func validDeviceType(t string) bool {
	if t == "" || len(t) > 64 || t[0] < 'a' || t[0] > 'z' {
		return false
	}
	for i := 0; i < len(t); i++ {
		c := t[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// argDevice spells an as_device argument ("cpu" stays "cpu").
func argDevice(d pt2schema.Device) (string, error) {
	s, err := deviceString(d)
	if err == nil && s == "" {
		s = "cpu"
		if d.Index != nil && *d.Index >= 0 {
			s += ":" + strconv.FormatInt(*d.Index, 10)
		}
	}
	return s, err
}

// dtype maps an export ScalarType code.
func dtype(code int64) (ir.DType, error) {
	if code >= 0 && code <= math.MaxInt32 {
		if d, ok := ir.DTypeFromPT2(int(code)); ok {
			return d, nil
		}
	}
	return 0, fmt.Errorf("unknown ScalarType code %d", code)
}

// symbols tracks what the program's symbolic expressions say about symbols.
type symbols struct {
	cache map[string]sym.Expr
	bad   map[string]error
	seen  map[string]bool
	hints map[string]int64
	// strideCache holds the strides parsed only for dim orders, pending
	// the tensor types whose dim order awaits the symbol environment.
	strideCache map[string]sym.Expr
	pending     []pendingOrder
}

func newSymbols() *symbols {
	return &symbols{cache: map[string]sym.Expr{}, bad: map[string]error{}, seen: map[string]bool{}, hints: map[string]int64{}, strideCache: map[string]sym.Expr{}}
}

// parse reads an expr_str (sympy srepr or plain text), records the symbols
// it mentions and, for a bare symbol, its integer hint.
func (s *symbols) parse(x pt2schema.SymExpr) (sym.Expr, error) {
	e, ok := s.cache[x.ExprStr]
	if !ok {
		if err := s.bad[x.ExprStr]; err != nil {
			return sym.Expr{}, err
		}
		var err error
		e, err = sym.Parse(x.ExprStr)
		if err != nil {
			err = fmt.Errorf("symbolic expression %q: %v", x.ExprStr, err)
			s.bad[x.ExprStr] = err
			return sym.Expr{}, err
		}
		s.cache[x.ExprStr] = e
		for _, name := range e.Symbols() {
			s.seen[name] = true
		}
	}
	if name, isSym := e.Name(); isSym && x.HintKind == pt2schema.HintInt {
		if _, have := s.hints[name]; !have {
			s.hints[name] = x.HintInt
		}
	}
	return e, nil
}

// symInt turns a SymInt into an integer expression.
func (s *symbols) symInt(v pt2schema.SymInt) (sym.Expr, error) {
	if !v.IsExpr {
		return sym.Const(v.Int), nil
	}
	e, err := s.parse(v.Expr)
	if err != nil {
		return sym.Expr{}, err
	}
	if !e.IsInt() {
		return sym.Expr{}, fmt.Errorf("symbolic expression %q is not an integer", v.Expr.ExprStr)
	}
	return e, nil
}

// tensorType builds the IR type of a tensor value.
func (s *symbols) tensorType(m *pt2schema.TensorMeta) (*ir.TensorType, error) {
	dt, err := dtype(m.DType)
	if err != nil {
		return nil, err
	}
	if m.Layout != 7 && m.Layout != 0 {
		name := strconv.FormatInt(m.Layout, 10)
		if m.Layout > 0 && m.Layout < int64(len(pt2schema.LayoutNames)) {
			name = pt2schema.LayoutNames[m.Layout]
		}
		return nil, fmt.Errorf("layout %s is not supported (only strided tensors)", name)
	}
	if len(m.Sizes) > maxRank {
		return nil, fmt.Errorf("rank %d exceeds %d", len(m.Sizes), maxRank)
	}
	t := &ir.TensorType{DType: dt, Shape: make([]sym.Expr, len(m.Sizes))}
	for i, d := range m.Sizes {
		e, err := s.symInt(d)
		if err != nil {
			return nil, fmt.Errorf("sizes[%d]: %v", i, err)
		}
		if c, ok := e.Const(); ok && c < 0 {
			return nil, fmt.Errorf("sizes[%d] is negative (%d)", i, c)
		}
		t.Shape[i] = e
	}
	if t.Device, err = deviceString(m.Device); err != nil {
		return nil, err
	}
	if len(m.Strides) != 0 && len(m.Strides) != len(m.Sizes) {
		return nil, fmt.Errorf("%d strides for %d sizes", len(m.Strides), len(m.Sizes))
	}
	s.setDimOrder(t, m.Strides)
	return t, nil
}

// pendingOrder is a tensor type whose dim order depends on symbols: it is
// derived once the program's symbol environment (ranges, hints, unbacked
// flags) is complete, which is after every graph has been read.
type pendingOrder struct {
	t       *ir.TensorType
	strides []sym.Expr
}

// setDimOrder gives t the dim order of torch's strides (ET-P13): at once
// when sizes and strides are all constants, otherwise once the symbol
// environment is known (resolveDimOrders; the ranges follow the graphs in
// the file). Strides that cannot be parsed leave the contiguous order. A
// node result missing from tensor_values is inferred before that, from its
// inputs' orders as far as they are known then.
func (s *symbols) setDimOrder(t *ir.TensorType, strides []pt2schema.SymInt) {
	if len(t.Shape) < 2 || len(strides) != len(t.Shape) {
		return
	}
	st := make([]sym.Expr, len(strides))
	static := true
	for i, v := range strides {
		e, ok := s.strideExpr(v)
		if !ok {
			return
		}
		st[i] = e
		static = static && e.IsConst()
	}
	for _, d := range t.Shape {
		static = static && d.IsConst()
	}
	if static {
		t.DimOrder = dimOrder(t.Shape, st, nil)
		return
	}
	s.pending = append(s.pending, pendingOrder{t, st})
}

// strideExpr parses a stride. Unlike sizes, strides neither declare the
// symbols they mention nor record hints: they only serve the dim order.
func (s *symbols) strideExpr(v pt2schema.SymInt) (sym.Expr, bool) {
	if !v.IsExpr {
		return sym.Const(v.Int), true
	}
	e, ok := s.cache[v.Expr.ExprStr]
	if !ok {
		if e, ok = s.strideCache[v.Expr.ExprStr]; !ok {
			var err error
			if e, err = sym.Parse(v.Expr.ExprStr); err != nil {
				e = sym.Expr{}
			}
			s.strideCache[v.Expr.ExprStr] = e
		}
	}
	return e, e.IsValid() && e.IsInt()
}

// resolveDimOrders derives the dim orders setDimOrder deferred, under the
// program's symbol environment.
func (s *symbols) resolveDimOrders(env *sym.Env) {
	for _, p := range s.pending {
		p.t.DimOrder = dimOrder(p.t.Shape, p.strides, env)
	}
	s.pending = nil
}

// dimOrder is ir.DimOrderFromStrides (ET-P13) for the reader: nil, the
// contiguous order, where the strides have no dim order. That is an
// expanded layout (a stride that is definitely 0 on a dim of size > 1),
// which torch programs have in general (broadcast views, expanded sample
// inputs) and ONNX exports take as they are; the IR describes such a value
// as the contiguous tensor it reads as, which is also what the ExecuTorch
// prepares make of every user input (ET-B05, make-inputs-contiguous).
// Strided weights keep their strides in ir.Weight (contiguous-constants,
// ET-PF04, rewrites them for ExecuTorch).
func dimOrder(sizes, strides []sym.Expr, env *sym.Env) []int {
	order, err := ir.DimOrderFromStrides(sizes, strides, env)
	if err != nil {
		return nil
	}
	return order
}

// contiguousStrides returns the row-major strides torch gives a shape (a
// dim of size 0 counts as 1).
func contiguousStrides(shape []int64) []int64 {
	st := make([]int64, len(shape))
	acc := int64(1)
	for i := len(shape) - 1; i >= 0; i-- {
		st[i] = acc
		acc *= max(shape[i], 1)
	}
	return st
}

// viewWeight builds a weight viewing a storage of storageNumel elements
// (-1: unknown) with torch's sizes, strides and storage offset, checking
// that the view stays inside the storage.
func viewWeight(name string, dt ir.DType, sizes, strides []int64, offset int64, device string, storageNumel int64) (*ir.Weight, error) {
	if len(sizes) > maxRank {
		return nil, fmt.Errorf("rank %d exceeds %d", len(sizes), maxRank)
	}
	if len(strides) != len(sizes) {
		return nil, fmt.Errorf("%d strides for %d sizes", len(strides), len(sizes))
	}
	if offset < 0 {
		return nil, fmt.Errorf("negative storage offset %d", offset)
	}
	numel := uint64(1)
	last := uint64(offset) // largest element index the view touches
	for i, d := range sizes {
		if d < 0 {
			return nil, fmt.Errorf("sizes[%d] is negative (%d)", i, d)
		}
		if strides[i] < 0 {
			return nil, fmt.Errorf("strides[%d] is negative (%d)", i, strides[i])
		}
		hi, lo := bits.Mul64(numel, uint64(d))
		if hi != 0 || lo > 1<<62 {
			return nil, fmt.Errorf("%v elements overflow", sizes)
		}
		numel = lo
		if d > 0 {
			hi, lo = bits.Mul64(uint64(d-1), uint64(strides[i]))
			if hi != 0 || lo > 1<<62 || last+lo > 1<<62 {
				return nil, fmt.Errorf("strides %v reach beyond any storage", strides)
			}
			last += lo
		}
	}
	if numel > 0 && storageNumel >= 0 && last >= uint64(storageNumel) {
		return nil, fmt.Errorf("the view (sizes %v, strides %v, offset %d) reaches element %d of a storage of %d", sizes, strides, offset, last, storageNumel)
	}
	w := &ir.Weight{Name: name, Type: ir.Tensor(dt, sizes...), StorageOffset: offset}
	w.Type.Device = device
	cs := contiguousStrides(sizes)
	for i := range cs {
		if cs[i] != strides[i] && sizes[i] != 1 {
			w.Strides = append([]int64(nil), strides...)
			break
		}
	}
	return w, nil
}

// literalType is the type of a constant input's value.
func literalType(a ir.Arg) ir.Type {
	switch a.Kind {
	case ir.ArgInt:
		return ir.IntType
	case ir.ArgFloat:
		return ir.FloatType
	case ir.ArgBool:
		return ir.BoolType
	case ir.ArgString:
		return ir.StringType
	}
	return ir.None
}

// literalArg converts a literal Argument (None, int, float, bool, str).
func literalArg(a *pt2schema.Argument) (ir.Arg, bool) {
	switch a.Tag {
	case pt2schema.TagNone:
		return ir.NoneArg(), true
	case pt2schema.TagInt:
		return ir.IntArg(a.Int), true
	case pt2schema.TagFloat:
		return ir.FloatArg(a.Float), true
	case pt2schema.TagBool:
		return ir.BoolArg(a.Bool), true
	case pt2schema.TagString:
		return ir.StringArg(a.Str), true
	}
	return ir.Arg{}, false
}

func posInf() float64 { return math.Inf(1) }

func nan() float64 { return math.NaN() }
