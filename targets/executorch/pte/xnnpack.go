package pte

import (
	"fmt"
	"math"

	xnnfb "github.com/fxport/fxport/targets/executorch/fb/fb_xnnpack"
	"github.com/fxport/fxport/targets/executorch/internal/fbs"
)

// decodeXNNPayload decodes an XNNPACK delegate blob: an XH00 header followed
// by the XN01 (or XN00) graph, or a bare graph flatbuffer.
func decodeXNNPayload(data []byte) (*XNNPayload, error) {
	h, err := parseXNNHeader(data)
	if err != nil {
		return nil, err
	}
	graph := data
	var consts []byte
	if h != nil {
		graph = data[h.FlatbufferOffset : h.FlatbufferOffset+h.FlatbufferSize]
		consts = data[h.ConstantDataOffset : uint64(h.ConstantDataOffset)+h.ConstantDataSize]
	}
	id := fbs.Identifier(graph)
	if id != "XN01" && id != "XN00" {
		return nil, fmt.Errorf("XNNPACK graph: file identifier %q, want XN01 or XN00", id)
	}
	if err := schemas.xnnpack.Verify(graph, ""); err != nil {
		return nil, fmt.Errorf("XNNPACK graph: %w", err)
	}
	x := &XNNPayload{Header: h, Identifier: id, ConstantData: consts}
	x.Graph = xnnfb.GetRootAsXNNGraph(graph, 0).UnPack()
	return x, nil
}

// XNNTensor returns the plain tensor value of v (unwrapping a quantized
// tensor), nil for an empty or unknown value.
func XNNTensor(v *xnnfb.XValueT) *xnnfb.XNNTensorValueT {
	if v == nil || v.XvalueUnion == nil {
		return nil
	}
	switch x := v.XvalueUnion.Value.(type) {
	case *xnnfb.XNNTensorValueT:
		return x
	case *xnnfb.XNNQuantizedTensorValueT:
		return x.TensorValue
	}
	return nil
}

// namedSizes maps each named data key of the program to the size of its
// segment (a later entry of a repeated key wins). checkXNN reads it; the
// caller builds it once per file, not once per delegate.
func (f *File) namedSizes() map[string]uint64 {
	named := make(map[string]uint64, len(f.Program.NamedData))
	for _, nd := range f.Program.NamedData {
		named[nd.Key] = f.Segments[nd.SegmentIndex].Size
	}
	return named
}

// checkXNN validates the graph's value ids, node operands and constant data
// references against the graph and the program's named data (named, from
// namedSizes).
func (f *File) checkXNN(x *XNNPayload, named map[string]uint64) error {
	g := x.Graph
	ids := map[uint32]bool{}
	for i, v := range g.Xvalues {
		t := XNNTensor(v)
		if t == nil {
			return fmt.Errorf("XNNPACK graph: xvalues[%d]: not a tensor value", i)
		}
		if ids[t.IdOut] {
			return fmt.Errorf("XNNPACK graph: xvalues[%d]: duplicate id_out %d", i, t.IdOut)
		}
		ids[t.IdOut] = true
		if t.ExternalId != math.MaxUint32 && t.ExternalId >= g.NumExterns {
			return fmt.Errorf("XNNPACK graph: xvalues[%d]: external_id %d out of range (num_externs %d)", i, t.ExternalId, g.NumExterns)
		}
		if t.ConstantBufferIdx != 0 && int(t.ConstantBufferIdx) >= len(g.ConstantData) {
			return fmt.Errorf("XNNPACK graph: xvalues[%d]: constant_buffer_idx %d out of range (%d constant_data entries)", i, t.ConstantBufferIdx, len(g.ConstantData))
		}
	}
	for i, id := range append(append([]uint32{}, g.InputIds...), g.OutputIds...) {
		if !ids[id] {
			return fmt.Errorf("XNNPACK graph: input/output id #%d (%d) is not a value", i, id)
		}
	}
	for i, n := range g.Xnodes {
		if n == nil || n.XnodeUnion == nil {
			continue // a newer schema's node kind
		}
		for _, o := range XNNOperands(n) {
			if !ids[o.ID] {
				return fmt.Errorf("XNNPACK graph: xnodes[%d](%s).%s = %d is not a value id", i, n.XnodeUnion.Type, o.Name, o.ID)
			}
		}
	}
	for i, c := range g.ConstantData {
		if c == nil || i == 0 {
			continue
		}
		if c.NamedKey != "" {
			size, ok := named[c.NamedKey]
			if !ok {
				// Not in the program: the runtime looks it up in the
				// external data map (.ptd) at load, where a missing key
				// is an error (run.Load reports it).
				continue
			}
			if c.Size > size {
				return fmt.Errorf("XNNPACK graph: constant_data[%d]: %d bytes but named data %q holds %d", i, c.Size, c.NamedKey, size)
			}
			continue
		}
		if c.Offset > uint64(len(x.ConstantData)) || c.Size > uint64(len(x.ConstantData))-c.Offset {
			return fmt.Errorf("XNNPACK graph: constant_data[%d]: [%d, +%d) runs past the %d-byte constant region", i, c.Offset, c.Size, len(x.ConstantData))
		}
	}
	return nil
}

