package passes

import (
	"fmt"
	"strconv"

	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/pm"
)

// FoldConstantViews folds permute_copy / view_copy / alias_copy of
// constants into new lifted constants (exir's constant propagation of
// weight transposes).
var FoldConstantViews = etlLowering(&pm.Pass{
	Name: etlFoldViewsName,
	Doc: `fold permute_copy, view_copy and alias_copy of constants into new lifted constants

exir constant-folds the copies its edge dialect makes of constants (the
permute_copy that linear's decomposition puts on every weight, a view_copy
of a buffer), so they are neither computed at run time nor planned as
activations. Here, in the main graph, a permute_copy.default,
view_copy.default or alias_copy.default whose input is a parameter, a
non-mutated buffer or a lifted constant (or an earlier folded result), with
static shapes and the default dim order on both sides, is replaced by a new
graph input of kind constant_tensor named _prop_tensor_constant<N>, placed
after the last parameter/buffer/constant input in the signature. Its
weight reads the original bytes lazily: the source is
contiguous(src=…, shape=<result shape>, strides=<permuted strides>, …), the
same strided-view wrapper ET-PF04 uses, so nothing is read by the pass and
the IR still prints and parses. A weight input left without users is
removed (and its weight, unless another input still names it). Nodes inside
delegate regions and control-flow regions are not touched; a view of a
symbolic shape (view_copy with SymInt sizes) is not folded. Each fold
fires on the new input's first user; statistic "folded".`,
	Run: runFoldConstantViews,
})

const etlFoldViewsName = "fold-constant-views"

var etlOpAliasCopy = ir.OpAtenAliasCopy

// etlFoldState tracks the main graph's constant inputs during the fold.
type etlFoldState struct {
	p       *ir.Program
	weights map[*ir.Value]*ir.Weight // constant input → its weight
	next    int
	// views maps each folded weight to the strided view of an original
	// weight's storage it holds, so chains of folds compose into one view.
	views map[*ir.Weight]etlFoldView
	// taken is every input target, built at the first freshName and kept
	// up to date by the inputs fold adds (nil until then).
	taken map[string]bool
	// insertAt is where the next folded constant's input goes (after the
	// last parameter, buffer, constant or object input), valid while the
	// signature has insertLen inputs (-1: not known).
	insertAt, insertLen int
}

// etlFoldView is a strided view (in elements) of a source's storage.
type etlFoldView struct {
	src     ir.WeightSource
	strides []int64
	offset  int64
}

func runFoldConstantViews(p *ir.Program, c *pm.Ctx) (pm.Result, error) {
	g := p.Main
	if g == nil || len(p.Signature.Inputs) != len(g.Inputs) {
		return pm.Result{}, nil
	}
	st := &etlFoldState{p: p, weights: etConstantWeights(p), views: map[*ir.Weight]etlFoldView{}, insertLen: -1}
	changed := false
	for _, n := range g.Nodes() {
		if n.IsErased() {
			continue
		}
		nv, err := st.fold(n)
		if err != nil {
			return pm.Result{}, err
		}
		if nv == nil {
			continue
		}
		changed = true
		c.Stat("folded", 1)
		var at *ir.Node
		if us := nv.Uses(); len(us) > 0 && !us[0].IsReturn() {
			at = us[0]
		}
		c.Fired(at, fmt.Sprintf("%s folded into constant %s", n.Op, nv.Name))
	}
	if !changed {
		return pm.Result{}, nil
	}
	return pm.Result{Changed: true}, st.dropUnused(c)
}

