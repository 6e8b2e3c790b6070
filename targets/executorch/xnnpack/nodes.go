package xnnpack

import (
	"fmt"
	"math"

	"github.com/fxport/fxport/ir"
	xnnfb "github.com/fxport/fxport/targets/executorch/fb/fb_xnnpack"
)

// Node visitors: one XNNPACK node (or a few) per claimed IR node.

var binaryKinds = map[ir.Op]xnnfb.XNodeUnion{
	ir.OpAtenAddTensor: xnnfb.XNodeUnionXNNAdd, ir.OpAtenSubTensor: xnnfb.XNodeUnionXNNSubtract,
	ir.OpAtenMulTensor: xnnfb.XNodeUnionXNNMultiply, ir.OpAtenDivTensor: xnnfb.XNodeUnionXNNDiv,
	ir.OpAtenMaximum: xnnfb.XNodeUnionXNNMaximum, ir.OpAtenMinimum: xnnfb.XNodeUnionXNNMinimum,
	ir.OpAtenPrelu: xnnfb.XNodeUnionXNNPReLU, ir.OpAten_PreluKernel: xnnfb.XNodeUnionXNNPReLU,
}

var unaryKinds = map[ir.Op]xnnfb.XNodeUnion{
	ir.OpAtenSigmoid: xnnfb.XNodeUnionXNNSigmoid, ir.OpAtenTanh: xnnfb.XNodeUnionXNNTanh,
	ir.OpAtenNeg: xnnfb.XNodeUnionXNNNegate, ir.OpAtenAbs: xnnfb.XNodeUnionXNNAbs,
	ir.OpAtenSqrt: xnnfb.XNodeUnionXNNSquareRoot, ir.OpAtenRsqrt: xnnfb.XNodeUnionXNNReciprocalSquareRoot,
	ir.OpAtenExp: xnnfb.XNodeUnionXNNExp, ir.OpAtenLog: xnnfb.XNodeUnionXNNLog,
	ir.OpAtenCeil: xnnfb.XNodeUnionXNNCeiling, ir.OpAtenFloor: xnnfb.XNodeUnionXNNFloor,
	ir.OpAtenHardswish: xnnfb.XNodeUnionXNNHardswish, ir.OpAtenGelu: xnnfb.XNodeUnionXNNGelu,
	ir.OpAtenSin: xnnfb.XNodeUnionXNNSin, ir.OpAtenCos: xnnfb.XNodeUnionXNNCos,
	ir.OpAten_Softmax: xnnfb.XNodeUnionXNNSoftmax, ir.OpAtenPowTensorScalar: xnnfb.XNodeUnionXNNSquare,
	ir.OpDimOrderOps_CloneDimOrder: xnnfb.XNodeUnionXNNCopy,
}

// fusable producers take a clamp in their output_min_max (exir's
// FuseActivationPass targets).
var fusable = map[ir.Op]bool{
	ir.OpAtenConvolution: true, ir.OpAtenAddmm: true, ir.OpAtenMm: true,
	ir.OpAtenAddTensor: true, ir.OpAtenSubTensor: true, ir.OpAtenMulTensor: true, ir.OpAtenDivTensor: true,
}

func isClamp(n *ir.Node) bool {
	switch n.Op {
	case ir.OpAtenRelu, ir.OpAtenHardtanh, ir.OpAtenClamp:
		return true
	}
	return false
}

// clampRange is the output range a relu / hardtanh / clamp enforces.
func clampRange(n *ir.Node) *xnnfb.OutputMinMaxT {
	lo, hi := float32(math.Inf(-1)), float32(math.Inf(1))
	switch n.Op {
	case ir.OpAtenRelu:
		lo = 0
	case ir.OpAtenHardtanh:
		a, _ := number(n.Arg("min_val"))
		b, _ := number(n.Arg("max_val"))
		lo, hi = float32(a), float32(b)
	case ir.OpAtenClamp:
		if a, ok := number(n.Arg("min")); ok {
			lo = float32(a)
		}
		if b, ok := number(n.Arg("max")); ok {
			hi = float32(b)
		}
	}
	return &xnnfb.OutputMinMaxT{OutputMin: lo, OutputMax: hi}
}

// planFusion marks clamps whose producer is fusable and used only by them:
// the producer writes the clamp's result with output_min_max.
func (s *ser) planFusion(region *ir.Graph) {
	for _, n := range region.Nodes() {
		if !isClamp(n) {
			continue
		}
		in := n.Args[0].Value
		if in.Def == nil || !fusable[in.Def.Op] || in.NumUses() != 1 || s.fused[in] != nil {
			continue
		}
		if _, isOut := s.outExt[in]; isOut {
			continue
		}
		s.fused[in] = n
		s.skip[n] = true
	}
}

