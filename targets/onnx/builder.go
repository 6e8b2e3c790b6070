package onnx

import (
	"encoding/binary"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/ir/sym"
	pb "github.com/fxport/fxport/targets/onnx/onnxpb"
)

// Builder is the ONNX graph under construction: lowerings (and the ONNX-TR
// translations registered with pm) add nodes through it. It owns the value
// namespace, deduplicates constants per (dtype, shape, bytes), and lowers
// symbolic integers to Shape/Gather/arithmetic nodes.
type Builder struct {
	opset int
	prog  *ir.Program
	nodes []*pb.NodeProto

	names    map[*ir.Value]string
	reserved map[*ir.Value]string // graph-output names reserved for a value
	used     map[string]bool
	next     map[string]int // base → next suffix fresh tries (no rescans from 1)
	consts   map[string]string
	syms     map[string]string // canonical sym.Expr text → 0-d INT64 value
	symSrc   map[string][2]any // symbol → (graph-input ONNX name, dim)
	shapes   map[string]string // ShapeTensor cache: dims text → 1-D INT64 value
	cur      *ir.Node
	// Node names are their own namespace: "node.<first result>.<op>", with a
	// "__<k>" suffix for the k-th further node of that op for the same IR
	// node (IR result names are unique, so no global set is needed).
	nameNode *ir.Node
	nameOps  map[string]int
	keyBuf   []byte // scratch for constant keys
	slab     slabs  // nodes and one-output lists (slab.go)
	// scope prefixes node names inside a subgraph body ("" in the main
	// graph), so body nodes never share a name with the graph around them.
	scope string
}

func newBuilder(p *ir.Program, opset int) *Builder {
	// Presize for the program: about two ONNX values per IR node.
	n := 0
	if p != nil && p.Main != nil {
		n = p.Main.Len()
	}
	return &Builder{
		opset: opset, prog: p,
		nodes: make([]*pb.NodeProto, 0, 2*n),
		names: make(map[*ir.Value]string, n), reserved: map[*ir.Value]string{}, used: make(map[string]bool, 4*n),
		next:   make(map[string]int, n),
		consts: map[string]string{}, syms: map[string]string{}, symSrc: map[string][2]any{},
		shapes: map[string]string{},
	}
}

// Opset is the default-domain opset the model is built for.
func (b *Builder) Opset() int { return b.opset }

// Node is the IR node being lowered.
func (b *Builder) Node() *ir.Node { return b.cur }

// reserve claims a name exactly; it fails when the name is taken.
func (b *Builder) reserve(name string) error {
	if name == "" {
		return fmt.Errorf("empty ONNX value name")
	}
	if b.used[name] {
		return fmt.Errorf("ONNX value name %q used twice", name)
	}
	b.used[name] = true
	return nil
}

// fresh returns an unused name derived from base.
func (b *Builder) fresh(base string) string {
	if base == "" {
		base = "v"
	}
	if !b.used[base] {
		b.used[base] = true
		return base
	}
	i := b.next[base]
	if i == 0 {
		i = 1
	}
	for ; ; i++ {
		n := base + "__" + strconv.Itoa(i)
		if !b.used[n] {
			b.used[n] = true
			b.next[base] = i + 1
			return n
		}
	}
}

func (b *Builder) nodeName(opType string) string {
	if b.nameNode != b.cur {
		b.nameNode = b.cur
		clear(b.nameOps)
	}
	if b.nameOps == nil {
		b.nameOps = map[string]int{}
	}
	k := b.nameOps[opType]
	b.nameOps[opType] = k + 1
	name := "node." + b.scope + b.cur.Results[0].Name + "." + opType
	if k > 0 {
		name += "__" + strconv.Itoa(k)
	}
	return name
}

func (b *Builder) tmpBase() string {
	if b.cur != nil && len(b.cur.Results) > 0 {
		return b.cur.Results[0].Name + "__t"
	}
	return "t"
}

func (b *Builder) add(opType string, inputs, outputs []string, attrs []*pb.AttributeProto) {
	node := b.slab.node()
	node.Input, node.Output, node.OpType, node.Attribute = inputs, outputs, &opType, attrs
	if b.cur != nil && len(b.cur.Results) > 0 {
		name := b.nodeName(opType)
		node.Name = &name
	}
	b.nodes = append(b.nodes, node)
}

