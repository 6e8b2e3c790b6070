package onnx

import (
	"fmt"
	"math"

	"github.com/fxport/fxport/ir"
	pb "github.com/fxport/fxport/targets/onnx/onnxpb"
)

// ONNX-TR10: torch_attn._varlen_attn as a Loop over the cu_seq_q segments.
// Packed query [Tq, H, E], key [Tk, Hk, E], value [Tk, Hk, Ev]; segment i is
// rows cu_seq_q[i]:cu_seq_q[i+1] of the query against rows
// cu_seq_k[i]:cu_seq_k[i+1] of key/value, dense attention per segment, the
// kv heads repeated for GQA (head h reads kv head h / (H/Hk)). The body
// scatters each segment's rows into the loop-carried output (rows outside
// every segment stay zero) and also computes the logsumexp (result 1, [H, Tq]);
// the RNG state (result 2) is a zero u64[2] stub, as attention here has no
// dropout.

func lowerVarlenAttn(b *Builder, n *ir.Node) error {
	r := reader(b, n)
	dt := r.out(0).DType
	q, k, v := r.In("query", dt), r.In("key", dt), r.In("value", dt)
	cq, ck := r.In("cu_seq_q", ir.Int64), r.In("cu_seq_k", ir.Int64)
	causal := r.Has("is_causal") && r.Bool("is_causal")
	qs, ks, vs := r.Shape("query"), r.Shape("key"), r.Shape("value")
	if r.err != nil {
		return r.err
	}
	if r.Has("window_size") {
		w := r.Ints("window_size")
		if r.err != nil {
			return r.err
		}
		if len(w) != 2 || w[0] != -1 || w[1] != -1 {
			return fmt.Errorf("_varlen_attn with a sliding window %v is not lowered", w)
		}
	}
	if len(qs) != 3 || len(ks) != 3 || len(vs) != 3 {
		return fmt.Errorf("_varlen_attn expects packed 3-D query, key and value")
	}
	static := func(what string, e interface{ Const() (int64, bool) }) (int64, error) {
		c, ok := e.Const()
		if !ok {
			return 0, fmt.Errorf("_varlen_attn: the %s must be static", what)
		}
		return c, nil
	}
	h, err := static("query head count", qs[1])
	if err != nil {
		return err
	}
	hk, err := static("key head count", ks[1])
	if err != nil {
		return err
	}
	e, err := static("head dim", qs[2])
	if err != nil {
		return err
	}
	ev, err := static("value head dim", vs[2])
	if err != nil {
		return err
	}
	if hk <= 0 || h%hk != 0 {
		return fmt.Errorf("_varlen_attn: %d kv heads do not divide %d query heads", hk, h)
	}
	scale := 1 / math.Sqrt(float64(e))
	if r.Has("scale") {
		scale = r.Float("scale")
	}
	if r.err != nil {
		return r.err
	}

	// Loop-carried outputs: out [Tq, H, Ev] (dt) and lse [Tq, H] (f32), zero.
	outShape, err := b.ShapeTensor(r.out(0).Shape)
	if err != nil {
		return err
	}
	lseShape := b.Tmp("Concat", []string{b.Tmp("Slice", []string{b.Tmp("Shape", []string{q}), b.I64s(0), b.I64s(1)}), b.I64s(h)}, AttrInt("axis", 0))
	zeros := func(shape string, dt ir.DType) (string, error) {
		et, err := elemType(dt)
		if err != nil {
			return "", err
		}
		z, err := encodeScalar(dt, 0)
		if err != nil {
			return "", err
		}
		return b.Tmp("ConstantOfShape", []string{shape}, AttrTensor("value", &pb.TensorProto{Dims: []int64{1}, DataType: int32Ptr(int32(et)), RawData: z})), nil
	}
	out0, err := zeros(outShape, dt)
	if err != nil {
		return err
	}
	lse0, err := zeros(lseShape, ir.Float32)
	if err != nil {
		return err
	}
	trip := b.Tmp("Sub", []string{b.Tmp("Gather", []string{b.Tmp("Shape", []string{cq}), b.I64(0)}, AttrInt("axis", 0)), b.I64(1)})

	lb, err := b.NewLoop("varlen_attn", LoopVar(dt, 3), LoopVar(ir.Float32, 2))
	if err != nil {
		return err
	}
	next := lb.Tmp("Add", []string{lb.Iter, lb.I64(1)})
	bound := func(cu, i string) string { return lb.Tmp("Gather", []string{cu, i}, AttrInt("axis", 0)) }
	q0, q1, k0, k1 := bound(cq, lb.Iter), bound(cq, next), bound(ck, lb.Iter), bound(ck, next)
	// Empty segments (zero query or key rows) are skipped with an If: ORT
	// cannot run the attention ops on zero-sized operands.
	qLen, kLen := lb.Tmp("Sub", []string{q1, q0}), lb.Tmp("Sub", []string{k1, k0})
	nonEmpty := lb.Tmp("And", []string{lb.Tmp("Greater", []string{qLen, lb.I64(0)}), lb.Tmp("Greater", []string{kLen, lb.I64(0)})})
	sb := lb.NewSubgraph("segment")
	axis0 := sb.I64s(0)
	seg := func(x, s, e string) string {
		sl := sb.Tmp("Slice", []string{x, sb.Tmp("Unsqueeze", []string{s, axis0}), sb.Tmp("Unsqueeze", []string{e, axis0}), axis0})
		return sb.Tmp("Transpose", []string{sl}, AttrInts("perm", 1, 0, 2)) // [H, L, E]
	}
	sq, sk, sv := seg(q, q0, q1), seg(k, k0, k1), seg(v, k0, k1)
	if hk != h {
		rep := func(x string, d int64) string {
			u := sb.Tmp("Unsqueeze", []string{x, sb.I64s(1)})
			x = sb.Tmp("Expand", []string{u, sb.I64s(1, h/hk, 1, 1)})
			return sb.Tmp("Reshape", []string{x, sb.I64s(h, -1, d)})
		}
		sk, sv = rep(sk, e), rep(sv, ev)
	}
	sc, err := sb.Scalar(dt, scale)
	if err != nil {
		return err
	}
	scores := sb.Tmp("Mul", []string{sb.Tmp("MatMul", []string{sq, sb.Tmp("Transpose", []string{sk}, AttrInts("perm", 0, 2, 1))}), sc})
	if causal {
		// Top-left aligned: key j is masked for query i when j > i.
		one := sb.I64(1)
		rows := sb.Tmp("Range", []string{sb.I64(0), sb.Tmp("Sub", []string{q1, q0}), one})
		cols := sb.Tmp("Range", []string{sb.I64(0), sb.Tmp("Sub", []string{k1, k0}), one})
		mask := sb.Tmp("Greater", []string{sb.Tmp("Unsqueeze", []string{cols, sb.I64s(0)}), sb.Tmp("Unsqueeze", []string{rows, sb.I64s(1)})})
		ninf, err := sb.Scalar(dt, math.Inf(-1))
		if err != nil {
			return err
		}
		scores = sb.Tmp("Where", []string{mask, ninf, scores})
	}
	probs := sb.Tmp("Softmax", []string{scores}, AttrInt("axis", -1))
	o := sb.Tmp("Transpose", []string{sb.Tmp("MatMul", []string{probs, sv})}, AttrInts("perm", 1, 0, 2)) // [L, H, Ev]
	s32, err := sb.CastTo(scores, dt, ir.Float32)
	if err != nil {
		return err
	}
	var lse string
	if sb.opset < 18 {
		lse = sb.Tmp("ReduceLogSumExp", []string{s32}, AttrInts("axes", -1), AttrInt("keepdims", 0))
	} else {
		lse = sb.Tmp("ReduceLogSumExp", []string{s32, sb.I64s(-1)}, AttrInt("keepdims", 0))
	}
	lse = sb.Tmp("Transpose", []string{lse}, AttrInts("perm", 1, 0)) // [L, H]
	rows := sb.Tmp("Unsqueeze", []string{sb.Tmp("Range", []string{q0, q1, sb.I64(1)}), sb.I64s(1)})
	outN := sb.Tmp("ScatterND", []string{lb.Carried[0], rows, o})
	lseN := sb.Tmp("ScatterND", []string{lb.Carried[1], rows, lse})
	if err := sb.Output(outN, dt, 3); err != nil {
		return err
	}
	if err := sb.Output(lseN, ir.Float32, 2); err != nil {
		return err
	}
	skip := lb.NewSubgraph("empty")
	if err := skip.Output(lb.Carried[0], dt, 3); err != nil {
		return err
	}
	if err := skip.Output(lb.Carried[1], ir.Float32, 2); err != nil {
		return err
	}
	next2, err := lb.If(nonEmpty, sb, skip, 2)
	if err != nil {
		return err
	}
	outs, err := lb.Build(trip, []string{out0, lse0}, next2, nil, nil)
	if err != nil {
		return err
	}
	b.Bind(n.Results[0], outs[0])
	if len(n.Results) > 1 && n.Results[1] != nil {
		b.Emit(n.Results[1], "Transpose", []string{outs[1]}, AttrInts("perm", 1, 0))
	}
	if len(n.Results) > 2 && n.Results[2] != nil {
		z, err := zeros(b.I64s(2), ir.Uint64)
		if err != nil {
			return err
		}
		b.Bind(n.Results[2], z)
	}
	return nil
}

func init() {
	translation("ONNX-TR10", "translate-varlen-attn",
		"_varlen_attn as a Loop over the cu_seq_q segments\n\nEach iteration slices one segment of the packed query and of key/value (cu_seq_k), runs dense attention (kv heads repeated for GQA, top-left causal mask when is_causal), and scatters its rows into the loop-carried output; the logsumexp is computed the same way, the RNG-state output is a zero stub. Sliding windows and symbolic head counts/dims fail with the reason.",
		lowerVarlenAttn, ir.OpTorchAttn_VarlenAttn)
}
