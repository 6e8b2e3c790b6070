package xnnpack

import (
	"encoding/binary"
	"fmt"

	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/ir/sym"
	xnnfb "github.com/fxport/fxport/targets/executorch/fb/fb_xnnpack"
)

// Max pooling whose indices are used, as XNNArgMaxPooling2d.
//
// XNNPACK's argmax pooling (xnn_define_argmax_pooling_2d) has no stride and
// no dilation: windows are the pooling size apart. It reads fp32 NHWC, and
// writes the maximum and, as uint32 (declared int32, XNNDatatype 12, which
// ExecuTorch maps to xnn_datatype_int32), the position k of the maximum in
// the window's indirection order, k = x·kh + y (column by column). A padded
// position reads the nearest border element, and the first maximum wins
// (strict >). Torch's indices are int64 offsets into each input plane
// (h·W + w) of the first maximum in row-major order.
//
// So, before grouping, the partitioner rewrites each eligible
//
//	%v, %i = aten.max_pool2d_with_indices(%x, [kh, kw], [kh, kw], [ph, pw])
//
// with H and W swapped around the pooling, which makes XNNPACK's
// column-by-column order torch's row-major one (k = dh·kw + dw, and ties
// resolve as in torch):
//
//	%xt = permute_copy(%x, [0, 3, 2, 1])                      [N, W, H, C]
//	%vt, %kt = xnnpack.argmax_pool2d(%xt, [kw, kh], [pw, ph])  [N, OW, OH, C]
//	%v = permute_copy(%vt, [0, 3, 2, 1])                      (when %v is used)
//
// The three are claimed by the delegate; %kt (int32) leaves it, and
// portable ops turn it into torch's index with compile-time tables (static
// shapes only):
//
//	%k = _to_dim_order_copy(%kt, dtype=int64)
//	%y = index(dh·W table, [%k]) + (oh·kh − ph)·W   (clamped to [0, (H−1)·W] when ph > 0)
//	%x = index(dw table, [%k]) + ow·kw − pw         (clamped to [0, W−1] when pw > 0)
//	%i = permute_copy(%y + %x, [0, 3, 2, 1])
//
// (without padding one table and one base: index(dh·W + dw, [%k]) + base).
// The clamps map a padded position to the border element XNNPACK read,
// which is the one torch reports. What differs from torch is NaN: XNNPACK
// reports a NaN only at window position 0, torch always.

var (
	opMaxPoolIdx  = ir.OpAtenMaxPool2dWithIndices
	opXNNArgMax   = ir.OpXnnpackArgmaxPool2d
	opToDimOrder  = ir.OpDimOrderOps_ToDimOrderCopy
	opIndexTensor = ir.OpAtenIndexTensor
	opAddTensor   = ir.OpAtenAddTensor
	opClamp       = ir.OpAtenClamp

	// multiResult lists the ops with more than one result the support rules
	// take (supported checks the first result; the rule the others).
	multiResult = map[ir.Op]bool{opMaxPoolIdx: true, opXNNArgMax: true}
)

func init() {
	addRule(ir.OpAtenMaxPool2dWithIndices, "MaxPool2dConfig", checkArgMaxPool)
	addRule(ir.OpXnnpackArgmaxPool2d, "MaxPool2dConfig", checkXNNArgMax)
}

// argPool is an eligible max_pool2d_with_indices: static sizes.
type argPool struct {
	n, c, h, w, kh, kw, ph, pw, oh, ow int64
}

// checkArgMaxPool: indices used, fp32 rank-4 contiguous static tensors,
// stride = kernel, dilation 1, no ceil_mode, at least two window elements,
// padding ≤ kernel/2.
func checkArgMaxPool(c *checker, n *ir.Node) string {
	if valuesOnlyMaxPool(n) { // maxpool_values.go
		return checkMaxPool(c, n)
	}
	_, why := matchArgMaxPool(n)
	return why
}

