package passes

import (
	"bytes"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/fxport/fxport/interp"
	"github.com/fxport/fxport/ir"
)

// ConstPropSource is a weight source that yields one result of an op applied
// to constant operands: the folded value of a node whose inputs were all
// constants (constant-propagation). Nothing is computed until Open, which
// reads the operand sources, runs the op's reference kernel (interp.RunOp)
// and returns the result's bytes, row-major and little-endian. Operands are
// contiguous tensors given by their own sources, so a chain of folds nests
// sources. Its IR spelling is
//
//	const_prop(op="aten.add.Tensor", result=0, dtype="f32", shape=[2, 3],
//	           args=[None, None, 1],
//	           operands=[[0, -1, "f32", [2, 3], "inline(…)"], [1, -1, "i64", [], "…"]])
//
// args holds the node's arguments in schema order, with None where an
// operand goes; each operand is [argument index, list element index (-1
// for a plain Tensor argument), dtype, shape, source].
type ConstPropSource struct {
	Op       ir.Op
	Result   int
	DType    ir.DType
	Shape    []int64
	Args     []ir.Arg // literals; operand slots are overwritten at Open
	Operands []ConstPropOperand
}

// ConstPropOperand is one tensor operand of a ConstPropSource.
type ConstPropOperand struct {
	Arg, Elem int // argument index; list element index or -1
	DType     ir.DType
	Shape     []int64
	Source    ir.WeightSource
}

func init() { ir.RegisterWeightSource("const_prop", parseConstPropSource) }

func (s *ConstPropSource) check() error {
	info := s.Op.Info()
	if info == nil {
		return fmt.Errorf("const_prop(...): no op")
	}
	if s.Result < 0 || s.Result >= len(info.Schema.Returns) {
		return fmt.Errorf("const_prop(...): %s has no result %d", info.Name, s.Result)
	}
	if s.DType.Size() == 0 {
		return fmt.Errorf("const_prop(...): dtype %s has no element size", s.DType)
	}
	if err := constPropCheckShape(s.Shape); err != nil {
		return err
	}
	if len(s.Args) > len(info.Schema.Args) && !info.Schema.VarArgs {
		return fmt.Errorf("const_prop(...): %s takes %d arguments, got %d", info.Name, len(info.Schema.Args), len(s.Args))
	}
	for i, o := range s.Operands {
		if o.Arg < 0 || o.Arg >= len(s.Args) {
			return fmt.Errorf("const_prop(...): operand %d: argument index %d out of range", i, o.Arg)
		}
		a := s.Args[o.Arg]
		switch {
		case o.Elem < 0 && a.Kind != ir.ArgNone:
			return fmt.Errorf("const_prop(...): operand %d: argument %d is %s, not an operand slot", i, o.Arg, a)
		case o.Elem >= 0 && (a.Kind != ir.ArgList || o.Elem >= len(a.List) || a.List[o.Elem].Kind != ir.ArgNone):
			return fmt.Errorf("const_prop(...): operand %d: argument %d has no operand slot %d", i, o.Arg, o.Elem)
		}
		if o.Source == nil {
			return fmt.Errorf("const_prop(...): operand %d has no source", i)
		}
		if err := constPropCheckShape(o.Shape); err != nil {
			return fmt.Errorf("const_prop(...): operand %d: %w", i, err)
		}
		if want := constPropNumel(o.Shape) * int64(o.DType.Size()); o.DType.Size() == 0 || o.Source.Size() != want {
			return fmt.Errorf("const_prop(...): operand %d: source %s has %d bytes, want %d for %s%v", i, o.Source, o.Source.Size(), want, o.DType.Abbr(), o.Shape)
		}
	}
	return nil
}

func constPropCheckShape(shape []int64) error {
	for _, d := range shape {
		if d < 0 {
			return fmt.Errorf("const_prop(...): negative dim in shape %v", shape)
		}
	}
	return nil
}

func constPropNumel(shape []int64) int64 {
	n := int64(1)
	for _, d := range shape {
		n *= d
	}
	return n
}

// Size is the byte size of the folded result.
func (s *ConstPropSource) Size() int64 { return constPropNumel(s.Shape) * int64(s.DType.Size()) }

// Open computes the folded result.
func (s *ConstPropSource) Open() (io.ReadCloser, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	args := make([]interp.Value, len(s.Args))
	for i, a := range s.Args {
		v, err := constPropLiteral(a)
		if err != nil {
			return nil, fmt.Errorf("const_prop(...): argument %d: %w", i, err)
		}
		args[i] = v
	}
	for i, o := range s.Operands {
		data, err := readSource("const_prop", o.Source)
		if err != nil {
			return nil, err
		}
		t, err := interp.FromBytes(o.DType, o.Shape, data)
		if err != nil {
			return nil, fmt.Errorf("const_prop(...): operand %d: %w", i, err)
		}
		if o.Elem < 0 {
			args[o.Arg] = t
		} else {
			args[o.Arg].([]interp.Value)[o.Elem] = t
		}
	}
	outs, err := interp.RunOp(s.Op, args)
	if err != nil {
		return nil, fmt.Errorf("const_prop(...): %w", err)
	}
	if s.Result >= len(outs) {
		return nil, fmt.Errorf("const_prop(...): %s returned %d results, want result %d", s.Op, len(outs), s.Result)
	}
	t, ok := outs[s.Result].(*interp.Tensor)
	if !ok {
		return nil, fmt.Errorf("const_prop(...): %s result %d is %s, not a tensor", s.Op, s.Result, interp.Describe(outs[s.Result]))
	}
	if t.DType != s.DType || !etShapeEqual(t.Shape, s.Shape) {
		return nil, fmt.Errorf("const_prop(...): %s computed %s%v, want %s%v", s.Op, t.DType.Abbr(), t.Shape, s.DType.Abbr(), s.Shape)
	}
	return io.NopCloser(bytes.NewReader(t.Bytes())), nil
}