// Tmp adds a single-output node whose result is an intermediate value.
func (b *Builder) Tmp(opType string, inputs []string, attrs ...*pb.AttributeProto) string {
	out := b.fresh(b.tmpBase())
	b.add(opType, inputs, b.slab.oneOutput(out), attrs)
	return out
}

// TmpN adds a node with n intermediate outputs.
func (b *Builder) TmpN(opType string, inputs []string, n int, attrs ...*pb.AttributeProto) []string {
	outs := make([]string, n)
	for i := range outs {
		outs[i] = b.fresh(b.tmpBase())
	}
	b.add(opType, inputs, outs, attrs)
	return outs
}

// Emit adds the node that defines result v (named after v, or after the graph
// output reserved for it) and binds v to it.
func (b *Builder) Emit(v *ir.Value, opType string, inputs []string, attrs ...*pb.AttributeProto) string {
	out := b.resultName(v)
	b.add(opType, inputs, b.slab.oneOutput(out), attrs)
	b.names[v] = out
	return out
}

// EmitN adds a node whose outputs define results (nil entries: outputs the
// program does not use get intermediate names).
func (b *Builder) EmitN(results []*ir.Value, opType string, inputs []string, attrs ...*pb.AttributeProto) []string {
	outs := make([]string, len(results))
	for i, v := range results {
		if v == nil {
			outs[i] = b.fresh(b.tmpBase())
			continue
		}
		outs[i] = b.resultName(v)
		b.names[v] = outs[i]
	}
	b.add(opType, inputs, outs, attrs)
	return outs
}

// Bind makes result v the existing ONNX value name (no node), unless v is a
// graph output that needs its own name, in which case an Identity is added.
func (b *Builder) Bind(v *ir.Value, name string) {
	if _, ok := b.reserved[v]; ok {
		b.Emit(v, "Identity", []string{name})
		return
	}
	b.names[v] = name
}

func (b *Builder) resultName(v *ir.Value) string {
	if r, ok := b.reserved[v]; ok {
		return r
	}
	return b.fresh(v.Name)
}

// Value returns the ONNX name of an IR value.
func (b *Builder) Value(v *ir.Value) (string, error) {
	if n, ok := b.names[v]; ok {
		return n, nil
	}
	if t, ok := v.Type.(*ir.SymIntType); ok && t.Expr.IsValid() {
		return b.SymInt(t.Expr)
	}
	return "", fmt.Errorf("value %%%s has no ONNX value (defined by an unlowered node?)", v.Name)
}

// Attribute helpers.

// AttrInt is an INT attribute.
func AttrInt(name string, v int64) *pb.AttributeProto {
	t := pb.AttributeProto_INT
	return &pb.AttributeProto{Name: &name, Type: &t, I: &v}
}

// AttrFloat is a FLOAT attribute.
func AttrFloat(name string, v float64) *pb.AttributeProto {
	t := pb.AttributeProto_FLOAT
	f := float32(v)
	return &pb.AttributeProto{Name: &name, Type: &t, F: &f}
}

// AttrString is a STRING attribute.
func AttrString(name, v string) *pb.AttributeProto {
	t := pb.AttributeProto_STRING
	return &pb.AttributeProto{Name: &name, Type: &t, S: []byte(v)}
}

// AttrInts is an INTS attribute. An empty list is never written as an
// attribute value (ONNX-P08): callers pass a tensor input instead.
func AttrInts(name string, v ...int64) *pb.AttributeProto {
	t := pb.AttributeProto_INTS
	return &pb.AttributeProto{Name: &name, Type: &t, Ints: append([]int64{}, v...)}
}

// AttrFloats is a FLOATS attribute.
func AttrFloats(name string, v ...float32) *pb.AttributeProto {
	t := pb.AttributeProto_FLOATS
	return &pb.AttributeProto{Name: &name, Type: &t, Floats: append([]float32{}, v...)}
}

// AttrTensor is a TENSOR attribute.
func AttrTensor(name string, v *pb.TensorProto) *pb.AttributeProto {
	t := pb.AttributeProto_TENSOR
	return &pb.AttributeProto{Name: &name, Type: &t, T: v}
}

// Constants.

