package xnnpack

import (
	"encoding/hex"
	"fmt"
	"math"

	flatbuffers "github.com/google/flatbuffers/go"

	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/ir/sym"
	xnnfb "github.com/fxport/fxport/targets/executorch/fb/fb_xnnpack"
	"github.com/fxport/fxport/targets/executorch/pte"
)

// Payload is a serialized partition.
type Payload struct {
	Data  []byte           // XH00 header + XN01 graph
	Graph *xnnfb.XNNGraphT // the graph that was packed
	Named []Named          // constants, in first-use order, deduplicated (lazy: const_lazy.go)
	Args  []*ir.Value      // call operands passed at run time, in external-id order (the call's results follow)
}

const (
	internal      = math.MaxUint32
	flagInput     = 1
	flagOutput    = 2
	debugInserted = 65535
)

// Serialize turns one executorch_call_delegate node into the XNNPACK payload.
func Serialize(call *ir.Node, env *sym.Env, constant ConstFunc) (*Payload, error) {
	if call.Op != OpCallDelegate || len(call.Args) < 2 || call.Args[0].Kind != ir.ArgGraph {
		return nil, call.Errorf("xnnpack: not an executorch_call_delegate node")
	}
	if call.Args[1].Str != BackendID {
		return nil, call.Errorf("xnnpack: delegate backend %q, want %q", call.Args[1].Str, BackendID)
	}
	region := call.Args[0].Graph
	s := &ser{env: env, g: &xnnfb.XNNGraphT{Version: "0"}, ids: map[*ir.Value]uint32{}, nhwc: map[*ir.Value]uint32{},
		consts: map[*ir.Value]pte.Lazy{}, inExt: map[*ir.Value]uint32{}, outExt: map[*ir.Value]uint32{}, named: map[string]bool{}, fused: map[*ir.Value]*ir.Node{}, skip: map[*ir.Node]bool{},
		fcIn: map[*ir.Node]*ir.Value{}, fcOut: map[*ir.Node]*ir.Value{}, qfcs: map[*ir.Node]*qfc{}, qconvs: map[*ir.Node]*qconv{}, qadds: map[*ir.Node]*qadd{}, qpools: map[*ir.Node]*qpool{}}
	s.g.ConstantData = []*xnnfb.ConstantDataOffsetT{{}}
	s.g.InputIds, s.g.OutputIds = []uint32{}, []uint32{}
	operands := call.Args[2:]
	if len(operands) != len(region.Inputs) {
		return nil, call.Errorf("xnnpack: %d operands for %d region inputs", len(operands), len(region.Inputs))
	}
	pay := &Payload{}
	var ext uint32
	var inputs []*ir.Value
	for i, a := range operands {
		if a.Kind != ir.ArgValue {
			return nil, call.Errorf("xnnpack: operand %d is not a value", i)
		}
		l, ok, err := constant(a.Value)
		if err != nil {
			return nil, call.Errorf("xnnpack: operand %s: %v", a.Value, err)
		}
		if ok && bakes(region.Inputs[i]) { // const_external.go
			s.consts[region.Inputs[i]] = l
			continue
		}
		if a.Value.Tensor() == nil {
			return nil, call.Errorf("xnnpack: operand %s is a %s; delegate arguments must be tensors", a.Value, a.Value.Type)
		}
		pay.Args = append(pay.Args, a.Value)
		inputs = append(inputs, region.Inputs[i])
	}
	for _, v := range inputs {
		s.inExt[v] = ext // defined on first read (lazy_inputs.go)
		ext++
	}
	outs := region.Outputs()
	for i, a := range outs {
		if a.Kind != ir.ArgValue || a.Value.Def == nil {
			return nil, call.Errorf("xnnpack: region output %d is not a node result (pass-through outputs are rejected by XNNPACK)", i)
		}
		if _, dup := s.outExt[a.Value]; dup {
			return nil, call.Errorf("xnnpack: region output %s is returned twice", a.Value)
		}
		s.outExt[a.Value] = ext
		ext++
	}
	s.g.NumExterns = ext
	s.planLinearViews(region)
	s.planFusion(region)
	if err := s.planQuant(region); err != nil {
		return nil, err
	}
	s.planLayout(region) // nhwc.go
	var handle uint32
	for _, n := range region.Nodes() {
		if s.skip[n] {
			continue
		}
		// Debug handles number the serialized IR nodes from 1.
		s.handle = handle + 1
		before := len(s.g.Xnodes)
		s.tick = false
		if err := s.node(n); err != nil {
			return nil, n.Errorf("xnnpack: %v", err)
		}
		if len(s.g.Xnodes) > before || s.tick {
			handle++
		}
	}
	if err := s.defineUnread(inputs); err != nil {
		return nil, err
	}
	for _, a := range outs {
		id, err := s.regionOut(a.Value) // dimorder_copy.go
		if err != nil {
			return nil, err
		}
		s.g.OutputIds = append(s.g.OutputIds, id)
	}
	b := flatbuffers.NewBuilder(1024)
	b.FinishWithFileIdentifier(s.g.Pack(b), []byte("XN01"))
	pay.Data = wrap(b.FinishedBytes())
	pay.Graph = s.g
	pay.Named = s.namedList
	return pay, nil
}