// Operand is a node's named value id.
type Operand struct {
	Name string
	ID   uint32
}

// XNNOperands lists the value ids a node reads and writes, inputs first,
// in schema field order. Unset optional operands (a bias of 0xFFFFFFFF, a
// missing Cat input) are left out.
func XNNOperands(n *xnnfb.XNodeT) []Operand {
	var ops []Operand
	add := func(name string, id uint32) { ops = append(ops, Operand{name, id}) }
	switch x := n.XnodeUnion.Value.(type) {
	case *xnnfb.XNNNode2x1T:
		add("input1_id", x.Input1Id)
		add("input2_id", x.Input2Id)
		add("output_id", x.OutputId)
	case *xnnfb.XNNNode1x1T:
		add("input_id", x.InputId)
		add("output_id", x.OutputId)
	case *xnnfb.XNNCatT:
		ins := []uint32{x.Input1Id, x.Input2Id, x.Input3Id, x.Input4Id, x.Input5Id}
		arity := map[xnnfb.XNodeUnion]int{
			xnnfb.XNodeUnionXNNConcatenate2: 2, xnnfb.XNodeUnionXNNConcatenate3: 3,
			xnnfb.XNodeUnionXNNConcatenate4: 4, xnnfb.XNodeUnionXNNConcatenate5: 5,
		}[n.XnodeUnion.Type]
		for i := 0; i < arity; i++ {
			add(fmt.Sprintf("input%d_id", i+1), ins[i])
		}
		add("output_id", x.OutputId)
	case *xnnfb.XNNNodeConvT:
		add("input1_id", x.Input1Id)
		add("filter_id", x.FilterId)
		if x.BiasId != math.MaxUint32 {
			add("bias_id", x.BiasId)
		}
		add("output_id", x.OutputId)
	case *xnnfb.XNNPooling2DT:
		add("input_id", x.InputId)
		add("output_id", x.OutputId)
	case *xnnfb.XNNFullyConnectedT:
		add("input1_id", x.Input1Id)
		add("filter_id", x.FilterId)
		if x.BiasId != math.MaxUint32 {
			add("bias_id", x.BiasId)
		}
		add("output_id", x.OutputId)
	case *xnnfb.XNNStaticTransposeT:
		add("input_id", x.InputId)
		add("output_id", x.OutputId)
	case *xnnfb.XNNStaticReshapeT:
		add("input_id", x.InputId)
		add("output_id", x.OutputId)
	case *xnnfb.XNNStaticSliceT:
		add("input_id", x.InputId)
		add("output_id", x.OutputId)
	case *xnnfb.XNNStaticConstantPadT:
		add("input_id", x.InputId)
		add("output_id", x.OutputId)
	case *xnnfb.XNNStaticResizeBilinear2DT:
		add("input_id", x.InputId)
		add("output_id", x.OutputId)
	case *xnnfb.XNNELUT:
		add("input_id", x.InputId)
		add("output_id", x.OutputId)
	case *xnnfb.XNNLeakyReLUT:
		add("input_id", x.InputId)
		add("output_id", x.OutputId)
	case *xnnfb.XNNArgMaxPooling2dT:
		add("input_id", x.InputId)
		add("output_value_id", x.OutputValueId)
		add("output_index_id", x.OutputIndexId)
	case *xnnfb.XNNScaledDotProductAttentionT:
		add("query_id", x.QueryId)
		add("key_id", x.KeyId)
		add("value_id", x.ValueId)
		add("scale_id", x.ScaleId)
		add("mask_id", x.MaskId)
		add("output_id", x.OutputId)
	}
	return ops
}
