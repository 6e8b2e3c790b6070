package pte

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"reflect"
	"sort"
	"strconv"
	"strings"

	etfb "github.com/fxport/fxport/targets/executorch/fb/executorch_flatbuffer"
	xnnfb "github.com/fxport/fxport/targets/executorch/fb/fb_xnnpack"
)

// Summary writes a deterministic, human-readable description of f: header,
// segments, constants, named data, and per method its inputs and outputs,
// values, instructions, delegates (with XNNPACK graphs) and memory plan.
func (f *File) Summary(w io.Writer) error {
	bw := bufio.NewWriter(w)
	s := &summary{w: bw, f: f}
	s.file()
	return bw.Flush()
}

type summary struct {
	w *bufio.Writer
	f *File
}

func (s *summary) p(format string, args ...any) { fmt.Fprintf(s.w, format+"\n", args...) }

func (s *summary) file() {
	f := s.f
	s.p("file: %d bytes", f.Size)
	if b := f.Bundled; b != nil {
		s.bundled(b)
	}
	if h := f.Header; h != nil {
		s.p("header: eh00 length %d, program_size %d, segment_base_offset %d, segment_data_size %d", h.Length, h.ProgramSize, h.SegmentBaseOffset, h.SegmentDataSize)
	} else {
		s.p("header: none (program %d bytes)", f.ProgramSize)
	}
	p := f.Program
	s.p("program: version %d, %d method(s), %d segment(s), %d named data", p.Version, len(p.ExecutionPlan), len(f.Segments), len(p.NamedData))
	for i, sg := range f.Segments {
		s.p("  segment %d: offset %d, %d bytes", i, sg.Offset, sg.Size)
	}
	if cs := p.ConstantSegment; cs != nil {
		s.p("  constant_segment: segment %d, offsets %v", cs.SegmentIndex, cs.Offsets)
	} else {
		s.p("  constant_segment: absent")
	}
	if len(p.ConstantBuffer) > 0 {
		var sizes []int
		for _, b := range p.ConstantBuffer {
			sizes = append(sizes, len(b.Storage))
		}
		s.p("  constant_buffer (deprecated inline constants): %d buffer(s), sizes %v", len(sizes), sizes)
	}
	for i, m := range p.MutableDataSegments {
		s.p("  mutable_data_segments[%d]: segment %d, offsets %v", i, m.SegmentIndex, m.Offsets)
	}
	for i, b := range p.BackendDelegateData {
		s.p("  backend_delegate_data[%d]: %d bytes inline", i, len(b.Data))
	}
	for i, nd := range p.NamedData {
		s.p("  named_data[%d]: %q -> segment %d (%d bytes)", i, nd.Key, nd.SegmentIndex, f.Segments[nd.SegmentIndex].Size)
	}
	for _, m := range f.Methods {
		s.method(m)
	}
}

func (s *summary) method(m Method) {
	pl := m.Plan
	s.p("")
	s.p("method %s:", pl.Name)
	s.p("  inputs:  %s", s.valueRefs(pl, pl.Inputs))
	s.p("  outputs: %s", s.valueRefs(pl, pl.Outputs))
	s.p("  non_const_buffer_sizes: %v", pl.NonConstBufferSizes)
	for _, d := range pl.NonConstBufferDevice {
		s.p("  buffer %d on %s:%d", d.BufferIdx, d.DeviceType, d.DeviceIndex)
	}
	s.p("  values (%d):", len(pl.Values))
	for i := range pl.Values {
		s.p("    %%%d = %s", i, s.value(pl, i))
	}
	s.p("  operators (%d):", len(pl.Operators))
	for i, op := range pl.Operators {
		s.p("    [%d] %s", i, opName(op))
	}
	for ci, c := range pl.Chains {
		s.p("  chain %d: inputs %v, outputs %v, %d instruction(s)", ci, c.Inputs, c.Outputs, len(c.Instructions))
		for ii, in := range c.Instructions {
			s.p("    %d: %s", ii, s.instruction(pl, in))
		}
	}
	for di, d := range m.Delegates {
		loc := "segment"
		if d.Location == etfb.DataLocationINLINE {
			loc = "inline"
		}
		s.p("  delegate %d: %s, %s %d, %d bytes", di, d.ID, loc, d.Index, len(d.Data))
		for _, cs := range pl.Delegates[di].CompileSpecs {
			s.p("    compile_spec %q = %s", cs.Key, bytesText(cs.Value))
		}
		if d.XNNPACK != nil {
			s.xnnpack(d.XNNPACK)
		}
	}
	s.memoryPlan(pl)
}

