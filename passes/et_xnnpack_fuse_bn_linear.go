package passes

import "github.com/fxport/fxport/ir"

// Batch norm after a linear (exir's newer FuseBatchNormPass folds it with
// torch's fuse_linear_bn_weights). Here linear is decompose-to-core's
// addmm(b, x, permute_copy(W, [1, 0])) or mm(x, permute_copy(W, [1, 0])):
// the [out, in] constant W is replaced by W scaled per row (its output
// channel, the batch norm's channel on a rank-2 result), and the bias by
// the folded one; an mm becomes an addmm with the folded bias.

var (
	etxOpAddmm   = ir.OpAtenAddmm
	etxOpMM      = ir.OpAtenMm
	etxOpPermute = ir.OpAtenPermuteCopy
)

// matchLinear returns the permute_copy of the weight when fc (the batch
// norm's input) is a foldable linear: addmm with beta = alpha = 1 and a
// constant bias, or mm, of rank 2, whose weight is a permute_copy [1, 0],
// used only there, of a constant float32 [out, in] matrix.
func (st *etxBNState) matchLinear(fc *ir.Node, bn *ir.Node) *ir.Node {
	var w ir.Arg
	switch fc.Op {
	case etxOpAddmm:
		for _, k := range []string{"beta", "alpha"} {
			if a := fc.Arg(k); !(a.Kind == ir.ArgInt && a.Int == 1) && !(a.Kind == ir.ArgFloat && a.Float == 1) {
				return nil
			}
		}
		if b := fc.Arg("self"); b.Kind != ir.ArgValue || !st.isF32Const(b.Value) || b.Value.Tensor().Rank() != 1 {
			return nil
		}
		w = fc.Arg("mat2")
	case etxOpMM:
		w = fc.Arg("mat2")
	default:
		return nil
	}
	if t := fc.Results[0].Tensor(); t == nil || t.Rank() != 2 {
		return nil
	}
	if w.Kind != ir.ArgValue || w.Value.Def == nil || w.Value.Def.Op != etxOpPermute || w.Value.NumUses() != 1 {
		return nil
	}
	perm := w.Value.Def
	if d, ok := etlFoldInts(perm.Arg("dims")); !ok || len(d) != 2 || d[0] != 1 || d[1] != 0 {
		return nil
	}
	if src := perm.Arg("self"); src.Kind != ir.ArgValue || !st.isF32Const(src.Value) || src.Value.Tensor().Rank() != 2 {
		return nil
	}
	return perm
}

// foldLinear folds bn into the linear fc and returns the node that now
// computes the linear (fc, or the addmm that replaced an mm).
func (st *etxBNState) foldLinear(fc, bn *ir.Node) (*ir.Node, error) {
	perm := st.matchLinear(fc, bn)
	wv := perm.Arg("self").Value
	bias := ir.NoneArg()
	if fc.Op == etxOpAddmm {
		bias = fc.Arg("self")
	}
	nw, nb, err := st.fused(fc, bn, wv, bias, false, 1)
	if err != nil {
		return nil, err
	}
	perm.SetNamedArg("self", ir.ValueArg(nw))
	perm.AddProvenance(etxFuseBNName)
	out := fc
	if fc.Op == etxOpMM {
		b := ir.NewBuilder(fc.Graph)
		b.SetInsertBefore(fc)
		b.Pass = etxFuseBNName
		meta := fc.Meta.Clone()
		b.Meta = &meta
		if out, err = b.Call(etxOpAddmm, ir.ValueArg(nb), fc.Arg("self"), fc.Arg("mat2")); err != nil {
			return nil, fc.Errorf("%s: building addmm: %v", etxFuseBNName, err)
		}
		name := fc.Results[0].Name
		fc.Results[0].ReplaceAllUsesWith(out.Results[0])
		if err := fc.Erase(); err != nil {
			return nil, fc.Errorf("%s: %v", etxFuseBNName, err)
		}
		if err := out.Results[0].Rename(name); err != nil {
			return nil, out.Errorf("%s: %v", etxFuseBNName, err)
		}
	} else {
		fc.SetNamedArg("self", ir.ValueArg(nb))
	}
	out.AddProvenance(etxFuseBNName)
	bn.Results[0].ReplaceAllUsesWith(out.Results[0])
	if err := bn.Erase(); err != nil {
		return nil, bn.Errorf("%s: %v", etxFuseBNName, err)
	}
	return out, nil
}