func matchArgMaxPool(n *ir.Node) (*argPool, string) {
	if len(n.Results) != 2 || n.Results[1].NumUses() == 0 {
		return nil, "indices unused"
	}
	x := n.Args[0].Value.Tensor()
	v, idx := n.Results[0].Tensor(), n.Results[1].Tensor()
	if x.Rank() != 4 {
		return nil, "rank-4 input only"
	}
	if x.DType != ir.Float32 || v.DType != ir.Float32 || idx.DType != ir.Int64 {
		return nil, "argmax pooling is fp32 only (int64 indices)"
	}
	in, ok1 := x.StaticShape()
	_, ok2 := v.StaticShape()
	out, ok3 := idx.StaticShape()
	if !ok1 || !ok2 || !ok3 {
		return nil, "static shapes only (the index tables are constants)"
	}
	if !x.IsContiguous() || !v.IsContiguous() || !idx.IsContiguous() {
		return nil, "contiguous dim order only"
	}
	if n.Arg("ceil_mode").Bool() {
		return nil, "ceil_mode"
	}
	k, ok1 := ints(n.Arg("kernel_size"), 2)
	pad, ok2 := ints(n.Arg("padding"), 2)
	dil, ok3 := ints(n.Arg("dilation"), 2)
	if !ok1 || !ok2 || !ok3 {
		return nil, "kernel, padding and dilation must be static"
	}
	st, ok := ints(n.Arg("stride"), 2)
	if !ok {
		if len(n.Arg("stride").List) != 0 {
			return nil, "stride must be static"
		}
		st = k
	}
	for i := 0; i < 2; i++ {
		if st[i] != k[i] {
			return nil, "stride differs from the kernel (XNNPACK's argmax pooling has no stride)"
		}
		if dil[i] != 1 {
			return nil, "dilation (XNNPACK's argmax pooling has none)"
		}
		if k[i] < 1 || pad[i] < 0 || pad[i] > k[i]/2 {
			return nil, "kernel must be positive, padding between 0 and kernel/2"
		}
	}
	if k[0]*k[1] < 2 {
		return nil, "1x1 window (XNNPACK rejects it)"
	}
	a := &argPool{n: in[0], c: in[1], h: in[2], w: in[3], kh: k[0], kw: k[1], ph: pad[0], pw: pad[1],
		oh: (in[2] + 2*pad[0]) / k[0], ow: (in[3] + 2*pad[1]) / k[1]}
	if len(out) != 4 || out[0] != a.n || out[1] != a.c || out[2] != a.oh || out[3] != a.ow {
		return nil, fmt.Sprintf("indices shape %v, want [%d, %d, %d, %d]", out, a.n, a.c, a.oh, a.ow)
	}
	return a, ""
}

// checkXNNArgMax: the rewritten node, fp32 in and out, int32 indices,
// static shapes.
func checkXNNArgMax(c *checker, n *ir.Node) string {
	x := n.Args[0].Value.Tensor()
	if x.Rank() != 4 || x.DType != ir.Float32 || n.Results[0].Tensor().DType != ir.Float32 {
		return "fp32 rank-4 input only"
	}
	if len(n.Results) != 2 || n.Results[1].Tensor() == nil || n.Results[1].Tensor().DType != ir.Int32 {
		return "int32 indices expected"
	}
	if _, ok := x.StaticShape(); !ok {
		return "static shapes only"
	}
	return ""
}

// rewriteArgMaxPools rewrites every main-graph max_pool2d_with_indices the
// support rules accept into the argmax pooling and its index conversion.
func (c *checker) rewriteArgMaxPools() error {
	for _, n := range c.p.Main.Nodes() {
		if n.Op != opMaxPoolIdx || valuesOnlyMaxPool(n) || c.supported(n) != "" {
			continue
		}
		a, why := matchArgMaxPool(n)
		if why != "" {
			return n.Errorf("xnnpack partition: argmax pooling: %s", why)
		}
		if err := c.rewriteArgMaxPool(n, a); err != nil {
			return n.Errorf("xnnpack partition: argmax pooling: %v", err)
		}
	}
	return nil
}

