package passes

import (
	"fmt"
	"strings"

	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/ir/sym"
	"github.com/fxport/fxport/pm"
)

// XNNPACKFuseBatchNorm folds inference batch norms into the convolution
// or linear before them (exir's FuseBatchNormPass /
// FuseBatchNormWithConvPass).
var XNNPACKFuseBatchNorm = pm.RegisterPass(&pm.Pass{
	Name:     etxFuseBNName,
	Kind:     pm.KindLowering,
	Backends: []string{"executorch.xnnpack"},
	Stage:    pm.StageLowering,
	Doc: `fold an inference batch norm into the convolution or linear before it (exir's FuseBatchNormPass)

XNNPACK has no batch-norm node, so a batch norm left after a convolution
stays on portable kernels and splits the delegate in two. As exir's
FuseBatchNormPass does before partitioning, a
_native_batch_norm_legit_no_training (or native_batch_norm with
training=False) whose input is an aten.convolution (any rank, transposed
or not) used by nothing else is folded into it when only its first result
is used and the convolution's weight and bias, the batch norm's weight,
bias and running statistics are all constants (parameters, buffers or
lifted constants that no output mutates, with static shapes; a missing
conv bias counts as 0, missing affine parameters as 1 and 0) and every
tensor is float32. The convolution then reads two new parameter inputs,
<weight>_fused_bn and <bias or weight_bias>_fused_bn (torch's
fuse_conv_bn_weights: W·γ/√(σ²+ε) per output channel, (b−μ)·γ/√(σ²+ε)+β),
and the batch norm's users read the convolution. A batch norm of a rank-2
linear folds the same way (torch's fuse_linear_bn_weights): the [out, in]
constant under decompose-to-core's permute_copy [1, 0] (used only there)
of an addmm (beta = alpha = 1, constant bias) or mm is replaced by the
folded one, the bias by the folded bias, and an mm becomes an addmm. The
new weights are lazy
recipes over the original sources (bn_fold(...)): nothing is read by the
pass, and the bytes are computed one tensor at a time when the delegate is
serialized and written. Inputs left without users are removed with their
weights. Registered before xnnpack-partition, which then claims the
convolution with its fused weights, no batch norm left between delegated
nodes. Each fold fires on the convolution; statistic "fused".`,
	Requires: []pm.Requirement{
		{After: etlFunctionalizeName, Why: "matches the functional, decomposed batch norm (_native_batch_norm_legit_no_training)"},
	},
	Run: runXNNPACKFuseBatchNorm,
})

const etxFuseBNName = "xnnpack-fuse-batch-norm"

var (
	etxOpConvolution = ir.OpAtenConvolution
)

// etxBNState knows the main graph's constant inputs.
type etxBNState struct {
	p       *ir.Program
	weights map[*ir.Value]*ir.Weight // unmutated constant input → its weight
	touched map[*ir.Value]bool       // inputs a fold stopped reading
	// addConstant's bookkeeping, kept up to date so that each constant
	// costs O(1) rather than a scan of every input: the names the
	// signature's inputs use (nil until the first constant), where the next
	// constant goes, and the weights to add to the program at the end.
	taken map[string]bool
	at    int
	added []*ir.Weight
}

func runXNNPACKFuseBatchNorm(p *ir.Program, c *pm.Ctx) (pm.Result, error) {
	g := p.Main
	if g == nil || len(p.Signature.Inputs) != len(g.Inputs) {
		return pm.Result{}, nil
	}
	st := &etxBNState{p: p, weights: etConstantWeights(p), touched: map[*ir.Value]bool{}}
	defer func() { p.AddWeights(st.added) }() // in one sweep: AddWeight per constant is O(weights)
	for in, w := range st.weights {
		if w.Source == nil {
			delete(st.weights, in) // no bytes to fold
		}
	}
	fused := 0
	for _, n := range g.Nodes() {
		if n.IsErased() || (n.Op != etlOpBatchNormNoTrain && n.Op != etlOpNativeBatchNorm) {
			continue
		}
		in, ok := st.matchBN(n)
		if !ok {
			continue
		}
		var err error
		switch {
		case in.Op == etxOpConvolution && st.matchConv(in):
			err = st.fold(in, n)
			c.Fired(in, "batch norm folded into the convolution's weight and bias")
		case st.matchLinear(in, n) != nil: // et_xnnpack_fuse_bn_linear.go
			var fc *ir.Node
			if fc, err = st.foldLinear(in, n); err == nil {
				c.Fired(fc, "batch norm folded into the linear's weight and bias")
			}
		default:
			continue
		}
		if err != nil {
			return pm.Result{}, err
		}
		fused++
		c.Stat("fused", 1)
	}
	if fused == 0 {
		return pm.Result{}, nil
	}
	return pm.Result{Changed: true}, st.dropUnused(c)
}

