package opt

import (
	"encoding/binary"
	"fmt"
	"math"
	"strconv"
	"strings"

	"google.golang.org/protobuf/proto"

	pb "github.com/fxport/fxport/targets/onnx/onnxpb"
)

func defaultDomain(n *pb.NodeProto) bool {
	d := n.GetDomain()
	return d == "" || d == "ai.onnx"
}

// constants returns the known values: Constant nodes (any dtype) and, with
// Options.FoldInitializers, inline initializers of index types (INT64/INT32).
// Float initializers are weights; the folder never copies them into Constants.
func (o *optimizer) constants() map[string]*tensor {
	known := map[string]*tensor{}
	for _, t := range o.g.Initializer {
		if !o.opts.FoldInitializers || !isIndex(t.GetDataType()) {
			continue
		}
		if v, ok := fromProto(t); ok {
			known[t.GetName()] = v
		}
	}
	for _, n := range o.g.Node {
		if v, ok := constantValue(n); ok {
			known[n.Output[0]] = v
		}
	}
	return known
}

// constantValue decodes a Constant node's value.
func constantValue(n *pb.NodeProto) (*tensor, bool) {
	if n.GetOpType() != "Constant" || !defaultDomain(n) || len(n.Output) != 1 || len(n.Attribute) != 1 {
		return nil, false
	}
	a := n.Attribute[0]
	switch a.GetName() {
	case "value":
		return fromProto(a.T)
	case "value_int":
		return int64Tensor(nil, []int64{a.GetI()}), true
	case "value_ints":
		if len(a.Ints) == 0 {
			return nil, false // ambiguous element type (ONNX-P08)
		}
		return int64Tensor([]int64{int64(len(a.Ints))}, a.Ints), true
	case "value_float":
		t := &tensor{dt: tFloat, raw: make([]byte, 4)}
		binary.LittleEndian.PutUint32(t.raw, math.Float32bits(a.GetF()))
		return t, true
	case "value_floats":
		t := &tensor{dt: tFloat, dims: []int64{int64(len(a.Floats))}, raw: make([]byte, 4*len(a.Floats))}
		for i, f := range a.Floats {
			binary.LittleEndian.PutUint32(t.raw[4*i:], math.Float32bits(f))
		}
		return t, true
	}
	return nil, false
}

// staticShapes are the graph inputs whose every dim is a dim_value.
func (o *optimizer) staticShapes() map[string][]int64 {
	out := map[string][]int64{}
	for _, v := range o.g.Input {
		tt := v.GetType().GetTensorType()
		if tt == nil || tt.Shape == nil {
			continue
		}
		dims := make([]int64, 0, len(tt.Shape.Dim))
		ok := true
		for _, d := range tt.Shape.Dim {
			dv, isVal := d.Value.(*pb.TensorShapeProto_Dimension_DimValue)
			if !isVal {
				ok = false
				break
			}
			dims = append(dims, dv.DimValue)
		}
		if ok {
			out[v.GetName()] = dims
		}
	}
	return out
}

// fold replaces foldable nodes by Constants.
// known is the table of constants (constants), extended with what it folds.
func (o *optimizer) fold(known map[string]*tensor) bool {
	shapes := o.staticShapes()
	changed := false
	for _, n := range o.g.Node {
		if !defaultDomain(n) || len(n.Output) != 1 || hasSubgraph(n) || n.GetOpType() == "Constant" {
			continue
		}
		if _, never := neverFold[n.GetOpType()]; never {
			continue
		}
		var res *tensor
		if n.GetOpType() == "Shape" {
			if len(n.Input) != 1 {
				continue
			}
			dims, ok := shapes[n.Input[0]]
			if t := known[n.Input[0]]; t != nil {
				dims, ok = t.dims, true
			}
			if !ok {
				continue
			}
			res = evalShape(n, dims)
		} else {
			ev, ok := evaluators[n.GetOpType()]
			if !ok {
				continue
			}
			in := make([]*tensor, len(n.Input))
			all := true
			for i, name := range n.Input {
				if name == "" {
					continue
				}
				t := known[name]
				if t == nil || t.numel() > o.opts.inputLimit() {
					all = false
					break
				}
				in[i] = t
			}
			if !all {
				continue
			}
			res = ev(n, in)
		}
		if res == nil || res.numel() > o.opts.foldLimit() {
			continue
		}
		n.OpType = proto.String("Constant")
		n.Domain = nil
		n.Input = nil
		n.Attribute = []*pb.AttributeProto{{Name: proto.String("value"), Type: pb.AttributeProto_TENSOR.Enum(), T: res.proto()}}
		known[n.Output[0]] = res
		o.st.Folded++
		changed = true
	}
	return changed
}

