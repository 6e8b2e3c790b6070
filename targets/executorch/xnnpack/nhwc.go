package xnnpack

import (
	"github.com/fxport/fxport/ir"
	xnnfb "github.com/fxport/fxport/targets/executorch/fb/fb_xnnpack"
)

// NHWC propagation (exir's ChannelsLastTaggedReshapePass). Convolution,
// pooling, mean over H and W, prelu and bilinear resizing compute in NHWC.
// A layout-agnostic op between them (elementwise binary ops whose operands
// are all rank 4, unary elementwise ops, clamps) may compute in either
// layout: in NHWC it reads the NHWC form of every operand (a baked
// constant's is its data permuted at serialization, never a runtime
// transpose) and defines only the NHWC form of its result, whose NCHW form
// is then materialized only for a consumer that needs it (a
// layout-sensitive op, a partition output). planLayout chooses the layout
// of every agnostic op so that the number of layout conversions is
// smallest: it starts from exir's rule (NHWC when an operand is NHWC) and
// flips single ops while that lowers the count, so an op whose operands
// arrive in NCHW and whose result leaves the partition stays NCHW. A
// conversion between the layouts of a value whose channels or spatial
// size is 1 is a reshape, not a transpose (relayout).

// nhwcProducers compute in NHWC whatever surrounds them.
var nhwcProducers = map[ir.Op]bool{
	ir.OpAtenConvolution: true, ir.OpAtenAvgPool2d: true, ir.OpAtenMaxPool2d: true, ir.OpAtenMaxPool2dWithIndices: true,
	ir.OpAtenMeanDim: true, ir.OpAtenPrelu: true, ir.OpAten_PreluKernel: true,
	ir.OpAtenUpsampleBilinear2dVec: true, ir.OpAtenUpsampleBilinear2d: true,
}

// agnosticUnary are the layout-agnostic ops of one tensor operand (beside
// unaryKinds, less softmax, whose dim depends on the layout).
var agnosticUnary = map[ir.Op]bool{
	ir.OpAtenRelu: true, ir.OpAtenHardtanh: true, ir.OpAtenClamp: true,
	ir.OpAtenLeakyRelu: true, ir.OpAtenElu: true,
}

// agnosticBinary are the elementwise binary ops (prelu excluded: it
// broadcasts its slope over the channel dim).
var agnosticBinary = map[ir.Op]bool{
	ir.OpAtenAddTensor: true, ir.OpAtenSubTensor: true, ir.OpAtenMulTensor: true, ir.OpAtenDivTensor: true,
	ir.OpAtenMaximum: true, ir.OpAtenMinimum: true,
}

// agnostic reports whether n may compute in NHWC: an elementwise op of
// rank-4 tensors outside any quantized pattern.
func (s *ser) agnostic(n *ir.Node) bool {
	if s.skip[n] || s.qadds[n] != nil || s.qfcs[n] != nil || s.qconvs[n] != nil || s.dfcs[n] != nil {
		return false
	}
	name := n.Op
	_, un := unaryKinds[name]
	if name == ir.OpAten_Softmax {
		un = false
	}
	if !un && !agnosticUnary[name] && !agnosticBinary[name] {
		return false
	}
	r, _ := s.result(n)
	if t := r.Tensor(); t == nil || t.Rank() != 4 || isCL(r) {
		return false
	}
	ops := n.Operands()
	if len(ops) == 0 {
		return false
	}
	for _, v := range ops {
		if t := v.Tensor(); t == nil || t.Rank() != 4 || isCL(v) {
			return false
		}
		if d := v.Def; d != nil && (d.Op == opQuant || d.Op == opDequant || d.Op == opDequantCh) {
			return false
		}
	}
	return true
}

// producesNHWC reports an op whose (fp32) result is defined in NHWC only.
func (s *ser) producesNHWC(n *ir.Node) bool {
	if s.skip[n] || s.qconvs[n] != nil || s.qpools[n] != nil {
		return false
	}
	return nhwcProducers[n.Op]
}