// planLinearViews folds the view_copy pair decompose-to-core puts around
// a linear of rank ≠ 2 (flatten to [N, in], restore afterwards) into the
// fully-connected node: XNNPACK flattens leading dims itself, as exir's
// linear visitor relies on.
func (s *ser) planLinearViews(region *ir.Graph) {
	for _, n := range region.Nodes() {
		if n.Op != opAddmm && n.Op != ir.OpAtenMm {
			continue
		}
		x := n.Args[1].Value
		if n.Op != opAddmm {
			x = n.Args[0].Value
		}
		if x.Def == nil || x.Def.Op != opView || x.NumUses() != 1 {
			continue
		}
		src := x.Def.Args[0].Value
		st, xt := src.Tensor(), x.Tensor()
		if st.Rank() == 0 || !st.Shape[st.Rank()-1].Equal(xt.Shape[1]) {
			continue
		}
		r := n.Results[0]
		if r.NumUses() != 1 || r.Uses()[0].IsReturn() || r.Uses()[0].Op != opView {
			continue
		}
		if _, isOut := s.outExt[r]; isOut {
			continue
		}
		v := r.Uses()[0]
		vt := v.Results[0].Tensor()
		if vt.Rank() != st.Rank() || !vt.Shape[vt.Rank()-1].Equal(r.Tensor().Shape[1]) {
			continue
		}
		s.fcIn[n], s.fcOut[n] = src, v.Results[0]
		s.skip[x.Def], s.skip[v] = true, true
	}
}

// result is the value a node's output defines (the fused clamp's result
// when there is one) and its output range.
func (s *ser) result(n *ir.Node) (*ir.Value, *xnnfb.OutputMinMaxT) {
	r := n.Results[0]
	if o := s.fcOut[n]; o != nil {
		r = o
	}
	if c := s.fused[r]; c != nil {
		return c.Results[0], clampRange(c)
	}
	return r, nil
}

func (s *ser) node(n *ir.Node) error {
	if s.nhwcOps[n] {
		return s.nhwcNode(n) // nhwc.go
	}
	if m := s.qpools[n]; m != nil {
		return s.quantPoolNode(n, m) // quant_pool.go
	}
	if isDimOrderCopy(n) {
		return s.dimOrderNode(n) // dimorder_copy.go
	}
	name := n.Op
	if k, ok := binaryKinds[name]; ok {
		if m := s.qadds[n]; m != nil {
			return s.quantAddNode(m)
		}
		if k == xnnfb.XNodeUnionXNNPReLU {
			return s.prelu(n)
		}
		a, err := s.get(n.Args[0].Value)
		if err != nil {
			return err
		}
		b, err := s.get(n.Args[1].Value)
		if err != nil {
			return err
		}
		r, mm := s.result(n)
		out, err := s.output(r)
		if err != nil {
			return err
		}
		s.add(k, &xnnfb.XNNNode2x1T{Input1Id: a, Input2Id: b, OutputId: out}, s.handle, mm)
		return nil
	}
	if k, ok := unaryKinds[name]; ok {
		in, err := s.get(n.Args[0].Value)
		if err != nil {
			return err
		}
		out, err := s.output(n.Results[0])
		if err != nil {
			return err
		}
		s.add(k, &xnnfb.XNNNode1x1T{InputId: in, OutputId: out}, s.handle, nil)
		return nil
	}
	switch name {
	case ir.OpAtenRelu, ir.OpAtenHardtanh, ir.OpAtenClamp:
		in, err := s.get(n.Args[0].Value)
		if err != nil {
			return err
		}
		out, err := s.output(n.Results[0])
		if err != nil {
			return err
		}
		s.add(xnnfb.XNodeUnionXNNClamp, &xnnfb.XNNNode1x1T{InputId: in, OutputId: out}, s.handle, clampRange(n))
		return nil
	case ir.OpAtenLeakyRelu:
		in, err := s.get(n.Args[0].Value)
		if err != nil {
			return err
		}
		out, err := s.output(n.Results[0])
		if err != nil {
			return err
		}
		slope, _ := number(n.Arg("negative_slope"))
		s.add(xnnfb.XNodeUnionXNNLeakyReLU, &xnnfb.XNNLeakyReLUT{NegativeSlope: float32(slope), InputId: in, OutputId: out}, s.handle, nil)
		return nil
	case ir.OpAtenAddmm, ir.OpAtenMm:
		return s.fullyConnected(n)
	case ir.OpAtenConvolution:
		return s.conv(n)
	case ir.OpAtenAvgPool2d:
		return s.avgPool(n)
	case ir.OpAtenMeanDim:
		in, err := s.getNHWC(n.Args[0].Value)
		if err != nil {
			return err
		}
		out, err := s.outputNHWC(n.Results[0])
		if err != nil {
			return err
		}
		// mean.dim is claimed with keepdim=True only (support.go): the
		// output keeps its reduced dims, [N, 1, 1, C] in NHWC.
		s.add(xnnfb.XNodeUnionXNNGlobalAvgPooling2d, &xnnfb.XNNNode1x1T{InputId: in, OutputId: out, Flags: flagKeepDims}, s.handle, nil)
		return nil
	case ir.OpAtenPermuteCopy:
		return s.permute(n)
	case ir.OpAtenViewCopy, ir.OpAtenSqueezeCopyDim, ir.OpAtenSqueezeCopyDims, ir.OpAtenUnsqueezeCopy:
		in, err := s.get(n.Args[0].Value)
		if err != nil {
			return err
		}
		out, err := s.output(n.Results[0])
		if err != nil {
			return err
		}
		shape := reshapeDims(n) // reshape.go; 0: inferred or dynamic (ET-P16 for squeeze/unsqueeze)
		s.add(xnnfb.XNodeUnionXNNStaticReshape, &xnnfb.XNNStaticReshapeT{NumDims: uint32(len(shape)), NewShape: shape, InputId: in, OutputId: out}, s.handle, nil)
		return nil
	case ir.OpAtenCat:
		return s.cat(n)
	case ir.OpXnnpackArgmaxPool2d:
		return s.argMaxPool(n) // argmax_pool.go
	case ir.OpQuantizedDecomposedQuantizePerTensor:
		return s.quantize(n)
	case ir.OpQuantizedDecomposedDequantizePerTensor:
		return s.dequantize(n)
	}
	if dynQOp(n.Op) {
		return s.dynNode(n) // quant_dynamic_ser.go
	}
	return s.moreNode(n, name)
}