// matchBN checks the batch norm's side of a fold — inference form, only
// its first result used, constant float32 affine parameters (or None) and
// running statistics, a literal eps, an input whose only user it is — and
// returns the node defining its input.
func (st *etxBNState) matchBN(bn *ir.Node) (*ir.Node, bool) {
	if bn.Op == etlOpNativeBatchNorm {
		if tr := bn.Arg("training"); tr.Kind != ir.ArgBool || tr.Bool() {
			return nil, false
		}
	}
	for _, r := range bn.Results[1:] {
		if r.NumUses() != 0 {
			return nil, false
		}
	}
	x := bn.Arg("input")
	if x.Kind != ir.ArgValue || x.Value.Def == nil || x.Value.NumUses() != 1 || len(x.Value.Def.Results) != 1 {
		return nil, false
	}
	if t := x.Value.Tensor(); t == nil || t.DType != ir.Float32 {
		return nil, false
	}
	for _, k := range []string{"weight", "bias"} { // optional affine parameters
		if a := bn.Arg(k); !a.IsNone() && (a.Kind != ir.ArgValue || !st.isF32Const(a.Value)) {
			return nil, false
		}
	}
	for _, k := range []string{"running_mean", "running_var"} {
		if a := bn.Arg(k); a.Kind != ir.ArgValue || !st.isF32Const(a.Value) {
			return nil, false
		}
	}
	if e := bn.Arg("eps"); e.Kind != ir.ArgFloat && e.Kind != ir.ArgInt {
		return nil, false
	}
	return x.Value.Def, true
}

// matchConv checks the convolution's side: a constant float32 weight and
// bias (or None), literal groups and transposed.
func (st *etxBNState) matchConv(conv *ir.Node) bool {
	w := conv.Arg("weight")
	if w.Kind != ir.ArgValue || !st.isF32Const(w.Value) || conv.Arg("groups").Kind != ir.ArgInt || conv.Arg("transposed").Kind != ir.ArgBool {
		return false
	}
	b := conv.Arg("bias")
	return b.IsNone() || (b.Kind == ir.ArgValue && st.isF32Const(b.Value))
}

// isF32Const reports an unmutated float32 constant input of static shape.
func (st *etxBNState) isF32Const(v *ir.Value) bool {
	w := st.weights[v]
	if w == nil || w.Type == nil || w.Type.DType != ir.Float32 {
		return false
	}
	_, ok := w.Type.StaticShape()
	return ok
}

// source is constant v's bytes in row-major order.
func (st *etxBNState) source(v *ir.Value) (ir.WeightSource, error) {
	w := st.weights[v]
	shape, _ := w.Type.StaticShape()
	if (w.Strides == nil || etStridesContiguous(shape, w.Strides)) && w.StorageOffset == 0 {
		return w.Source, nil
	}
	return newContiguousSource(w.Source, 4, shape, w.Strides, w.StorageOffset)
}

// optSource is source for an optional tensor argument (nil for None).
func (st *etxBNState) optSource(a ir.Arg) (ir.WeightSource, error) {
	if a.IsNone() {
		return nil, nil
	}
	return st.source(a.Value)
}

// fold rewrites conv to read the fused weight and bias and bn's users to
// read conv.
func (st *etxBNState) fold(conv, bn *ir.Node) error {
	wv := conv.Arg("weight").Value
	nw, nb, err := st.fused(conv, bn, wv, conv.Arg("bias"), conv.Arg("transposed").Bool(), conv.Arg("groups").Int)
	if err != nil {
		return err
	}
	conv.SetNamedArg("weight", ir.ValueArg(nw))
	conv.SetNamedArg("bias", ir.ValueArg(nb))
	conv.AddProvenance(etxFuseBNName)
	bn.Results[0].ReplaceAllUsesWith(conv.Results[0])
	if err := bn.Erase(); err != nil {
		return bn.Errorf("%s: %v", etxFuseBNName, err)
	}
	return nil
}