// layoutPlan is the graph planLayout works on: every rank-4 non-constant
// value with its producer and its consumers' layout demands.
type layoutPlan struct {
	s       *ser
	cands   []*ir.Node               // agnostic ops
	isCand  map[*ir.Node]bool        // agnostic op → true
	nhwc    map[*ir.Node]bool        // current choice per op (producers: true)
	prod    map[*ir.Value]*ir.Node   // value → the op defining it (result() of that op)
	planned map[*ir.Value]bool       // the rank-4 non-constant values
	users   map[*ir.Value][]*ir.Node // consumers that read a value (not skipped)
	outs    map[*ir.Value]bool       // region outputs
	inNHWC  map[*ir.Node]bool        // NHWC producers
}

// planLayout fills s.nhwcOps with the agnostic ops to compute in NHWC.
func (s *ser) planLayout(region *ir.Graph) {
	s.nhwcOps = map[*ir.Node]bool{}
	lp := &layoutPlan{s: s, isCand: map[*ir.Node]bool{}, nhwc: map[*ir.Node]bool{}, prod: map[*ir.Value]*ir.Node{},
		planned: map[*ir.Value]bool{}, users: map[*ir.Value][]*ir.Node{}, outs: map[*ir.Value]bool{}, inNHWC: map[*ir.Node]bool{}}
	addVal := func(v *ir.Value) {
		if !lp.planned[v] && !s.isConst(v) {
			if t := v.Tensor(); t != nil && t.Rank() == 4 {
				lp.planned[v] = true
			}
		}
	}
	for _, v := range region.Inputs {
		addVal(v)
	}
	for _, n := range region.Nodes() {
		if s.skip[n] {
			continue
		}
		for _, v := range n.Operands() {
			lp.users[v] = append(lp.users[v], n)
		}
		if src := s.fcIn[n]; src != nil {
			lp.users[src] = append(lp.users[src], n)
		}
		r, _ := s.result(n)
		lp.prod[r] = n
		addVal(r)
		switch {
		case s.producesNHWC(n):
			lp.inNHWC[n], lp.nhwc[n] = true, true
		case s.agnostic(n):
			lp.isCand[n] = true
			lp.cands = append(lp.cands, n)
			// exir's rule: NHWC when an operand is NHWC.
			for _, v := range n.Operands() {
				if p := lp.prod[v]; p != nil && lp.nhwc[p] {
					lp.nhwc[n] = true
				}
			}
		}
	}
	for _, a := range region.Outputs() {
		if a.Kind == ir.ArgValue {
			lp.outs[a.Value] = true
		}
	}
	// Local search: flip one op while that lowers the count. A flip
	// changes only the conversions of the op's operands and result, so
	// each try counts those alone. Every accepted flip lowers the total,
	// which bounds the sweeps.
	for changed := true; changed; {
		changed = false
		for _, n := range lp.cands {
			near := lp.near(n)
			before := lp.costOf(near)
			lp.nhwc[n] = !lp.nhwc[n]
			if lp.costOf(near) < before {
				changed = true
			} else {
				lp.nhwc[n] = !lp.nhwc[n]
			}
		}
	}
	for _, n := range lp.cands {
		if lp.nhwc[n] {
			s.nhwcOps[n] = true
		}
	}
}

// near lists the planned values whose conversions depend on n's layout:
// its operands and its result.
func (lp *layoutPlan) near(n *ir.Node) []*ir.Value {
	r, _ := lp.s.result(n)
	var out []*ir.Value
	for _, v := range append(n.Operands(), r) {
		if lp.planned[v] {
			out = append(out, v)
		}
	}
	return out
}

// costOf counts the conversions of vals: one per value some consumer
// reads in the layout it is not defined in (a conversion is made once
// and shared).
func (lp *layoutPlan) costOf(vals []*ir.Value) int {
	total := 0
	for _, v := range vals {
		var in bool // defined in NHWC
		if p := lp.prod[v]; p != nil {
			in = lp.nhwc[p]
		}
		needNCHW, needNHWC := lp.outs[v], false
		for _, u := range lp.users[v] {
			switch {
			case lp.inNHWC[u]:
				// The producer reads its first operand in NHWC, the rest
				// (weights, prelu's slope) as they are.
				if len(u.Args) > 0 && u.Args[0].Kind == ir.ArgValue && u.Args[0].Value == v {
					needNHWC = true
				} else {
					needNCHW = true
				}
			case lp.isCand[u] && lp.nhwc[u]:
				needNHWC = true
			default:
				needNCHW = true
			}
		}
		if (in && needNCHW) || (!in && needNHWC) {
			total++
		}
	}
	return total
}