func (s *ser) fullyConnected(n *ir.Node) error {
	if m := s.qfcs[n]; m != nil {
		return s.quantFC(n, m)
	}
	if m := s.dfcs[n]; m != nil {
		return s.dynFC(n, m)
	}
	var x, w *ir.Value
	bias := uint32(internal)
	if n.Op == opAddmm {
		x, w = n.Arg("mat1").Value, n.Arg("mat2").Value
	} else {
		x, w = n.Arg("self").Value, n.Arg("mat2").Value
	}
	if src := s.fcIn[n]; src != nil {
		x = src
	}
	in, err := s.get(x)
	if err != nil {
		return err
	}
	// The filter is [out, in]: the constant under a permute_copy [1, 0]
	// (linear's decomposition) as it is, a bare [in, out] constant transposed.
	var filter uint32
	if _, ok := s.consts[w]; ok {
		l, perr := s.permuted(w, dimsOf(w, s.env), []int{1, 0}, elemSize(w))
		if err = perr; err == nil {
			filter, err = s.constValue(w, permDims(dimsOf(w, s.env), []int{1, 0}), l)
		}
	} else if w.Def != nil && w.Def.Op == opPermute && s.isConst(w.Def.Args[0].Value) {
		src := w.Def.Args[0].Value
		if id, ok := s.ids[src]; ok {
			filter = id
		} else {
			filter, err = s.get(src)
		}
	} else {
		err = fmt.Errorf("weight %s is not static", w)
	}
	if err != nil {
		return err
	}
	if n.Op == opAddmm {
		if bias, err = s.get(n.Arg("self").Value); err != nil {
			return err
		}
	}
	r, mm := s.result(n)
	out, err := s.output(r)
	if err != nil {
		return err
	}
	s.add(xnnfb.XNodeUnionXNNFullyConnected, &xnnfb.XNNFullyConnectedT{Input1Id: in, FilterId: filter, BiasId: bias, OutputId: out}, s.handle, mm)
	return nil
}