// identityBits is the exact bit pattern of the neutral element of op on the
// right-hand side (Add: -0.0, so that -0.0 + c stays -0.0; Sub: +0.0;
// Mul/Div: 1) for a float type, or the integer value.
func isNeutral(op string, c *tensor) bool {
	if len(c.dims) != 0 || len(c.raw) == 0 {
		return false // rank 0 only: a broadcasting constant could change the shape
	}
	switch c.dt {
	case tInt64, tInt32, tInt16, tInt8, tUint8, tUint16, tUint32, tUint64:
		v := intAt(c.raw, c.dt, 0)
		if op == "Add" || op == "Sub" {
			return v == 0
		}
		return v == 1
	}
	var bits uint64
	switch elemSize(c.dt) {
	case 2:
		bits = uint64(binary.LittleEndian.Uint16(c.raw))
	case 4:
		bits = uint64(binary.LittleEndian.Uint32(c.raw))
	case 8:
		bits = binary.LittleEndian.Uint64(c.raw)
	}
	var negZero, one uint64
	switch c.dt {
	case tFloat:
		negZero, one = 0x80000000, uint64(math.Float32bits(1))
	case tDouble:
		negZero, one = 0x8000000000000000, math.Float64bits(1)
	case tFloat16:
		negZero, one = 0x8000, 0x3c00
	case tBfloat16:
		negZero, one = 0x8000, 0x3f80
	default:
		return false
	}
	switch op {
	case "Add":
		return bits == negZero
	case "Sub":
		return bits == 0
	default:
		return bits == one
	}
}

// rewrite applies the exact algebraic identities x+0, x-0, x*1, x/1.
// known is the table of constants (constants).
func (o *optimizer) rewrite(known map[string]*tensor) bool {
	outs := o.outputs()
	r := map[string]string{}
	changed := false
	kept := o.g.Node[:0]
	for _, n := range o.g.Node {
		op := n.GetOpType()
		x := ""
		if defaultDomain(n) && len(n.Input) == 2 && len(n.Output) == 1 {
			a, b := resolve(r, n.Input[0]), resolve(r, n.Input[1])
			switch op {
			case "Add", "Mul":
				if c := known[b]; c != nil && isNeutral(op, c) {
					x = a
				} else if c := known[a]; c != nil && isNeutral(op, c) {
					x = b
				}
			case "Sub", "Div":
				if c := known[b]; c != nil && isNeutral(op, c) {
					x = a
				}
			}
		}
		if x == "" {
			kept = append(kept, n)
			continue
		}
		o.st.Rewritten++
		changed = true
		y := n.Output[0]
		if outs[y] || o.pinned[y] {
			n.OpType, n.Input, n.Attribute = proto.String("Identity"), []string{x}, nil
			kept = append(kept, n)
			continue
		}
		r[y] = x
	}
	o.g.Node = kept
	o.rename(r)
	return changed
}

// identities removes Identity nodes. An Identity defining a graph output
// stays when its input is a graph input, an initializer, another graph output
// or a value with other uses (ONNX-S01); otherwise the producer of its input
// is renamed to the output.
func (o *optimizer) identities() bool {
	any := false
	for _, n := range o.g.Node {
		if n.GetOpType() == "Identity" {
			any = true
			break
		}
	}
	if !any {
		return false
	}
	outs := o.outputs()
	uses := make(map[string]int, 2*len(o.g.Node))
	producer := make(map[string]*pb.NodeProto, len(o.g.Node))
	for _, n := range o.g.Node {
		for _, in := range n.Input {
			uses[in]++
		}
		for _, out := range n.Output {
			producer[out] = n
		}
	}
	for _, v := range o.g.Output {
		uses[v.GetName()]++
	}
	r := map[string]string{}
	changed := false
	kept := o.g.Node[:0]
	for _, n := range o.g.Node {
		if n.GetOpType() != "Identity" || !defaultDomain(n) || len(n.Input) != 1 || len(n.Output) != 1 || o.pinned[n.Output[0]] {
			kept = append(kept, n)
			continue
		}
		x, y := resolve(r, n.Input[0]), n.Output[0]
		if !outs[y] {
			r[y] = x
			uses[x] += uses[y] - 1
			o.st.IdentitiesRemoved++
			changed = true
			continue
		}
		p := producer[x]
		if p == nil || outs[x] || o.pinned[x] || uses[x] != 1 {
			kept = append(kept, n)
			continue
		}
		for i, out := range p.Output {
			if out == x {
				p.Output[i] = y
			}
		}
		delete(producer, x)
		producer[y] = p
		o.st.IdentitiesRemoved++
		changed = true
	}
	o.g.Node = kept
	o.rename(r)
	return changed
}