// Const returns a Constant holding the tensor (dt, shape, little-endian
// data), deduplicated per graph.
func (b *Builder) Const(dt ir.DType, shape []int64, data []byte) (string, error) {
	et, err := elemType(dt)
	if err != nil {
		return "", err
	}
	kb := strconv.AppendInt(b.keyBuf[:0], int64(et), 10)
	for _, d := range shape {
		kb = append(kb, ',')
		kb = strconv.AppendInt(kb, d, 10)
	}
	kb = append(kb, '|')
	kb = append(kb, data...)
	b.keyBuf = kb
	if n, ok := b.consts[string(kb)]; ok { // no allocation for the lookup
		return n, nil
	}
	key := string(kb)
	name := b.fresh("const." + dt.Abbr())
	tp := &pb.TensorProto{Dims: append([]int64{}, shape...), DataType: int32Ptr(int32(et)), RawData: append([]byte{}, data...)}
	if len(data) == 0 {
		tp.RawData = []byte{}
	}
	saved := b.cur
	b.cur = nil
	b.add("Constant", nil, []string{name}, []*pb.AttributeProto{AttrTensor("value", tp)})
	b.cur = saved
	b.consts[key] = name
	return name, nil
}

func int32Ptr(v int32) *int32 { return &v }

// I64s is a 1-D INT64 constant (possibly empty: an empty INT64 tensor, never
// an empty value_ints).
func (b *Builder) I64s(v ...int64) string {
	n, _ := b.Const(ir.Int64, []int64{int64(len(v))}, encodeI64s(v))
	return n
}

// I64 is a 0-d INT64 constant.
func (b *Builder) I64(v int64) string {
	n, _ := b.Const(ir.Int64, nil, encodeI64s([]int64{v}))
	return n
}

// Scalar is a 0-d constant of dtype dt holding x (bools: x != 0).
func (b *Builder) Scalar(dt ir.DType, x float64) (string, error) {
	data, err := encodeScalar(dt, x)
	if err != nil {
		return "", err
	}
	return b.Const(dt, nil, data)
}

func encodeI64s(v []int64) []byte {
	out := make([]byte, 8*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint64(out[8*i:], uint64(x))
	}
	return out
}

func encodeScalar(dt ir.DType, x float64) ([]byte, error) {
	le := binary.LittleEndian
	switch dt {
	case ir.Bool:
		if x != 0 {
			return []byte{1}, nil
		}
		return []byte{0}, nil
	case ir.Uint8:
		return []byte{byte(int64(x))}, nil
	case ir.Int8:
		return []byte{byte(int8(int64(x)))}, nil
	case ir.Int16, ir.Uint16:
		b := make([]byte, 2)
		le.PutUint16(b, uint16(int64(x)))
		return b, nil
	case ir.Int32, ir.Uint32:
		b := make([]byte, 4)
		le.PutUint32(b, uint32(int64(x)))
		return b, nil
	case ir.Int64, ir.Uint64:
		b := make([]byte, 8)
		le.PutUint64(b, uint64(int64(x)))
		return b, nil
	case ir.Float32:
		b := make([]byte, 4)
		le.PutUint32(b, math.Float32bits(float32(x)))
		return b, nil
	case ir.Float64:
		b := make([]byte, 8)
		le.PutUint64(b, math.Float64bits(x))
		return b, nil
	case ir.Float16:
		b := make([]byte, 2)
		le.PutUint16(b, f32ToF16(float32(x)))
		return b, nil
	case ir.BFloat16:
		b := make([]byte, 2)
		bits := math.Float32bits(float32(x))
		bits += 0x7fff + (bits>>16)&1 // round to nearest even
		le.PutUint16(b, uint16(bits>>16))
		return b, nil
	}
	return nil, fmt.Errorf("cannot materialize a %s scalar", dt)
}

func f32ToF16(f float32) uint16 {
	bits := math.Float32bits(f)
	sign := uint16(bits>>16) & 0x8000
	exp := int32(bits>>23)&0xff - 127 + 15
	frac := bits & 0x7fffff
	switch {
	case int32(bits>>23)&0xff == 0xff:
		if frac != 0 {
			return sign | 0x7e00
		}
		return sign | 0x7c00
	case exp >= 31:
		return sign | 0x7c00
	case exp <= 0:
		if exp < -10 {
			return sign
		}
		frac |= 0x800000
		shift := uint32(14 - exp)
		half := uint32(1) << (shift - 1)
		r := frac >> shift
		if rem := frac & (1<<shift - 1); rem > half || (rem == half && r&1 == 1) {
			r++
		}
		return sign | uint16(r)
	}
	r := uint16(exp)<<10 | uint16(frac>>13)
	if rem := frac & 0x1fff; rem > 0x1000 || (rem == 0x1000 && r&1 == 1) {
		r++
	}
	return sign | r
}