// nhwcIn returns the NHWC form of operand v: a constant's data permuted
// at serialization, otherwise getNHWC.
func (s *ser) nhwcIn(v *ir.Value) (uint32, error) {
	if id, ok := s.nhwc[v]; ok {
		return id, nil
	}
	if s.isConst(v) {
		d := dimsOf(v, s.env)
		l, err := s.permuted(v, d, toNHWC, elemSize(v))
		if err != nil {
			return 0, err
		}
		id, err := s.constValue(v, permDims(d, toNHWC), l)
		if err != nil {
			return 0, err
		}
		s.nhwc[v] = id
		return id, nil
	}
	return s.getNHWC(v)
}

// nhwcNode writes an agnostic op planLayout put in NHWC.
func (s *ser) nhwcNode(n *ir.Node) error {
	var ins []uint32
	for _, v := range n.Operands() {
		id, err := s.nhwcIn(v)
		if err != nil {
			return err
		}
		ins = append(ins, id)
	}
	r, mm := s.result(n)
	out, err := s.outputNHWC(r)
	if err != nil {
		return err
	}
	name := n.Op
	if k, ok := binaryKinds[name]; ok && len(ins) == 2 {
		s.add(k, &xnnfb.XNNNode2x1T{Input1Id: ins[0], Input2Id: ins[1], OutputId: out}, s.handle, mm)
		return nil
	}
	if k, ok := unaryKinds[name]; ok {
		s.add(k, &xnnfb.XNNNode1x1T{InputId: ins[0], OutputId: out}, s.handle, nil)
		return nil
	}
	switch name {
	case ir.OpAtenRelu, ir.OpAtenHardtanh, ir.OpAtenClamp:
		s.add(xnnfb.XNodeUnionXNNClamp, &xnnfb.XNNNode1x1T{InputId: ins[0], OutputId: out}, s.handle, clampRange(n))
	case ir.OpAtenLeakyRelu:
		slope, _ := number(n.Arg("negative_slope"))
		s.add(xnnfb.XNodeUnionXNNLeakyReLU, &xnnfb.XNNLeakyReLUT{NegativeSlope: float32(slope), InputId: ins[0], OutputId: out}, s.handle, nil)
	case ir.OpAtenElu:
		alpha, _ := number(n.Arg("alpha"))
		s.add(xnnfb.XNodeUnionXNNELU, &xnnfb.XNNELUT{Alpha: float32(alpha), InputId: ins[0], OutputId: out}, s.handle, nil)
	default:
		return n.Errorf("xnnpack: %s has no NHWC form", name)
	}
	return nil
}

// relayout converts value v's form src into dst by perm (toNCHW or
// toNHWC): a static transpose, or a reshape when the two layouts hold the
// elements in the same order (one channel, or a 1×1 spatial size) and at
// most one dim is dynamic.
func (s *ser) relayout(v *ir.Value, src, dst uint32, perm []int) {
	t := v.Tensor()
	if t == nil || t.Rank() != 4 {
		s.transpose(src, dst, perm)
		return
	}
	c, okC := t.Shape[1].Const()
	h, okH := t.Shape[2].Const()
	w, okW := t.Shape[3].Const()
	if !okC || !okH || !okW || !(c == 1 || h*w == 1) {
		s.transpose(src, dst, perm)
		return
	}
	shape := dimsOf(v, s.env) // to NCHW: v's dims as typed
	if perm[1] != toNCHW[1] {
		shape = permDims(shape, toNHWC)
	}
	if !t.Shape[0].IsConst() {
		shape[0] = 0 // the dynamic batch dim, inferred
	}
	s.add(xnnfb.XNodeUnionXNNStaticReshape, &xnnfb.XNNStaticReshapeT{NumDims: 4, NewShape: shape, InputId: src, OutputId: dst}, debugInserted, nil)
}
