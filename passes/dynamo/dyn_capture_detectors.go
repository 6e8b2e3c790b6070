package dynamo

import (
	"fmt"
	"strings"

	"github.com/fxport/fxport/ir"
)

// captureDetector finds, in a traced program, the pattern a capture step
// removes when it is applied. Detectors are deliberately narrow: each looks
// for the one shape the step exists for, so a program the step does not
// concern never trips it.
type captureDetector struct {
	step string
	find func(p *ir.Program) error
}

// captureDetectors run in this order; the first finding fails the pass.
var captureDetectors = []captureDetector{
	{"DYN-S01", findLossAndTrainingInputs},
	{"DYN-S06", findStatefulAttributes},
	{"DYN-P04", findSegmentAttentionLoop},
	{"DYN-P05", findFlashSDPAOnDynamicBatch},
}

// trainingInputs are the inputs prepare_for_export pops (DYN-S01), with why.
var trainingInputs = map[string]string{
	"labels":               "a training-only input: the model computes a loss from it",
	"future_values":        "a training-only input: the model computes a loss from it",
	"use_cache":            "an output flag, which belongs in model.config (DYN-S07), not in the traced inputs",
	"output_attentions":    "an output flag, which belongs in model.config (DYN-S07), not in the traced inputs",
	"output_hidden_states": "an output flag, which belongs in model.config (DYN-S07), not in the traced inputs",
	"return_dict":          "an output flag, which belongs in model.config (DYN-S07), not in the traced inputs",
	"return_loss":          "an output flag, which belongs in model.config (DYN-S07), not in the traced inputs",
}

// findLossAndTrainingInputs: a loss output, or an input prepare_for_export
// would have removed (DYN-S01).
func findLossAndTrainingInputs(p *ir.Program) error {
	outs := p.Main.Outputs()
	for i, o := range p.Signature.Outputs {
		if o.Kind != ir.LossOutput {
			continue
		}
		what := fmt.Sprintf("output %d", i)
		if i < len(outs) && outs[i].Kind == ir.ArgValue {
			what += " (" + outs[i].Value.String() + ")"
		}
		return fmt.Errorf("%s is a loss output: the trace computed a loss", what)
	}
	for i, s := range p.Signature.Inputs {
		if (s.Kind != ir.UserInput && s.Kind != ir.ConstantInput) || i >= len(p.Main.Inputs) {
			continue
		}
		v := p.Main.Inputs[i]
		for _, name := range []string{v.Name, s.Target} {
			if why, bad := trainingInputs[name]; bad {
				return fmt.Errorf("input %s (%s) is %s", v, name, why)
			}
		}
	}
	return nil
}

// statefulAttributes are the module attributes reset_model_state clears
// for the trace (DYN-S06, _STATEFUL_CACHE_ATTRS of both revisions).
var statefulAttributes = map[string]bool{
	"_cached_keys":                       true,
	"_cached_decode_position_ids":        true,
	"_prefill_len":                       true,
	"cached_rotary_positional_embedding": true,
	"cached_sequence_length":             true,
}

// findStatefulAttributes: a lifted parameter, buffer, constant or custom
// object whose FQN ends in a stateful cache attribute — eager state that a
// trace without reset_model_state captured (DYN-S06).
func findStatefulAttributes(p *ir.Program) error {
	for i, s := range p.Signature.Inputs {
		switch s.Kind {
		case ir.Parameter, ir.Buffer, ir.ConstantTensor, ir.CustomObj:
		default:
			continue
		}
		attr := s.Target[strings.LastIndexByte(s.Target, '.')+1:]
		if !statefulAttributes[attr] || i >= len(p.Main.Inputs) {
			continue
		}
		return fmt.Errorf("input %s (%s %q) is the stateful attribute %s: a tensor left from an eager run was traced into the program",
			p.Main.Inputs[i], s.Kind, s.Target, attr)
	}
	return nil
}

var (
	opCat          = ir.OpAtenCat
	opSDPA         = ir.OpAtenScaledDotProductAttention
	opSDPAFlashCPU = ir.OpAten_ScaledDotProductFlashAttentionForCpu

	// Products whose first operand is the attention probabilities or the query.
	opsMatmul  = opSet(ir.OpAtenMatmul, ir.OpAtenBmm)
	opsSoftmax = opSet(ir.OpAtenSoftmaxInt, ir.OpAten_Softmax, ir.OpAten_SafeSoftmax)
	// Scaling and masking of the scores: the scores are the first operand.
	opsScoreScale = opSet(ir.OpAtenMulTensor, ir.OpAtenMulScalar, ir.OpAtenDivTensor, ir.OpAtenDivScalar, ir.OpAtenAddTensor)
	// Splits into segments along an axis given by their "dim" argument.
	opsSplit = opSet(ir.OpAtenSplitTensor, ir.OpAtenSplitWithSizes, ir.OpAtenSplitCopyTensor,
		ir.OpAtenSplitWithSizesCopy, ir.OpAtenChunk)
	// Unary ops that keep every axis where it is.
	opsAxisPreserving = opSet(ir.OpAtenContiguous, ir.OpAtenClone, ir.OpAten_ToCopy,
		ir.OpAtenAlias, ir.OpAtenDetach)
	// Unary ops that may move, merge or split axes (the attention output is
	// transposed and reshaped before it is concatenated).
	opsLayout = opSet(ir.OpAtenTransposeInt, ir.OpAtenPermute, ir.OpAtenView, ir.OpAtenReshape,
		ir.OpAten_UnsafeView, ir.OpAtenUnsqueeze, ir.OpAtenSqueeze, ir.OpAtenSqueezeDim,
		ir.OpAtenSqueezeDims, ir.OpAtenExpand)
)