// Symbolic integers.

// SymInt lowers a symbolic integer expression to a 0-d INT64 value, built
// from Shape/Gather of the graph input that carries each symbol.
func (b *Builder) SymInt(e sym.Expr) (string, error) {
	if c, ok := e.Const(); ok {
		return b.I64(c), nil
	}
	key := e.String()
	if n, ok := b.syms[key]; ok {
		return n, nil
	}
	saved := b.cur
	b.cur = nil
	defer func() { b.cur = saved }()
	var out string
	args := e.Args()
	lower := func(xs []sym.Expr) ([]string, error) {
		var ns []string
		for _, x := range xs {
			n, err := b.SymInt(x)
			if err != nil {
				return nil, err
			}
			ns = append(ns, n)
		}
		return ns, nil
	}
	switch e.Op() {
	case sym.OpSym:
		name, _ := e.Name()
		src, ok := b.symSrc[name]
		if !ok {
			return "", fmt.Errorf("symbol %s is not the size of any graph input dimension; it cannot be computed in the ONNX graph", name)
		}
		shape := b.Tmp("Shape", []string{src[0].(string)})
		out = b.Tmp("Gather", []string{shape, b.I64(int64(src[1].(int)))}, AttrInt("axis", 0))
	case sym.OpAdd, sym.OpMul, sym.OpMin, sym.OpMax:
		ns, err := lower(args)
		if err != nil {
			return "", err
		}
		op := map[sym.Op]string{sym.OpAdd: "Add", sym.OpMul: "Mul", sym.OpMin: "Min", sym.OpMax: "Max"}[e.Op()]
		out = ns[0]
		for _, n := range ns[1:] {
			out = b.Tmp(op, []string{out, n})
		}
	case sym.OpPow:
		ns, err := lower(args[:1])
		if err != nil {
			return "", err
		}
		k, _ := args[1].Const()
		out = ns[0]
		for i := int64(1); i < k; i++ {
			out = b.Tmp("Mul", []string{out, ns[0]})
		}
	case sym.OpFloorDiv, sym.OpMod:
		ns, err := lower(args)
		if err != nil {
			return "", err
		}
		q := b.FloorDivInt(ns[0], ns[1])
		out = q
		if e.Op() == sym.OpMod {
			out = b.Tmp("Sub", []string{ns[0], b.Tmp("Mul", []string{q, ns[1]})})
		}
	default:
		return "", fmt.Errorf("symbolic expression %s: operator not lowered to ONNX", e)
	}
	b.syms[key] = out
	return out, nil
}

// FloorDivInt is signed floor division of INT64 values (ONNX-TR08): ONNX Div
// truncates, so the quotient is corrected by one when the signs differ and
// the remainder is not zero.
func (b *Builder) FloorDivInt(a, d string) string {
	q := b.Tmp("Div", []string{a, d})
	r := b.Tmp("Sub", []string{a, b.Tmp("Mul", []string{q, d})})
	zero := b.I64(0)
	nonzero := b.Tmp("Not", []string{b.Tmp("Equal", []string{r, zero})})
	signDiff := b.Tmp("Xor", []string{b.Tmp("Less", []string{a, zero}), b.Tmp("Less", []string{d, zero})})
	fix := b.Tmp("Cast", []string{b.Tmp("And", []string{nonzero, signDiff})}, AttrInt("to", int64(pb.TensorProto_INT64)))
	return b.Tmp("Sub", []string{q, fix})
}