func (s *ser) conv(n *ir.Node) error {
	if n.Arg("transposed").Bool() {
		return s.deconv(n)
	}
	if m := s.qconvs[n]; m != nil {
		return s.quantConv(n, m)
	}
	if m := s.dconvs[n]; m != nil {
		return s.dynConvNode(n, m) // quant_dynamic_conv.go
	}
	x, w := n.Arg("input").Value, n.Arg("weight").Value
	in, err := s.getNHWC(x)
	if err != nil {
		return err
	}
	wd := dimsOf(w, s.env) // [O, I/g, kh, kw]
	kind, perm, node := s.convShape(n, wd)
	l, err := s.permuted(w, wd, perm, elemSize(w))
	if err != nil {
		return err
	}
	filter, err := s.constValue(w, permDims(wd, perm), l)
	if err != nil {
		return err
	}
	r, mm := s.result(n)
	out, err := s.outputNHWC(r)
	if err != nil {
		return err
	}
	bias := uint32(internal)
	if b := n.Arg("bias"); b.Kind == ir.ArgValue {
		if bias, err = s.get(b.Value); err != nil {
			return err
		}
	}
	node.Input1Id, node.FilterId, node.BiasId, node.OutputId = in, filter, bias, out
	s.add(kind, node, s.handle, mm)
	return nil
}

// convShape returns a 2-D convolution's node kind, the permutation of its
// [O, I/g, kh, kw] filter (OHWI, or 1HWO for a depthwise one) and the node
// payload without its value ids.
func (s *ser) convShape(n *ir.Node, wd []uint32) (xnnfb.XNodeUnion, []int, *xnnfb.XNNNodeConvT) {
	groups := uint32(n.Arg("groups").Int)
	cin := dimsOf(n.Arg("input").Value, s.env)[1]
	stride, _ := ints(n.Arg("stride"), 2)
	pad, _ := ints(n.Arg("padding"), 2)
	dil, _ := ints(n.Arg("dilation"), 2)
	perm := []int{0, 2, 3, 1} // OHWI
	kind := xnnfb.XNodeUnionXNNConv2d
	if groups > 1 && wd[1] == 1 && cin == groups {
		perm = []int{1, 2, 3, 0} // 1HWO
		kind = xnnfb.XNodeUnionXNNDepthwiseConv2d
	}
	return kind, perm, &xnnfb.XNNNodeConvT{
		PaddingTop: uint32(pad[0]), PaddingRight: uint32(pad[1]), PaddingBottom: uint32(pad[0]), PaddingLeft: uint32(pad[1]),
		KernelHeight: wd[2], KernelWidth: wd[3], SubsamplingHeight: uint32(stride[0]), SubsamplingWidth: uint32(stride[1]),
		DilationHeight: uint32(dil[0]), DilationWidth: uint32(dil[1]),
		GroupInputChannels: wd[1], GroupOutputChannels: wd[0] / groups, Groups: groups,
	}
}

func (s *ser) avgPool(n *ir.Node) error {
	in, err := s.getNHWC(n.Args[0].Value)
	if err != nil {
		return err
	}
	out, err := s.outputNHWC(n.Results[0])
	if err != nil {
		return err
	}
	k, _ := ints(n.Arg("kernel_size"), 2)
	st, ok := ints(n.Arg("stride"), 2)
	if !ok {
		st = k
	}
	pad, _ := ints(n.Arg("padding"), 2)
	s.add(xnnfb.XNodeUnionXNNAvgPooling2d, &xnnfb.XNNPooling2DT{
		PaddingTop: uint32(pad[0]), PaddingRight: uint32(pad[1]), PaddingBottom: uint32(pad[0]), PaddingLeft: uint32(pad[1]),
		PoolingHeight: uint32(k[0]), PoolingWidth: uint32(k[1]), StrideHeight: uint32(st[0]), StrideWidth: uint32(st[1]),
		DilationHeight: 1, DilationWidth: 1, InputId: in, OutputId: out,
	}, s.handle, nil)
	return nil
}

func (s *ser) permute(n *ir.Node) error {
	x := n.Args[0].Value
	// A transpose of a constant feeding only fully-connected weights is
	// folded into them (the filter is the untransposed constant).
	if _, ok := s.consts[x]; ok && allFC(n.Results[0]) {
		return nil
	}
	in, err := s.get(x)
	if err != nil {
		return err
	}
	out, err := s.output(n.Results[0])
	if err != nil {
		return err
	}
	dims, _ := ints(n.Arg("dims"), 0)
	rank := int64(x.Tensor().Rank())
	p := make([]uint32, len(dims))
	for i, d := range dims {
		if d < 0 {
			d += rank
		}
		p[i] = uint32(d)
	}
	s.add(xnnfb.XNodeUnionXNNStaticTranspose, &xnnfb.XNNStaticTransposeT{NumDims: uint32(len(p)), Perm: p, InputId: in, OutputId: out}, s.handle, nil)
	return nil
}