// constPropLiteral converts a literal argument, lists of literals included,
// to the interpreter's value.
func constPropLiteral(a ir.Arg) (interp.Value, error) {
	if a.Kind != ir.ArgList {
		return interp.Literal(a)
	}
	out := make([]interp.Value, len(a.List))
	for i, e := range a.List {
		v, err := constPropLiteral(e)
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}

func (s *ConstPropSource) String() string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "const_prop(op=%s, result=%d, dtype=%s, shape=%s, args=%s, operands=[",
		strconv.Quote(s.Op.String()), s.Result, strconv.Quote(s.DType.Abbr()), ir.IntsArg(s.Shape...), ir.ListArg(s.Args...))
	for i, o := range s.Operands {
		if i > 0 {
			sb.WriteString(", ")
		}
		fmt.Fprintf(&sb, "[%d, %d, %s, %s, %s]", o.Arg, o.Elem, strconv.Quote(o.DType.Abbr()), ir.IntsArg(o.Shape...), strconv.Quote(o.Source.String()))
	}
	sb.WriteString("])")
	return sb.String()
}

func parseConstPropSource(pos []ir.Arg, kw map[string]ir.Arg) (ir.WeightSource, error) {
	if len(pos) != 0 {
		return nil, fmt.Errorf("const_prop(...) takes keyword arguments only")
	}
	for _, k := range []string{"op", "result", "dtype", "shape", "args", "operands"} {
		if _, ok := kw[k]; !ok {
			return nil, fmt.Errorf("const_prop(...): missing %s", k)
		}
	}
	if len(kw) != 6 {
		for k := range kw {
			switch k {
			case "op", "result", "dtype", "shape", "args", "operands":
			default:
				return nil, fmt.Errorf("const_prop(...): unknown argument %q", k)
			}
		}
	}
	s := &ConstPropSource{}
	a := kw["op"]
	op, ok := ir.LookupOp(a.Str)
	if a.Kind != ir.ArgString || !ok {
		return nil, fmt.Errorf("const_prop(...): op must name a known op, got %s", a)
	}
	s.Op = op
	if a = kw["result"]; a.Kind != ir.ArgInt {
		return nil, fmt.Errorf("const_prop(...): result must be an int")
	}
	s.Result = int(a.Int)
	dt, err := constPropDType(kw["dtype"])
	if err != nil {
		return nil, fmt.Errorf("const_prop(...): dtype: %w", err)
	}
	s.DType = dt
	if s.Shape, err = constPropInts(kw["shape"]); err != nil {
		return nil, fmt.Errorf("const_prop(...): shape: %w", err)
	}
	if a = kw["args"]; a.Kind != ir.ArgList {
		return nil, fmt.Errorf("const_prop(...): args must be a list")
	}
	s.Args = a.List
	if a = kw["operands"]; a.Kind != ir.ArgList {
		return nil, fmt.Errorf("const_prop(...): operands must be a list")
	}
	for i, e := range a.List {
		o, err := parseConstPropOperand(e)
		if err != nil {
			return nil, fmt.Errorf("const_prop(...): operand %d: %w", i, err)
		}
		s.Operands = append(s.Operands, o)
	}
	if err := s.check(); err != nil {
		return nil, err
	}
	return s, nil
}

func parseConstPropOperand(e ir.Arg) (ConstPropOperand, error) {
	var o ConstPropOperand
	if e.Kind != ir.ArgList || len(e.List) != 5 || e.List[0].Kind != ir.ArgInt || e.List[1].Kind != ir.ArgInt || e.List[4].Kind != ir.ArgString {
		return o, fmt.Errorf("want [argument index, element index, dtype, shape, source], got %s", e)
	}
	o.Arg, o.Elem = int(e.List[0].Int), int(e.List[1].Int)
	var err error
	if o.DType, err = constPropDType(e.List[2]); err != nil {
		return o, err
	}
	if o.Shape, err = constPropInts(e.List[3]); err != nil {
		return o, err
	}
	if o.Source, err = ir.ParseWeightSource(e.List[4].Str); err != nil {
		return o, err
	}
	return o, nil
}

func constPropDType(a ir.Arg) (ir.DType, error) {
	if a.Kind != ir.ArgString {
		return 0, fmt.Errorf("want a dtype abbreviation string, got %s", a)
	}
	dt, ok := ir.DTypeFromAbbr(a.Str)
	if !ok {
		return 0, fmt.Errorf("unknown dtype %q", a.Str)
	}
	return dt, nil
}

func constPropInts(a ir.Arg) ([]int64, error) {
	if a.Kind != ir.ArgList {
		return nil, fmt.Errorf("want a list of ints, got %s", a)
	}
	out := []int64{}
	for _, e := range a.List {
		if e.Kind != ir.ArgInt {
			return nil, fmt.Errorf("want a list of ints, got %s", a)
		}
		out = append(out, e.Int)
	}
	return out, nil
}
