package interp

import (
	"fmt"
	"math"

	"github.com/fxport/fxport/ir"
)

// Grouped matrix products (mixture-of-experts layers) and packed
// variable-length attention.

func init() {
	register(kGroupedMm, ir.OpAten_GroupedMm)
	register(kGroupedMmFallback, ir.OpTransformersGroupedMmFallback)
	register(kVarlenAttn, ir.OpTorchAttn_VarlenAttn)
}

// groupBounds turns cumulative end offsets into [start, end) ranges within n.
func groupBounds(offs *Tensor, n int64) ([][2]int64, error) {
	ends := offs.ints()
	out := make([][2]int64, len(ends))
	start := int64(0)
	for g, e := range ends {
		if e < start || e > n {
			return nil, domainErrorf("group offsets %v are not non-decreasing within [0, %d]", ends, n)
		}
		out[g] = [2]int64{start, e}
		start = e
	}
	return out, nil
}

// mm2 multiplies a [m, k] by b [k, n] (float64, row-major slices).
func mm2(a, b []float64, m, k, n int64) []float64 { return gemmF(a, b, int(m), int(k), int(n)) }

// kGroupedMm is aten._grouped_mm: 2-D × 3-D splits the rows of self by
// offs; 3-D × 2-D splits the columns of mat2; 2-D × 2-D splits the shared
// dim into a batch of products; 3-D × 3-D is a batched product.
func kGroupedMm(c *call) ([]Value, error) {
	a, err := c.tensor("self")
	if err != nil {
		return nil, err
	}
	b, err := c.tensor("mat2")
	if err != nil {
		return nil, err
	}
	offs, err := c.optTensor("offs")
	if err != nil {
		return nil, err
	}
	bias, err := c.optTensor("bias")
	if err != nil {
		return nil, err
	}
	if bias != nil {
		return nil, fmt.Errorf("_grouped_mm with a bias is not supported by the interpreter")
	}
	dt := a.DType
	if d, ok, err := c.optDType("out_dtype"); err != nil {
		return nil, err
	} else if ok {
		dt = d
	}
	if !isFloatDT(a.DType) || a.DType != b.DType {
		return nil, fmt.Errorf("_grouped_mm expects float operands of one dtype, got %s and %s", a.DType, b.DType)
	}
	av, bv := a.To(ir.Float64).Contiguous().floats(), b.To(ir.Float64).Contiguous().floats()
	need := func() error {
		if offs == nil || offs.Rank() != 1 {
			return fmt.Errorf("_grouped_mm of a %d-D and a %d-D operand needs 1-D offs", a.Rank(), b.Rank())
		}
		return nil
	}
	switch {
	case a.Rank() == 3 && b.Rank() == 3:
		r, err := batchedMatmul(a.To(ir.Float64), b.To(ir.Float64), a.Shape[:1])
		if err != nil {
			return nil, err
		}
		return one(r.To(dt)), nil
	case a.Rank() == 2 && b.Rank() == 3:
		if err := need(); err != nil {
			return nil, err
		}
		m, k, n := a.Shape[0], a.Shape[1], b.Shape[2]
		if b.Shape[1] != k || offs.Numel() != b.Shape[0] {
			return nil, fmt.Errorf("_grouped_mm: %v × %v with %d groups", a.Shape, b.Shape, offs.Numel())
		}
		groups, err := groupBounds(offs, m)
		if err != nil {
			return nil, err
		}
		res := make([]float64, m*n)
		for g, r := range groups {
			p := mm2(av[r[0]*k:r[1]*k], bv[int64(g)*k*n:int64(g+1)*k*n], r[1]-r[0], k, n)
			copy(res[r[0]*n:], p)
		}
		return one(FromFloat64(dt, []int64{m, n}, res)), nil
	case a.Rank() == 3 && b.Rank() == 2:
		if err := need(); err != nil {
			return nil, err
		}
		m, k, n := a.Shape[1], a.Shape[2], b.Shape[1]
		if b.Shape[0] != k || offs.Numel() != a.Shape[0] {
			return nil, fmt.Errorf("_grouped_mm: %v × %v with %d groups", a.Shape, b.Shape, offs.Numel())
		}
		groups, err := groupBounds(offs, n)
		if err != nil {
			return nil, err
		}
		res := make([]float64, m*n)
		for g, r := range groups {
			w := r[1] - r[0]
			cols := make([]float64, k*w)
			for i := int64(0); i < k; i++ {
				copy(cols[i*w:(i+1)*w], bv[i*n+r[0]:i*n+r[1]])
			}
			p := mm2(av[int64(g)*m*k:int64(g+1)*m*k], cols, m, k, w)
			for i := int64(0); i < m; i++ {
				copy(res[i*n+r[0]:i*n+r[1]], p[i*w:(i+1)*w])
			}
		}
		return one(FromFloat64(dt, []int64{m, n}, res)), nil
	case a.Rank() == 2 && b.Rank() == 2:
		if err := need(); err != nil {
			return nil, err
		}
		m, k, n := a.Shape[0], a.Shape[1], b.Shape[1]
		if b.Shape[0] != k {
			return nil, fmt.Errorf("_grouped_mm: %v × %v", a.Shape, b.Shape)
		}
		groups, err := groupBounds(offs, k)
		if err != nil {
			return nil, err
		}
		res := make([]float64, int64(len(groups))*m*n)
		for g, r := range groups {
			w := r[1] - r[0]
			rows := make([]float64, m*w)
			for i := int64(0); i < m; i++ {
				copy(rows[i*w:(i+1)*w], av[i*k+r[0]:i*k+r[1]])
			}
			copy(res[int64(g)*m*n:], mm2(rows, bv[r[0]*n:r[1]*n], m, w, n))
		}
		return one(FromFloat64(dt, []int64{int64(len(groups)), m, n}, res)), nil
	}
	return nil, fmt.Errorf("_grouped_mm expects 2-D or 3-D operands, got %v and %v", a.Shape, b.Shape)
}