func opSet(ops ...ir.Op) map[ir.Op]bool {
	m := make(map[ir.Op]bool, len(ops))
	for _, op := range ops {
		m[op] = true
	}
	return m
}

// through follows v back through unary ops of the given sets (their first
// operand, "self").
func through(v *ir.Value, sets ...map[ir.Op]bool) *ir.Value {
	for v != nil && v.Def != nil {
		n := v.Def
		in := false
		for _, s := range sets {
			in = in || s[n.Op]
		}
		if !in || len(n.Args) == 0 || n.Args[0].Kind != ir.ArgValue {
			return v
		}
		v = n.Args[0].Value
	}
	return v
}

// firstOperand is n's first argument when it is a value.
func firstOperand(n *ir.Node) *ir.Value {
	if len(n.Args) == 0 || n.Args[0].Kind != ir.ArgValue {
		return nil
	}
	return n.Args[0].Value
}

// attentionQuery recognises v as the output of one attention — an SDPA op,
// or softmax(Q @ K^T [scaled, masked]) @ V — and returns its query.
func attentionQuery(v *ir.Value) *ir.Value {
	v = through(v, opsAxisPreserving, opsLayout)
	if v == nil || v.Def == nil {
		return nil
	}
	n := v.Def
	switch {
	case n.Op == opSDPA, n.Op == opSDPAFlashCPU && v.Index == 0:
		return firstOperand(n)
	case opsMatmul[n.Op]:
		probs := through(firstOperand(n), opsAxisPreserving)
		if probs == nil || probs.Def == nil || !opsSoftmax[probs.Def.Op] {
			return nil
		}
		scores := through(firstOperand(probs.Def), opsAxisPreserving, opsScoreScale)
		if scores == nil || scores.Def == nil || !opsMatmul[scores.Def.Op] {
			return nil
		}
		return firstOperand(scores.Def)
	}
	return nil
}

// querySegment recognises q as one piece of a split of a tensor along its
// second-to-last axis — the sequence axis of an attention query — and
// returns the split and the piece's index (in the IR a split has one
// result per piece; FX's getitem nodes are gone).
func querySegment(q *ir.Value) (*ir.Node, int64, bool) {
	q = through(q, opsAxisPreserving)
	if q == nil || q.Def == nil {
		return nil, 0, false
	}
	split, idx := q.Def, int64(q.Index)
	if !opsSplit[split.Op] {
		return nil, 0, false
	}
	src := firstOperand(split)
	dim := split.Arg("dim")
	if src == nil || src.Tensor() == nil || dim.Kind != ir.ArgInt {
		return nil, 0, false
	}
	rank := int64(src.Tensor().Rank())
	d := dim.Int
	if d < 0 {
		d += rank
	}
	if rank < 2 || d != rank-2 {
		return nil, 0, false
	}
	return split, idx, true
}

// findSegmentAttentionLoop: a cat of two or more attention outputs whose
// queries are distinct segments of one split along the sequence axis — the
// unrolled Python loop over cu_seqlens segments that DYN-P04 replaces by
// one attention. Attention over heads split along another axis is not it.
func findSegmentAttentionLoop(p *ir.Program) error {
	for _, g := range p.Graphs() {
		if g.OpCount(opCat) == 0 {
			continue
		}
		for _, n := range g.Nodes() {
			if n.Op != opCat {
				continue
			}
			if split, k := segmentLoop(n); split != nil {
				return n.Errorf("unrolled per-segment attention: %s splits the queries along the sequence axis into segments, %d of them are attended separately and joined by this cat", split.Short(), k)
			}
		}
	}
	return nil
}

// segmentLoop checks one cat node; it returns the split and the number of
// segments when the node closes a per-segment attention loop.
func segmentLoop(cat *ir.Node) (*ir.Node, int) {
	tensors := cat.Arg("tensors")
	if tensors.Kind != ir.ArgList || len(tensors.List) < 2 {
		return nil, 0
	}
	var split *ir.Node
	seen := map[int64]bool{}
	for _, a := range tensors.List {
		if a.Kind != ir.ArgValue {
			return nil, 0
		}
		q := attentionQuery(a.Value)
		if q == nil {
			return nil, 0
		}
		s, idx, ok := querySegment(q)
		if !ok || (split != nil && s != split) || seen[idx] {
			return nil, 0
		}
		split, seen[idx] = s, true
	}
	return split, len(seen)
}

// findFlashSDPAOnDynamicBatch: the CPU flash attention kernel on a query
// whose batch dim is symbolic. Its kernel selection guards Eq(batch, 1);
// DYN-P05 traces SDPA with the math backend instead. A static batch is
// harmless and not reported.
func findFlashSDPAOnDynamicBatch(p *ir.Program) error {
	for _, g := range p.Graphs() {
		if g.OpCount(opSDPAFlashCPU) == 0 {
			continue
		}
		for _, n := range g.Nodes() {
			if n.Op != opSDPAFlashCPU {
				continue
			}
			q := firstOperand(n)
			if q == nil || q.Tensor() == nil || q.Tensor().Rank() == 0 {
				continue
			}
			if b := q.Tensor().Shape[0]; !b.IsConst() {
				return n.Errorf("the CPU flash SDPA kernel was traced on the dynamic batch %s; its kernel selection guards Eq(batch, 1)", b)
			}
		}
	}
	return nil
}