func (c *checker) rewriteArgMaxPool(n *ir.Node, a *argPool) error {
	g := c.p.Main
	b := ir.NewBuilder(g)
	b.SetInsertBefore(n)
	b.Pass = "xnnpack-partition"
	meta := n.Meta.Clone()
	b.Meta = &meta
	swap := ir.IntsArg(0, 3, 2, 1)
	xt, err := b.Value(opPermute, n.Args[0], swap)
	if err != nil {
		return err
	}
	am, err := b.Call(opXNNArgMax, ir.ValueArg(xt), ir.IntsArg(a.kw, a.kh), ir.IntsArg(a.pw, a.ph))
	if err != nil {
		return err
	}
	var values *ir.Value
	if n.Results[0].NumUses() > 0 {
		if values, err = b.Value(opPermute, ir.ValueArg(am.Results[0]), swap); err != nil {
			return err
		}
	}
	k, err := b.CallKw(opToDimOrder, []ir.Arg{ir.ValueArg(am.Results[1])}, map[string]ir.Arg{"dtype": ir.DTypeArg(ir.Int64)})
	if err != nil {
		return err
	}
	flat, err := c.flatIndex(b, a, k.Results[0])
	if err != nil {
		return err
	}
	idx, err := b.Value(opPermute, ir.ValueArg(flat), swap)
	if err != nil {
		return err
	}
	names := []string{n.Results[0].Name, n.Results[1].Name}
	if values != nil {
		n.Results[0].ReplaceAllUsesWith(values)
	}
	n.Results[1].ReplaceAllUsesWith(idx)
	if err := n.Erase(); err != nil {
		return err
	}
	if values != nil {
		if err := values.Rename(names[0]); err != nil {
			return err
		}
	}
	return idx.Rename(names[1])
}

// flatIndex turns window positions k ([N, OW, OH, C], int64, k = dh·kw +
// dw) into plane offsets iy·W + ix in the same layout.
func (c *checker) flatIndex(b *ir.Builder, a *argPool, k *ir.Value) (*ir.Value, error) {
	size := a.kh * a.kw
	lookup := func(table []int64, base []int64, shape []int64, what string) (*ir.Value, error) {
		t, err := c.addConstant(what+"_table", []int64{size}, table)
		if err != nil {
			return nil, err
		}
		off, err := b.Value(opIndexTensor, ir.ValueArg(t), ir.ListArg(ir.ValueArg(k)))
		if err != nil {
			return nil, err
		}
		bv, err := c.addConstant(what+"_base", shape, base)
		if err != nil {
			return nil, err
		}
		return b.Value(opAddTensor, ir.ValueArg(off), ir.ValueArg(bv))
	}
	rows, cols, both := make([]int64, size), make([]int64, size), make([]int64, size)
	for pos := int64(0); pos < size; pos++ {
		dh, dw := pos/a.kw, pos%a.kw
		rows[pos], cols[pos], both[pos] = dh*a.w, dw, dh*a.w+dw
	}
	rowBase, colBase := make([]int64, a.oh), make([]int64, a.ow)
	for oh := int64(0); oh < a.oh; oh++ {
		rowBase[oh] = (oh*a.kh - a.ph) * a.w
	}
	for ow := int64(0); ow < a.ow; ow++ {
		colBase[ow] = ow*a.kw - a.pw
	}
	if a.ph == 0 && a.pw == 0 {
		base := make([]int64, a.ow*a.oh)
		for ow := int64(0); ow < a.ow; ow++ {
			for oh := int64(0); oh < a.oh; oh++ {
				base[ow*a.oh+oh] = rowBase[oh] + colBase[ow]
			}
		}
		return lookup(both, base, []int64{a.ow, a.oh, 1}, "argmax_pool_offset")
	}
	y, err := lookup(rows, rowBase, []int64{a.oh, 1}, "argmax_pool_row")
	if err != nil {
		return nil, err
	}
	if a.ph > 0 {
		if y, err = b.Value(opClamp, ir.ValueArg(y), ir.IntArg(0), ir.IntArg((a.h-1)*a.w)); err != nil {
			return nil, err
		}
	}
	x, err := lookup(cols, colBase, []int64{a.ow, 1, 1}, "argmax_pool_col")
	if err != nil {
		return nil, err
	}
	if a.pw > 0 {
		if x, err = b.Value(opClamp, ir.ValueArg(x), ir.IntArg(0), ir.IntArg(a.w-1)); err != nil {
			return nil, err
		}
	}
	return b.Value(opAddTensor, ir.ValueArg(y), ir.ValueArg(x))
}