// allFC reports whether every use of v is the weight of a fully-connected op.
func allFC(v *ir.Value) bool {
	if v.NumUses() == 0 {
		return false
	}
	for _, u := range v.Uses() {
		if u.IsReturn() {
			return false
		}
		switch u.Op {
		case ir.OpAtenAddmm, ir.OpAtenMm:
			if u.Arg("mat2").Value != v {
				return false
			}
		default:
			return false
		}
	}
	return true
}

func (s *ser) cat(n *ir.Node) error {
	list := n.Arg("tensors").List
	var ids [][]uint32 // id and dims of each input
	for _, a := range list {
		id, err := s.get(a.Value)
		if err != nil {
			return err
		}
		ids = append(ids, append([]uint32{id}, dimsOf(a.Value, s.env)...))
	}
	axis := n.Arg("dim").Int
	if axis < 0 {
		axis += int64(n.Results[0].Tensor().Rank())
	}
	// More than five inputs: concatenate the first five into an internal
	// value, then that and up to four more, until five or fewer are left.
	for len(ids) > 5 {
		dims := append([]uint32(nil), ids[0][1:]...)
		for _, in := range ids[1:5] {
			dims[axis] += in[1+axis]
		}
		tmp, err := s.define(n.Results[0], dims, internal, 0, 0)
		if err != nil {
			return err
		}
		s.catNode(axis, ids[:5], tmp)
		ids = append([][]uint32{append([]uint32{tmp}, dims...)}, ids[5:]...)
	}
	out, err := s.output(n.Results[0])
	if err != nil {
		return err
	}
	s.catNode(axis, ids, out)
	return nil
}

// catNode adds one XNNConcatenate2..5 of ins (each [id, dims...]).
func (s *ser) catNode(axis int64, ins [][]uint32, out uint32) {
	ids := make([]uint32, 5)
	for i := range ids {
		ids[i] = internal
		if i < len(ins) {
			ids[i] = ins[i][0]
		}
	}
	kind := map[int]xnnfb.XNodeUnion{2: xnnfb.XNodeUnionXNNConcatenate2, 3: xnnfb.XNodeUnionXNNConcatenate3, 4: xnnfb.XNodeUnionXNNConcatenate4, 5: xnnfb.XNodeUnionXNNConcatenate5}[len(ins)]
	s.add(kind, &xnnfb.XNNCatT{Axis: uint32(axis), Input1Id: ids[0], Input2Id: ids[1], Input3Id: ids[2], Input4Id: ids[3], Input5Id: ids[4], OutputId: out}, s.handle, nil)
}

// prelu runs in NHWC: the slope broadcasts over the channel (last) dim.
func (s *ser) prelu(n *ir.Node) error {
	in, err := s.getNHWC(n.Args[0].Value)
	if err != nil {
		return err
	}
	slope, err := s.get(n.Args[1].Value)
	if err != nil {
		return err
	}
	out, err := s.outputNHWC(n.Results[0])
	if err != nil {
		return err
	}
	s.add(xnnfb.XNodeUnionXNNPReLU, &xnnfb.XNNNode2x1T{Input1Id: in, Input2Id: slope, OutputId: out}, s.handle, nil)
	return nil
}

func elemSize(v *ir.Value) int { return v.Tensor().DType.Size() }

// permuteBytes returns the bytes of a row-major tensor of dims permuted by
// perm (es bytes an element; len(b) must be the tensor's size). It walks
// the output in order, moving the source offset by the permuted strides.
func permuteBytes(b []byte, dims []uint32, perm []int, es int) []byte {
	rank := len(dims)
	strides := make([]int, rank)
	st := es
	for i := rank - 1; i >= 0; i-- {
		strides[i] = st
		st *= int(dims[i])
	}
	nd := permDims(dims, perm)
	step := make([]int, rank) // source stride of output dim i
	for i := range step {
		step[i] = strides[perm[i]]
	}
	out := make([]byte, len(b))
	idx := make([]int, rank)
	off := 0
	for k := 0; k+es <= len(out); k += es {
		copy(out[k:k+es], b[off:off+es])
		for i := rank - 1; i >= 0; i-- {
			idx[i]++
			off += step[i]
			if idx[i] < int(nd[i]) {
				break
			}
			off -= idx[i] * step[i]
			idx[i] = 0
		}
	}
	return out
}