type ser struct {
	env       *sym.Env
	g         *xnnfb.XNNGraphT
	ids       map[*ir.Value]uint32   // value id of the NCHW (as-typed) form
	nhwc      map[*ir.Value]uint32   // value id of the NHWC form of a rank-4 value
	nhwcOps   map[*ir.Node]bool      // layout-agnostic ops computed in NHWC (nhwc.go)
	consts    map[*ir.Value]pte.Lazy // region inputs holding constants (lazy: const_lazy.go)
	inExt     map[*ir.Value]uint32   // runtime inputs not defined yet → external id
	outExt    map[*ir.Value]uint32   // region outputs → external id
	named     map[string]bool
	namedList []Named
	fused     map[*ir.Value]*ir.Node // producer result → the clamp fused into it
	fcIn      map[*ir.Node]*ir.Value // fully-connected input read before linear's flattening view
	fcOut     map[*ir.Node]*ir.Value // fully-connected output written as linear's restoring view
	skip      map[*ir.Node]bool
	qfcs      map[*ir.Node]*qfc   // quantized fully-connected patterns by their addmm/mm
	qconvs    map[*ir.Node]*qconv // quantized convolution patterns by their convolution
	qadds     map[*ir.Node]*qadd  // quantized add patterns by their add
	qpools    map[*ir.Node]*qpool // quantized pooling patterns by their pooling op (quant_pool.go)
	dfcs      map[*ir.Node]*dfc   // dynamically quantized fully-connected patterns (quant_dynamic.go)
	dconvs    map[*ir.Node]*dconv // dynamically quantized convolutions (quant_dynamic_conv.go)
	handle    uint32
	tick      bool // the node emitted nothing but takes a debug handle
}

func datatype(d ir.DType) (xnnfb.XNNDatatype, error) {
	switch d {
	case ir.Float32:
		return xnnfb.XNNDatatypexnn_datatype_fp32, nil
	case ir.Float16:
		return xnnfb.XNNDatatypexnn_datatype_fp16, nil
	}
	return 0, fmt.Errorf("dtype %s has no XNNPACK datatype here", d)
}

// dimsOf is v's shape at its upper bounds; a 0-d tensor is [1] (as exir).
func dimsOf(v *ir.Value, env *sym.Env) []uint32 {
	t := v.Tensor()
	if t.Rank() == 0 {
		return []uint32{1}
	}
	out := make([]uint32, t.Rank())
	for i, d := range t.Shape {
		if k, ok := d.Const(); ok {
			out[i] = uint32(k)
		} else if env != nil {
			out[i] = uint32(env.UpperBound(d).V)
		}
	}
	return out
}

func permDims(d []uint32, perm []int) []uint32 {
	out := make([]uint32, len(perm))
	for i, p := range perm {
		out[i] = d[p]
	}
	return out
}

var (
	toNHWC = []int{0, 2, 3, 1}
	toNCHW = []int{0, 3, 1, 2}
)

// define appends a tensor value and returns its id.
func (s *ser) define(v *ir.Value, dims []uint32, ext, flags, constIdx uint32) (uint32, error) {
	return s.defineQ(v, dims, ext, flags, constIdx, nil)
}

// quant is a quantized XNNPACK datatype with its parameters: per tensor
// (scale, zp), or per channel along dim when scales is not nil.
type quant struct {
	dt     xnnfb.XNNDatatype // qint8 or qint32; qcint8 or qcint32 per channel
	scale  float32
	zp     int32
	scales []float32
	dim    int32
}

// defineQ appends a tensor value (an XNNQuantizedTensorValue with
// PerTensorQuant or PerChannelQuant when q is not nil) and returns its id.
func (s *ser) defineQ(v *ir.Value, dims []uint32, ext, flags, constIdx uint32, q *quant) (uint32, error) {
	id := uint32(len(s.g.Xvalues))
	tv := &xnnfb.XNNTensorValueT{NumDims: uint32(len(dims)), Dims: dims, ConstantBufferIdx: constIdx, ExternalId: ext, Flags: flags, IdOut: id}
	if q != nil {
		tv.Datatype = q.dt
		qp := &xnnfb.XNNQuantParamsT{Type: xnnfb.XNNQuantParamsPerTensorQuant, Value: &xnnfb.PerTensorQuantT{Scale: q.scale, ZeroPoint: q.zp}}
		if q.scales != nil {
			qp = &xnnfb.XNNQuantParamsT{Type: xnnfb.XNNQuantParamsPerChannelQuant, Value: &xnnfb.PerChannelQuantT{Scale: q.scales, ChannelDim: q.dim}}
		}
		s.g.Xvalues = append(s.g.Xvalues, &xnnfb.XValueT{XvalueUnion: &xnnfb.XValueUnionT{Type: xnnfb.XValueUnionXNNQuantizedTensorValue, Value: &xnnfb.XNNQuantizedTensorValueT{
			TensorValue: tv, QuantParams: qp,
		}}})
		return id, nil
	}
	dt, err := datatype(v.Tensor().DType)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", v, err)
	}
	tv.Datatype = dt
	s.g.Xvalues = append(s.g.Xvalues, &xnnfb.XValueT{XvalueUnion: &xnnfb.XValueUnionT{Type: xnnfb.XValueUnionXNNTensorValue, Value: tv}})
	return id, nil
}