// addConstant adds an int64 lifted constant (a constant_tensor input after
// the last parameter/buffer/constant input) holding data.
func (c *checker) addConstant(base string, shape []int64, data []int64) (*ir.Value, error) {
	p, g := c.p, c.p.Main
	if len(p.Signature.Inputs) != len(g.Inputs) {
		return nil, fmt.Errorf("signature has %d inputs, the graph %d", len(p.Signature.Inputs), len(g.Inputs))
	}
	name := "_xnnpack_" + base
	for i := 1; p.Weight(name) != nil; i++ {
		name = fmt.Sprintf("_xnnpack_%s_%d", base, i)
	}
	dims := make([]sym.Expr, len(shape))
	for i, d := range shape {
		dims[i] = sym.Const(d)
	}
	t := &ir.TensorType{DType: ir.Int64, Shape: dims}
	raw := make([]byte, 8*len(data))
	for i, v := range data {
		binary.LittleEndian.PutUint64(raw[8*i:], uint64(v))
	}
	pos := 0
	for i, spec := range p.Signature.Inputs {
		switch spec.Kind {
		case ir.Parameter, ir.Buffer, ir.ConstantTensor, ir.CustomObj:
			pos = i + 1
		}
	}
	v, err := g.InsertInput(pos, g.FreshName(name), t)
	if err != nil {
		return nil, err
	}
	tt := *t
	p.AddWeight(&ir.Weight{Name: name, Type: &tt, Source: &ir.InlineSource{Data: raw}})
	specs := append(p.Signature.Inputs, ir.InputSpec{})
	copy(specs[pos+1:], specs[pos:])
	specs[pos] = ir.InputSpec{Kind: ir.ConstantTensor, Name: v.Name, Target: name}
	p.Signature.Inputs = specs
	return v, nil
}

// argMaxPool writes xnnpack.argmax_pool2d as XNNArgMaxPooling2d: the
// input is already in the layout XNNPACK pools (the permute_copy before
// it), the indices an int32 value.
func (s *ser) argMaxPool(n *ir.Node) error {
	in, err := s.get(n.Args[0].Value)
	if err != nil {
		return err
	}
	out, err := s.output(n.Results[0])
	if err != nil {
		return err
	}
	idx, err := s.indexOutput(n.Results[1])
	if err != nil {
		return err
	}
	k, ok1 := ints(n.Arg("kernel_size"), 2)
	pad, ok2 := ints(n.Arg("padding"), 2)
	if !ok1 || !ok2 {
		return fmt.Errorf("argmax pooling with non-literal kernel or padding")
	}
	s.add(xnnfb.XNodeUnionXNNArgMaxPooling2d, &xnnfb.XNNArgMaxPooling2dT{
		PaddingTop: uint32(pad[0]), PaddingRight: uint32(pad[1]), PaddingBottom: uint32(pad[0]), PaddingLeft: uint32(pad[1]),
		PoolingHeight: uint32(k[0]), PoolingWidth: uint32(k[1]),
		InputId: in, OutputValueId: out, OutputIndexId: idx,
	}, s.handle, nil)
	return nil
}

// indexOutput defines the int32 index value of r (external when r is a
// region output).
func (s *ser) indexOutput(r *ir.Value) (uint32, error) {
	if t := r.Tensor(); t == nil || t.DType != ir.Int32 {
		return 0, fmt.Errorf("argmax pooling indices %s are not int32", r)
	}
	ext, flags := uint32(internal), uint32(0)
	if e, ok := s.outExt[r]; ok {
		ext, flags = e, flagOutput
	}
	id := uint32(len(s.g.Xvalues))
	dims := dimsOf(r, s.env)
	s.g.Xvalues = append(s.g.Xvalues, &xnnfb.XValueT{XvalueUnion: &xnnfb.XValueUnionT{Type: xnnfb.XValueUnionXNNTensorValue, Value: &xnnfb.XNNTensorValueT{
		Datatype: xnnfb.XNNDatatypexnn_datatype_int32, NumDims: uint32(len(dims)), Dims: dims, ExternalId: ext, Flags: flags, IdOut: id,
	}}})
	s.ids[r] = id
	return id, nil
}