// kGroupedMmFallback: input [T, K] rows grouped by cumulative offs, each
// group multiplied by its expert's weight [K, N]; rows past the last offset
// stay zero.
func kGroupedMmFallback(c *call) ([]Value, error) {
	x, err := c.tensor("input")
	if err != nil {
		return nil, err
	}
	w, err := c.tensor("weight")
	if err != nil {
		return nil, err
	}
	offs, err := c.tensor("offs")
	if err != nil {
		return nil, err
	}
	if x.Rank() != 2 || w.Rank() != 3 || w.Shape[1] != x.Shape[1] || offs.Numel() != w.Shape[0] {
		return nil, fmt.Errorf("grouped_mm_fallback expects input [T, K], weight [E, K, N] and E offsets, got %v, %v, %v", x.Shape, w.Shape, offs.Shape)
	}
	t, k, n := x.Shape[0], x.Shape[1], w.Shape[2]
	groups, err := groupBounds(offs, t)
	if err != nil {
		return nil, err
	}
	xv, wv := x.To(ir.Float64).Contiguous().floats(), w.To(ir.Float64).Contiguous().floats()
	res := make([]float64, t*n)
	for g, r := range groups {
		copy(res[r[0]*n:], mm2(xv[r[0]*k:r[1]*k], wv[int64(g)*k*n:int64(g+1)*k*n], r[1]-r[0], k, n))
	}
	return one(FromFloat64(x.DType, []int64{t, n}, res)), nil
}

// kVarlenAttn is attention over packed sequences: query [T, H, E], key and
// value [Tk, Hkv, *] with cumulative sequence boundaries; each sequence
// attends to its own keys. Causal masking needs equal query and key lengths
// (the top-left and bottom-right conventions agree then); sliding windows
// are not supported.
func kVarlenAttn(c *call) ([]Value, error) {
	q, err := c.tensor("query")
	if err != nil {
		return nil, err
	}
	k, err := c.tensor("key")
	if err != nil {
		return nil, err
	}
	v, err := c.tensor("value")
	if err != nil {
		return nil, err
	}
	cq, err := c.tensor("cu_seq_q")
	if err != nil {
		return nil, err
	}
	ck, err := c.tensor("cu_seq_k")
	if err != nil {
		return nil, err
	}
	causal, err := c.bool("is_causal")
	if err != nil {
		return nil, err
	}
	if win, ok, err := c.optInts("window_size"); err != nil {
		return nil, err
	} else if ok && (len(win) != 2 || win[0] != -1 || win[1] != -1) {
		return nil, fmt.Errorf("_varlen_attn with a sliding window %v is not supported by the interpreter", win)
	}
	if q.Rank() != 3 || k.Rank() != 3 || v.Rank() != 3 {
		return nil, fmt.Errorf("_varlen_attn expects packed 3-D query, key and value")
	}
	scale, ok, err := c.optFloat("scale")
	if err != nil {
		return nil, err
	}
	if !ok {
		scale = 1 / math.Sqrt(float64(q.Shape[2]))
	}
	qb, kb := cq.ints(), ck.ints()
	if len(qb) != len(kb) || len(qb) < 1 {
		return nil, fmt.Errorf("cu_seq_q and cu_seq_k must have the same length (got %d and %d)", len(qb), len(kb))
	}
	h, tq, ev := q.Shape[1], q.Shape[0], v.Shape[2]
	out := NewTensor(ir.Float64, tq, h, ev)
	lse := NewTensor(ir.Float32, h, tq)
	for b := 0; b+1 < len(qb); b++ {
		if qb[b] > qb[b+1] || kb[b] > kb[b+1] || qb[b+1] > tq || kb[b+1] > k.Shape[0] {
			return nil, domainErrorf("cumulative sequence lengths %v / %v are out of range", qb, kb)
		}
		if causal && qb[b+1]-qb[b] != kb[b+1]-kb[b] {
			return nil, fmt.Errorf("causal _varlen_attn with different query and key lengths is not supported by the interpreter")
		}
		qs, qe, ks, ke := qb[b], qb[b+1], kb[b], kb[b+1]
		sq, err := sliceView(q, 0, &qs, &qe, 1)
		if err != nil {
			return nil, err
		}
		sk, err := sliceView(k, 0, &ks, &ke, 1)
		if err != nil {
			return nil, err
		}
		sv, err := sliceView(v, 0, &ks, &ke, 1)
		if err != nil {
			return nil, err
		}
		// [L, H, E] → [H, L, E] for attention per head.
		tq, _ := transposeView(sq, 0, 1)
		tk, _ := transposeView(sk, 0, 1)
		tv, _ := transposeView(sv, 0, 1)
		o, l, err := attention(c.m, tq, tk, tv, nil, causal, scale, 0, true)
		if err != nil {
			return nil, err
		}
		ob, _ := transposeView(o.To(ir.Float64), 0, 1) // [L, H, Ev]
		dst, err := sliceView(out, 0, &qs, &qe, 1)
		if err != nil {
			return nil, err
		}
		copyInto(dst, ob)
		ldst, err := sliceView(lse, 1, &qs, &qe, 1)
		if err != nil {
			return nil, err
		}
		copyInto(ldst, l)
	}
	return []Value{out.To(q.DType), lse, NewTensor(ir.Uint64, 2)}, nil
}