// constValue defines a constant value holding data (named by its sha256;
// data's Digest is set).
func (s *ser) constValue(v *ir.Value, dims []uint32, data pte.Lazy) (uint32, error) {
	return s.constValueQ(v, dims, data, nil)
}

// constValueQ is constValue for a value quantized with q (nil: not quantized).
func (s *ser) constValueQ(v *ir.Value, dims []uint32, data pte.Lazy, q *quant) (uint32, error) {
	return s.defineQ(v, dims, internal, 0, s.constRaw(data), q)
}

// constRaw registers data (its Digest set) as named data keyed by its
// sha256 and returns its constant_data index.
func (s *ser) constRaw(data pte.Lazy) uint32 {
	key := hex.EncodeToString(data.Digest[:])
	if !s.named[key] {
		s.named[key] = true
		s.namedList = append(s.namedList, Named{Key: key, Data: data})
	}
	s.g.ConstantData = append(s.g.ConstantData, &xnnfb.ConstantDataOffsetT{Offset: math.MaxUint64, Size: data.Size, NamedKey: key})
	return uint32(len(s.g.ConstantData) - 1)
}

// output defines the (NCHW) value of a node result r, external when r is
// a region output.
func (s *ser) output(r *ir.Value) (uint32, error) {
	ext, flags := uint32(internal), uint32(0)
	if e, ok := s.outExt[r]; ok {
		ext, flags = e, flagOutput
	}
	id, err := s.define(r, dimsOf(r, s.env), ext, flags, 0)
	s.ids[r] = id
	return id, err
}

// outputNHWC defines the NHWC form of a rank-4 result r (internal).
func (s *ser) outputNHWC(r *ir.Value) (uint32, error) {
	id, err := s.define(r, permDims(dimsOf(r, s.env), toNHWC), internal, 0, 0)
	s.nhwc[r] = id
	return id, err
}

// get returns the id of v's as-typed form, materializing it from the NHWC
// form or defining a constant on first use.
func (s *ser) get(v *ir.Value) (uint32, error) {
	if id, ok := s.ids[v]; ok {
		return id, nil
	}
	if id, ok, err := s.lazyInput(v); ok {
		return id, err
	}
	if _, ok := s.consts[v]; ok {
		l, err := s.raw(v)
		if err != nil {
			return 0, err
		}
		id, err := s.constValue(v, dimsOf(v, s.env), l)
		s.ids[v] = id
		return id, err
	}
	if src, ok := s.nhwc[v]; ok {
		id, err := s.output(v)
		if err != nil {
			return 0, err
		}
		s.relayout(v, src, id, toNCHW)
		return id, nil
	}
	return 0, fmt.Errorf("%s has no XNNPACK value", v)
}

// getNHWC returns the id of the NHWC form of rank-4 v, inserting a static
// transpose when it has none yet.
func (s *ser) getNHWC(v *ir.Value) (uint32, error) {
	if id, ok := s.nhwc[v]; ok {
		return id, nil
	}
	src, err := s.get(v)
	if err != nil {
		return 0, err
	}
	id, err := s.define(v, permDims(dimsOf(v, s.env), toNHWC), internal, 0, 0)
	if err != nil {
		return 0, err
	}
	s.nhwc[v] = id
	s.relayout(v, src, id, toNHWC)
	return id, nil
}

func (s *ser) transpose(in, out uint32, perm []int) {
	p := make([]uint32, len(perm))
	for i, x := range perm {
		p[i] = uint32(x)
	}
	s.add(xnnfb.XNodeUnionXNNStaticTranspose, &xnnfb.XNNStaticTransposeT{NumDims: uint32(len(p)), Perm: p, InputId: in, OutputId: out}, debugInserted, nil)
}

func (s *ser) add(kind xnnfb.XNodeUnion, payload interface{}, handle uint32, mm *xnnfb.OutputMinMaxT) {
	s.g.Xnodes = append(s.g.Xnodes, &xnnfb.XNodeT{XnodeUnion: &xnnfb.XNodeUnionT{Type: kind, Value: payload}, DebugHandle: handle, OutputMinMax: mm})
}