// cseExcluded are ops two identical instances of which may differ.
func cseExcluded(op string) bool {
	switch op {
	case "RandomUniform", "RandomNormal", "RandomUniformLike", "RandomNormalLike", "Multinomial", "Bernoulli", "Dropout":
		return true
	}
	return false
}

// cse merges nodes with the same op, attributes and inputs.
func (o *optimizer) cse() bool {
	outs := o.outputs()
	seen := make(map[string]*pb.NodeProto, len(o.g.Node))
	r := map[string]string{}
	changed := false
	kept := o.g.Node[:0]
	var kb strings.Builder
	for _, n := range o.g.Node {
		for i, in := range n.Input {
			n.Input[i] = resolve(r, in)
		}
		if len(n.Output) == 0 || hasSubgraph(n) || cseExcluded(n.GetOpType()) {
			kept = append(kept, n)
			continue
		}
		kb.Reset()
		nodeKey(&kb, n)
		key := kb.String()
		first, dup := seen[key]
		if !dup {
			seen[key] = n
			kept = append(kept, n)
			continue
		}
		pinnedOut := false
		for _, out := range n.Output {
			if outs[out] || o.pinned[out] {
				pinnedOut = true
			}
		}
		if pinnedOut {
			kept = append(kept, n)
			continue
		}
		for i, out := range n.Output {
			if out != "" {
				r[out] = first.Output[i]
			}
		}
		o.st.CSEMerged++
		changed = true
	}
	o.g.Node = kept
	o.rename(r)
	return changed
}

func nodeKey(b *strings.Builder, n *pb.NodeProto) {
	b.WriteString(n.GetDomain())
	b.WriteByte(0)
	b.WriteString(n.GetOpType())
	b.WriteByte(0)
	b.WriteString(strconv.Itoa(len(n.Output)))
	for _, in := range n.Input {
		b.WriteByte(1)
		b.WriteString(in)
	}
	for _, a := range n.Attribute {
		b.WriteByte(2)
		attrKey(b, a)
	}
}

func attrKey(b *strings.Builder, a *pb.AttributeProto) {
	b.WriteString(a.GetName())
	b.WriteByte(0)
	b.WriteString(strconv.Itoa(int(a.GetType())))
	b.WriteByte(0)
	switch a.GetType() {
	case pb.AttributeProto_INT:
		b.WriteString(strconv.FormatInt(a.GetI(), 10))
	case pb.AttributeProto_FLOAT:
		b.WriteString(strconv.FormatUint(uint64(math.Float32bits(a.GetF())), 16))
	case pb.AttributeProto_STRING:
		b.WriteString(strconv.Quote(string(a.S)))
	case pb.AttributeProto_INTS:
		for _, v := range a.Ints {
			b.WriteString(strconv.FormatInt(v, 10))
			b.WriteByte(',')
		}
	case pb.AttributeProto_FLOATS:
		for _, v := range a.Floats {
			b.WriteString(strconv.FormatUint(uint64(math.Float32bits(v)), 16))
			b.WriteByte(',')
		}
	case pb.AttributeProto_TENSOR:
		if t, ok := fromProto(a.T); ok && a.T.GetName() == "" {
			b.WriteString(strconv.Itoa(int(t.dt)))
			for _, d := range t.dims {
				b.WriteByte(',')
				b.WriteString(strconv.FormatInt(d, 10))
			}
			b.WriteByte(':')
			b.Write(t.raw)
			return
		}
		fallthrough
	default:
		data, err := proto.MarshalOptions{Deterministic: true}.Marshal(a)
		if err != nil {
			// An unmarshalable attribute never matches another: a key unique
			// to this attribute value (only equality is used, never order).
			fmt.Fprintf(b, "\xff%p", a)
			return
		}
		b.Write(data)
	}
}

// dce removes nodes none of whose outputs is used.
func (o *optimizer) dce() bool {
	live := make(map[string]bool, 2*len(o.g.Node))
	for name := range o.outputs() {
		live[name] = true
	}
	for name := range o.pinned {
		live[name] = true
	}
	keep := make([]bool, len(o.g.Node))
	for i := len(o.g.Node) - 1; i >= 0; i-- {
		n := o.g.Node[i]
		for _, out := range n.Output {
			if out != "" && live[out] {
				keep[i] = true
				break
			}
		}
		if keep[i] {
			for _, in := range n.Input {
				live[in] = true
			}
		}
	}
	kept := o.g.Node[:0]
	for i, n := range o.g.Node {
		if keep[i] {
			kept = append(kept, n)
		} else {
			o.st.DeadNodes++
		}
	}
	changed := len(kept) != len(o.g.Node)
	o.g.Node = kept
	return changed
}