func opName(op *etfb.OperatorT) string {
	if op.Overload == "" {
		return op.Name
	}
	return op.Name + "." + op.Overload
}

// bytesText prints printable ASCII as a quoted string, anything else as a
// byte count.
func bytesText(b []byte) string {
	for _, c := range b {
		if c < 0x20 || c > 0x7e {
			return fmt.Sprintf("<%d bytes>", len(b))
		}
	}
	return strconv.Quote(string(b))
}

func (s *summary) valueRefs(pl *etfb.ExecutionPlanT, idx []int32) string {
	var parts []string
	for _, i := range idx {
		parts = append(parts, fmt.Sprintf("%%%d: %s", i, s.valueType(pl, int(i))))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

func scalarName(st etfb.ScalarType) string {
	if n, ok := etfb.EnumNamesScalarType[st]; ok {
		return strings.ToLower(n)
	}
	switch st {
	case scalarComplexHalf:
		return "complex32"
	case scalarComplexFloat:
		return "complex64"
	case scalarComplexDouble:
		return "complex128"
	}
	return fmt.Sprintf("scalar_type(%d)", st)
}

func tensorType(t *etfb.TensorT) string {
	return scalarName(t.ScalarType) + dims(t.Sizes)
}

// valueType is the short type of value i: f32[3], Int, Double...
func (s *summary) valueType(pl *etfb.ExecutionPlanT, i int) string {
	v := pl.Values[i]
	if v == nil || v.Val == nil {
		return "None"
	}
	if t, ok := v.Val.Value.(*etfb.TensorT); ok {
		return tensorType(t)
	}
	return v.Val.Type.String()
}

func (s *summary) value(pl *etfb.ExecutionPlanT, i int) string {
	v := pl.Values[i]
	if v == nil || v.Val == nil {
		return "None"
	}
	switch x := v.Val.Value.(type) {
	case *etfb.NullT:
		return "Null"
	case *etfb.IntT:
		return fmt.Sprintf("Int %d", x.IntVal)
	case *etfb.BoolT:
		return fmt.Sprintf("Bool %t", x.BoolVal)
	case *etfb.DoubleT:
		return "Double " + formatFloat(x.DoubleVal)
	case *etfb.StringT:
		return "String " + strconv.Quote(x.StringVal)
	case *etfb.IntListT:
		return fmt.Sprintf("IntList %s", refs64(x.Items))
	case *etfb.DoubleListT:
		var p []string
		for _, d := range x.Items {
			p = append(p, formatFloat(d))
		}
		return "DoubleList [" + strings.Join(p, ", ") + "]"
	case *etfb.BoolListT:
		return fmt.Sprintf("BoolList %v", x.Items)
	case *etfb.TensorListT:
		return "TensorList " + refs32(x.Items)
	case *etfb.OptionalTensorListT:
		return "OptionalTensorList " + refs32(x.Items)
	case *etfb.TensorT:
		return "Tensor " + s.tensor(x)
	}
	return v.Val.Type.String()
}

func formatFloat(d float64) string {
	switch {
	case math.IsInf(d, 1):
		return "inf"
	case math.IsInf(d, -1):
		return "-inf"
	case math.IsNaN(d):
		return "nan"
	}
	return strconv.FormatFloat(d, 'g', -1, 64)
}

func refs32(items []int32) string {
	var p []string
	for _, i := range items {
		if i < 0 {
			p = append(p, "None")
			continue
		}
		p = append(p, fmt.Sprintf("%%%d", i))
	}
	return "[" + strings.Join(p, ", ") + "]"
}

func refs64(items []int64) string {
	var p []string
	for _, i := range items {
		p = append(p, fmt.Sprintf("%%%d", i))
	}
	return "[" + strings.Join(p, ", ") + "]"
}

func (s *summary) tensor(t *etfb.TensorT) string {
	var b strings.Builder
	b.WriteString(tensorType(t))
	fmt.Fprintf(&b, " dim_order %s", dims(t.DimOrder))
	if t.ShapeDynamism != etfb.TensorShapeDynamismSTATIC {
		fmt.Fprintf(&b, " %s", t.ShapeDynamism)
	}
	e := t.ExtraTensorInfo
	switch {
	case e != nil && e.Location == etfb.TensorDataLocationEXTERNAL:
		fmt.Fprintf(&b, " external %q", e.FullyQualifiedName)
	case t.DataBufferIdx > 0 && t.AllocationInfo != nil:
		fmt.Fprintf(&b, " mutable %d", t.DataBufferIdx)
		if e != nil && e.FullyQualifiedName != "" {
			fmt.Fprintf(&b, " %q", e.FullyQualifiedName)
		}
	case t.DataBufferIdx > 0:
		fmt.Fprintf(&b, " constant %d", t.DataBufferIdx)
		if off, ok := s.constantOffset(t.DataBufferIdx); ok {
			fmt.Fprintf(&b, " @%d", off)
		}
	}
	if a := t.AllocationInfo; a != nil {
		fmt.Fprintf(&b, " mem %d+%d", a.MemoryId, uint64(a.MemoryOffsetHigh)<<32|uint64(a.MemoryOffsetLow))
	}
	if e != nil && e.DeviceType != etfb.DeviceTypeCPU {
		fmt.Fprintf(&b, " device %s:%d", e.DeviceType, e.DeviceIndex)
	}
	if e != nil && e.MutableDataSegmentsIdx != 0 {
		fmt.Fprintf(&b, " mutable_data %d", e.MutableDataSegmentsIdx)
	}
	return b.String()
}

// constantOffset is the byte offset of constant idx in the constant segment.
func (s *summary) constantOffset(idx uint32) (uint64, bool) {
	cs := s.f.Program.ConstantSegment
	if cs == nil || int(idx) >= len(cs.Offsets) {
		return 0, false
	}
	return cs.Offsets[idx], true
}

func (s *summary) instruction(pl *etfb.ExecutionPlanT, in *etfb.InstructionT) string {
	if in == nil || in.InstrArgs == nil {
		return "(none)"
	}
	arg := func(i int32) string {
		v := pl.Values[i]
		if v != nil && v.Val != nil {
			switch x := v.Val.Value.(type) {
			case *etfb.IntT:
				return fmt.Sprintf("%%%d=%d", i, x.IntVal)
			case *etfb.BoolT:
				return fmt.Sprintf("%%%d=%t", i, x.BoolVal)
			case *etfb.DoubleT:
				return fmt.Sprintf("%%%d=%s", i, formatFloat(x.DoubleVal))
			case *etfb.NullT:
				return fmt.Sprintf("%%%d=None", i)
			}
		}
		return fmt.Sprintf("%%%d", i)
	}
	args := func(a []int32) string {
		var p []string
		for _, i := range a {
			p = append(p, arg(i))
		}
		return strings.Join(p, ", ")
	}
	switch x := in.InstrArgs.Value.(type) {
	case *etfb.KernelCallT:
		return fmt.Sprintf("%s(%s)", opName(pl.Operators[x.OpIndex]), args(x.Args))
	case *etfb.DelegateCallT:
		return fmt.Sprintf("delegate %d %s(%s)", x.DelegateIndex, pl.Delegates[x.DelegateIndex].Id, args(x.Args))
	case *etfb.MoveCallT:
		return fmt.Sprintf("move %%%d -> %%%d", x.MoveFrom, x.MoveTo)
	case *etfb.JumpFalseCallT:
		return fmt.Sprintf("jump_false %s -> %d", arg(x.CondValueIndex), x.DestinationInstruction)
	case *etfb.FreeCallT:
		return fmt.Sprintf("free %%%d", x.ValueIndex)
	}
	return in.InstrArgs.Type.String()
}

// memoryPlan lists planned tensors by buffer and offset.
func (s *summary) memoryPlan(pl *etfb.ExecutionPlanT) {
	type slot struct {
		mem, off, size uint64
		value          int
	}
	var slots []slot
	for i, v := range pl.Values {
		if v == nil || v.Val == nil {
			continue
		}
		t, ok := v.Val.Value.(*etfb.TensorT)
		if !ok || t.AllocationInfo == nil {
			continue
		}
		n, _ := tensorBytes(t)
		a := t.AllocationInfo
		slots = append(slots, slot{uint64(a.MemoryId), uint64(a.MemoryOffsetHigh)<<32 | uint64(a.MemoryOffsetLow), n, i})
	}
	if len(slots) == 0 {
		return
	}
	sort.Slice(slots, func(i, j int) bool {
		a, b := slots[i], slots[j]
		if a.mem != b.mem {
			return a.mem < b.mem
		}
		if a.off != b.off {
			return a.off < b.off
		}
		return a.value < b.value
	})
	s.p("  memory plan:")
	for _, sl := range slots {
		s.p("    buffer %d [%d, %d): %%%d", sl.mem, sl.off, sl.off+sl.size, sl.value)
	}
}

func (s *summary) xnnpack(x *XNNPayload) {
	g := x.Graph
	if h := x.Header; h != nil {
		s.p("    XH00: flatbuffer at %d (%d bytes), constant data at %d (%d bytes)", h.FlatbufferOffset, h.FlatbufferSize, h.ConstantDataOffset, h.ConstantDataSize)
	}
	s.p("    %s graph version %q: %d value(s), %d node(s), num_externs %d, input_ids %v, output_ids %v", x.Identifier, g.Version, len(g.Xvalues), len(g.Xnodes), g.NumExterns, g.InputIds, g.OutputIds)
	for _, v := range g.Xvalues {
		t := XNNTensor(v)
		var b strings.Builder
		fmt.Fprintf(&b, "      value %d: %s%s", t.IdOut, strings.TrimPrefix(t.Datatype.String(), "xnn_datatype_"), dims(t.Dims))
		if t.ExternalId != math.MaxUint32 {
			fmt.Fprintf(&b, " external %d", t.ExternalId)
		}
		switch t.Flags {
		case 1:
			b.WriteString(" input")
		case 2:
			b.WriteString(" output")
		case 0:
		default:
			fmt.Fprintf(&b, " flags %d", t.Flags)
		}
		if t.ConstantBufferIdx != 0 {
			fmt.Fprintf(&b, " constant %d", t.ConstantBufferIdx)
		}
		if q, ok := v.XvalueUnion.Value.(*xnnfb.XNNQuantizedTensorValueT); ok && q.QuantParams != nil {
			fmt.Fprintf(&b, " %s%s", q.QuantParams.Type, fields(q.QuantParams.Value))
		}
		s.p("%s", b.String())
	}
	for i, n := range g.Xnodes {
		if n.XnodeUnion == nil {
			s.p("      node %d: unknown kind", i)
			continue
		}
		line := fmt.Sprintf("      node %d: %s%s", i, n.XnodeUnion.Type, fields(n.XnodeUnion.Value))
		if mm := n.OutputMinMax; mm != nil {
			line += fmt.Sprintf(" output_min_max [%s, %s]", formatFloat(float64(mm.OutputMin)), formatFloat(float64(mm.OutputMax)))
		}
		if n.DebugHandle != 0 {
			line += fmt.Sprintf(" debug_handle %d", n.DebugHandle)
		}
		s.p("%s", line)
	}
	for i, c := range g.ConstantData {
		if c.NamedKey != "" {
			s.p("      constant_data[%d]: named %q, %d bytes", i, c.NamedKey, c.Size)
		} else {
			s.p("      constant_data[%d]: inline offset %d, %d bytes", i, c.Offset, c.Size)
		}
	}
}

// fields prints a generated object-API struct's fields in declaration
// (= schema) order as {name=value ...}, using their json tags.
func fields(v any) string {
	rv := reflect.ValueOf(v)
	if rv.Kind() == reflect.Pointer {
		if rv.IsNil() {
			return ""
		}
		rv = rv.Elem()
	}
	if rv.Kind() != reflect.Struct {
		return ""
	}
	var p []string
	for i := 0; i < rv.NumField(); i++ {
		name := rv.Type().Field(i).Tag.Get("json")
		if name == "" {
			name = rv.Type().Field(i).Name
		}
		fv := rv.Field(i)
		var txt string
		switch fv.Kind() {
		case reflect.Float32, reflect.Float64:
			txt = formatFloat(fv.Float())
		case reflect.Uint32:
			if fv.Uint() == math.MaxUint32 {
				txt = "none"
			} else {
				txt = strconv.FormatUint(fv.Uint(), 10)
			}
		default:
			txt = fmt.Sprint(fv.Interface())
		}
		p = append(p, name+"="+txt)
	}
	return "{" + strings.Join(p, " ") + "}"
}

// dims prints integers as [a,b,c].
func dims[T int32 | uint32 | uint8](xs []T) string {
	p := make([]string, len(xs))
	for i, x := range xs {
		p[i] = strconv.FormatInt(int64(x), 10)
	}
	return "[" + strings.Join(p, ",") + "]"
}