// fused adds the parameter inputs holding weight wv and bias (a value or
// None) with bn folded in, per output channel of a weight of the given
// layout, and marks the constants at and bn read as touched.
func (st *etxBNState) fused(at, bn *ir.Node, wv *ir.Value, bias ir.Arg, transposed bool, groups int64) (*ir.Value, *ir.Value, error) {
	shape, _ := wv.Tensor().StaticShape()
	ws := &BNFoldSource{Part: "weight", Shape: shape, Transposed: transposed, Groups: groups}
	if err := st.bnSources(bn, ws); err != nil {
		return nil, nil, err
	}
	var err error
	if ws.Weight, err = st.source(wv); err != nil {
		return nil, nil, at.Errorf("%s: weight %s: %v", etxFuseBNName, wv, err)
	}
	ch, err := ws.channels()
	if err != nil {
		return nil, nil, at.Errorf("%s: %v", etxFuseBNName, err)
	}
	bs := &BNFoldSource{Part: "bias", Shape: []int64{ch}, Groups: 1, Eps: ws.Eps, Gamma: ws.Gamma, Beta: ws.Beta, Mean: ws.Mean, Var: ws.Var}
	if bs.Bias, err = st.optSource(bias); err != nil {
		return nil, nil, at.Errorf("%s: bias: %v", etxFuseBNName, err)
	}
	for _, fs := range []*BNFoldSource{ws, bs} {
		if err := fs.check(); err != nil {
			return nil, nil, at.Errorf("%s: %v", etxFuseBNName, err)
		}
	}
	wName := st.weights[wv].Name
	bName := wName + "_bias"
	if !bias.IsNone() {
		bName = st.weights[bias.Value].Name
	}
	nw, err := st.addConstant(etxFusedName(wName), wv.Tensor(), ws)
	if err != nil {
		return nil, nil, at.Errorf("%s: %v", etxFuseBNName, err)
	}
	nb, err := st.addConstant(etxFusedName(bName), &ir.TensorType{DType: ir.Float32, Shape: []sym.Expr{sym.Const(ch)}}, bs)
	if err != nil {
		return nil, nil, at.Errorf("%s: %v", etxFuseBNName, err)
	}
	for _, v := range append(append(bn.Operands(), at.Operands()...), wv) {
		if st.weights[v] != nil {
			st.touched[v] = true
		}
	}
	return nw, nb, nil
}

// bnSources fills fs's eps and batch-norm sources from bn.
func (st *etxBNState) bnSources(bn *ir.Node, fs *BNFoldSource) error {
	eps := bn.Arg("eps")
	fs.Eps = eps.Float
	if eps.Kind == ir.ArgInt {
		fs.Eps = float64(eps.Int)
	}
	var err error
	for _, x := range []struct {
		arg string
		dst *ir.WeightSource
	}{{"weight", &fs.Gamma}, {"bias", &fs.Beta}, {"running_mean", &fs.Mean}, {"running_var", &fs.Var}} {
		if *x.dst, err = st.optSource(bn.Arg(x.arg)); err != nil {
			return bn.Errorf("%s: %s: %v", etxFuseBNName, x.arg, err)
		}
	}
	return nil
}

// etxFusedName is exir's name for a fused tensor: the original's with
// dots as underscores and a _fused_bn suffix.
func etxFusedName(orig string) string {
	return strings.ReplaceAll(orig, ".", "_") + "_fused_bn"
}

// addConstant adds a parameter input of type t holding src, after the
// last parameter/buffer/constant input, under a fresh name based on name.
func (st *etxBNState) addConstant(name string, t *ir.TensorType, src ir.WeightSource) (*ir.Value, error) {
	p, g := st.p, st.p.Main
	if st.taken == nil {
		st.taken = map[string]bool{}
		for i, spec := range p.Signature.Inputs {
			st.taken[spec.Target] = true
			switch spec.Kind {
			case ir.Parameter, ir.Buffer, ir.ConstantTensor, ir.CustomObj:
				st.at = i + 1
			}
		}
	}
	base := name
	for i := 1; st.taken[name] || p.Weight(name) != nil; i++ {
		name = fmt.Sprintf("%s_%d", base, i)
	}
	wt := *t
	wt.DimOrder = nil
	pos := st.at
	v, err := g.InsertInput(pos, g.FreshName(name), &wt)
	if err != nil {
		return nil, err
	}
	specs := append(p.Signature.Inputs, ir.InputSpec{})
	copy(specs[pos+1:], specs[pos:])
	specs[pos] = ir.InputSpec{Kind: ir.Parameter, Name: v.Name, Target: name}
	p.Signature.Inputs = specs
	st.taken[name] = true
	st.at = pos + 1 // after the parameter just inserted
	w := &ir.Weight{Name: name, Type: &wt, Source: src}
	st.added = append(st.added, w) // names in st.taken until added
	st.weights[v] = w
	return v, nil
}

// dropUnused removes the constant inputs a fold left without users, and
// their weights when no other input names them.
func (st *etxBNState) dropUnused(c *pm.Ctx) error {
	return etDropUnusedInputs(st.p, c, etxFuseBNName, st.weights, func(in *ir.Value) bool { return st.touched[in] })
}