// fold replaces n by a new constant input when n is a foldable copy of a
// constant; it returns the new input (nil when n stays).
func (st *etlFoldState) fold(n *ir.Node) (*ir.Value, error) {
	if n.Op != etlOpPermuteCopy && n.Op != etlOpViewCopy && n.Op != etlOpAliasCopy {
		return nil, nil
	}
	self := n.Arg("self")
	if self.Kind != ir.ArgValue || len(n.Results) != 1 {
		return nil, nil
	}
	w := st.weights[self.Value]
	if w == nil || w.Type == nil {
		return nil, nil
	}
	in, out := self.Value.Tensor(), n.Results[0].Tensor()
	if in == nil || out == nil || !in.IsContiguous() || !out.IsContiguous() || in.DType != out.DType {
		return nil, nil
	}
	inShape, ok1 := in.StaticShape()
	outShape, ok2 := out.StaticShape()
	wShape, ok3 := w.Type.StaticShape()
	if !ok1 || !ok2 || !ok3 || !etShapeEqual(inShape, wShape) {
		return nil, nil
	}
	// The storage the input reads and its strides (in elements): an
	// earlier fold's view of the original weight, or the weight itself.
	base, inStrides, offset := w.Source, w.Strides, w.StorageOffset
	if inStrides == nil {
		inStrides = etRowMajorStrides(inShape)
	}
	if v, ok := st.views[w]; ok {
		base, inStrides, offset = v.src, v.strides, v.offset
	}
	var outStrides []int64
	switch n.Op {
	case etlOpPermuteCopy:
		perm, ok := etlFoldInts(n.Arg("dims"))
		if !ok || len(perm) != len(inShape) {
			return nil, nil
		}
		outStrides = make([]int64, len(perm))
		for i, d := range perm {
			if d < 0 {
				d += int64(len(perm))
			}
			if d < 0 || d >= int64(len(perm)) {
				return nil, n.Errorf("%s: permutation %v out of range for rank %d", etlFoldViewsName, perm, len(perm))
			}
			outStrides[i] = inStrides[d]
		}
	default: // view_copy, alias_copy: same elements in row-major order
		if !etStridesContiguous(inShape, inStrides) {
			// The input is a non-contiguous view: read its row-major form.
			if w.Strides != nil && !etStridesContiguous(inShape, w.Strides) {
				return nil, nil
			}
			base, offset = w.Source, w.StorageOffset
		}
		if etNumel(inShape) != etNumel(outShape) {
			return nil, n.Errorf("%s: %s of %d elements into shape %v", etlFoldViewsName, n.Op, etNumel(inShape), outShape)
		}
		outStrides = etRowMajorStrides(outShape)
	}
	wt := *out
	wt.DimOrder = nil
	nw := &ir.Weight{Name: st.freshName(), Type: &wt}
	if base != nil {
		src, err := newContiguousSource(base, int64(w.Type.DType.Size()), outShape, outStrides, offset)
		if err != nil {
			return nil, n.Errorf("%s: folding weight %q: %v", etlFoldViewsName, w.Name, err)
		}
		nw.Source = src
		st.views[nw] = etlFoldView{src: base, strides: outStrides, offset: offset}
	}
	g := st.p.Main
	pos := st.insertAt
	if st.insertLen != len(st.p.Signature.Inputs) {
		pos = 0
		for i, spec := range st.p.Signature.Inputs {
			switch spec.Kind {
			case ir.Parameter, ir.Buffer, ir.ConstantTensor, ir.CustomObj:
				pos = i + 1
			}
		}
	}
	v, err := g.InsertInput(pos, g.FreshName(nw.Name), &wt)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", etlFoldViewsName, err)
	}
	specs := st.p.Signature.Inputs
	specs = append(specs, ir.InputSpec{})
	copy(specs[pos+1:], specs[pos:])
	specs[pos] = ir.InputSpec{Kind: ir.ConstantTensor, Name: v.Name, Target: nw.Name}
	st.p.Signature.Inputs = specs
	st.insertAt, st.insertLen = pos+1, len(specs)
	if st.taken != nil {
		st.taken[nw.Name] = true
	}
	st.p.AddWeight(nw)
	st.weights[v] = nw
	n.Results[0].ReplaceAllUsesWith(v)
	if err := n.Erase(); err != nil {
		return nil, n.Errorf("%s: %v", etlFoldViewsName, err)
	}
	return v, nil
}

// freshName returns the next _prop_tensor_constant<N> no weight or input
// target uses.
func (st *etlFoldState) freshName() string {
	if st.taken == nil {
		st.taken = make(map[string]bool, len(st.p.Signature.Inputs))
		for _, s := range st.p.Signature.Inputs {
			st.taken[s.Target] = true
		}
	}
	for {
		name := "_prop_tensor_constant" + strconv.Itoa(st.next)
		st.next++
		if !st.taken[name] && st.p.Weight(name) == nil {
			return name
		}
	}
}

// dropUnused removes the weight inputs the fold left without users.
func (st *etlFoldState) dropUnused(c *pm.Ctx) error {
	return etDropUnusedInputs(st.p, c, etlFoldViewsName, st.weights, func(in *ir.Value) bool { return st.weights[in] != nil })
}

func etRowMajorStrides(shape []int64) []int64 {
	s := make([]int64, len(shape))
	acc := int64(1)
	for i := len(shape) - 1; i >= 0; i-- {
		s[i] = acc
		acc *= shape[i]
	}
	return s
}

func etNumel(shape []int64) int64 {
	n := int64(1)
	for _, d := range shape {
		n *= d
	}
	return n
}

func etShapeEqual(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// etlFoldInts reads a literal int list.
func etlFoldInts(a ir.Arg) ([]int64, bool) {
	if a.Kind != ir.ArgList {
		return nil, false
	}
	out := make([]int64, len(a.List))
	for i, e := range a.List {
		if e.Kind != ir.ArgInt {
			return nil, false
		}
		out[i] = e.Int
	}
	return out, true
}