// IntList lowers an int[] / SymInt[] argument to a 1-D INT64 tensor.
func (b *Builder) IntList(a ir.Arg) (string, error) {
	if a.Kind == ir.ArgValue {
		// A single SymInt or a 1-D tensor of ints.
		n, err := b.Value(a.Value)
		if err != nil {
			return "", err
		}
		if t := a.Value.Tensor(); t != nil && t.Rank() == 1 {
			return n, nil
		}
		return b.Tmp("Unsqueeze", []string{n, b.I64s(0)}), nil
	}
	if a.Kind == ir.ArgInt {
		return b.I64s(a.Int), nil
	}
	if a.Kind != ir.ArgList {
		return "", fmt.Errorf("expected an int list, got %s", a)
	}
	if vals, ok := constInts(a); ok {
		return b.I64s(vals...), nil
	}
	var parts []string
	var run []int64
	flush := func() {
		if len(run) > 0 {
			parts = append(parts, b.I64s(run...))
			run = nil
		}
	}
	for _, el := range a.List {
		e, err := ir.SymIntOf(el)
		if err != nil {
			return "", err
		}
		if c, ok := e.Const(); ok {
			run = append(run, c)
			continue
		}
		flush()
		var n string
		if el.Kind == ir.ArgValue {
			n, err = b.Value(el.Value)
		} else {
			n, err = b.SymInt(e)
		}
		if err != nil {
			return "", err
		}
		parts = append(parts, b.Tmp("Unsqueeze", []string{n, b.I64s(0)}))
	}
	flush()
	if len(parts) == 1 {
		return parts[0], nil
	}
	return b.Tmp("Concat", parts, AttrInt("axis", 0)), nil
}

// constInts returns the list's values when all are static integers.
func constInts(a ir.Arg) ([]int64, bool) {
	switch a.Kind {
	case ir.ArgInt:
		return []int64{a.Int}, true
	case ir.ArgList:
		out := make([]int64, 0, len(a.List))
		for _, el := range a.List {
			e, err := ir.SymIntOf(el)
			if err != nil {
				return nil, false
			}
			c, ok := e.Const()
			if !ok {
				return nil, false
			}
			out = append(out, c)
		}
		return out, true
	}
	return nil, false
}

// ShapeTensor returns the 1-D INT64 shape of an IR tensor type: a constant
// when static, otherwise a Concat of constants and symbolic pieces.
func (b *Builder) ShapeTensor(shape []sym.Expr) (string, error) {
	static := true
	for _, d := range shape {
		if _, ok := d.Const(); !ok {
			static = false
			break
		}
	}
	if static {
		return b.shapeTensor(shape)
	}
	// Symbolic: one Unsqueeze/Concat chain per distinct dims list, reused by
	// every later node (the nodes are emitted in topological order).
	var kb strings.Builder
	for _, d := range shape {
		kb.WriteString(d.String())
		kb.WriteByte(',')
	}
	key := kb.String()
	if n, ok := b.shapes[key]; ok {
		return n, nil
	}
	n, err := b.shapeTensor(shape)
	if err != nil {
		return "", err
	}
	b.shapes[key] = n
	return n, nil
}

func (b *Builder) shapeTensor(shape []sym.Expr) (string, error) {
	l := make([]ir.Arg, len(shape))
	for i, d := range shape {
		if c, ok := d.Const(); ok {
			l[i] = ir.IntArg(c)
			continue
		}
		n, err := b.SymInt(d)
		if err != nil {
			return "", err
		}
		// Pre-lowered: splice in through a synthetic list below.
		l[i] = ir.Arg{Kind: ir.ArgString, Str: n}
	}
	var parts []string
	var run []int64
	for _, el := range l {
		if el.Kind == ir.ArgInt {
			run = append(run, el.Int)
			continue
		}
		if len(run) > 0 {
			parts = append(parts, b.I64s(run...))
			run = nil
		}
		parts = append(parts, b.Tmp("Unsqueeze", []string{el.Str, b.I64s(0)}))
	}
	if len(run) > 0 || len(parts) == 0 {
		parts = append(parts, b.I64s(run...))
	}
	if len(parts) == 1 {
		return parts[0], nil
	}
	return b.Tmp("Concat", parts, AttrInt("axis", 0)), nil
}

// CastTo casts name from dtype `from` to `to` (no node when equal).
func (b *Builder) CastTo(name string, from, to ir.DType) (string, error) {
	if from == to {
		return name, nil
	}
	et, err := elemType(to)
	if err != nil {
		return "", err
	}
	return b.Tmp("Cast", []string{name}, AttrInt("to", int64(et))), nil
}

// sortedKeys lists a map's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}
