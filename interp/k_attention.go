package interp

import (
	"fmt"
	"math"

	"github.com/fxport/fxport/ir"
)

// Scaled dot-product attention (torch's math path) and embedding bags.

func init() {
	register(kSDPA(false), ir.OpAtenScaledDotProductAttention)
	register(kSDPA(true), ir.OpAten_ScaledDotProductFlashAttentionForCpu)
	register(kEmbeddingBag, ir.OpAten_EmbeddingBag, ir.OpAten_EmbeddingBagForwardOnly)
}

// attention computes softmax(q·kᵀ·scale + mask)·v over the last two dims,
// with broadcast batch dims. Rows whose every score is masked give zeros.
// It also returns the log-sum-exp of each row of scores.
func attention(m *machine, q, k, v, mask *Tensor, causal bool, scale float64, dropout float64, gqa bool) (*Tensor, *Tensor, error) {
	if q.Rank() < 2 || k.Rank() < 2 || v.Rank() < 2 {
		return nil, nil, fmt.Errorf("attention expects query, key and value of rank >= 2")
	}
	dt := q.DType
	if k.DType != dt || v.DType != dt || !isFloatDT(dt) {
		return nil, nil, fmt.Errorf("expected query, key and value to have the same float dtype, got %s, %s, %s", q.DType, k.DType, v.DType)
	}
	if gqa && q.Rank() >= 3 && k.Rank() >= 3 {
		hq, hk := q.Shape[q.Rank()-3], k.Shape[k.Rank()-3]
		if hk > 0 && hq != hk {
			if hq%hk != 0 {
				return nil, nil, fmt.Errorf("number of heads in key/value (%d) must divide the number of heads in query (%d)", hk, hq)
			}
			rep := hq / hk
			idx := make([]int64, hq)
			for i := range idx {
				idx[i] = int64(i) / rep
			}
			var err error
			if k, err = indexSelect(k, k.Rank()-3, idx); err != nil {
				return nil, nil, err
			}
			if v, err = indexSelect(v, v.Rank()-3, idx); err != nil {
				return nil, nil, err
			}
		}
	}
	L, E := q.Shape[q.Rank()-2], q.Shape[q.Rank()-1]
	S := k.Shape[k.Rank()-2]
	if k.Shape[k.Rank()-1] != E || v.Shape[v.Rank()-2] != S {
		return nil, nil, fmt.Errorf("attention shapes do not match: query %v, key %v, value %v", q.Shape, k.Shape, v.Shape)
	}
	kt, _ := transposeView(k.To(ir.Float64), -2, -1)
	scores, err := matmul(q.To(ir.Float64), kt)
	if err != nil {
		return nil, nil, err
	}
	batch := scores.Shape[:scores.Rank()-2]
	sv := scores.Contiguous().floats()
	for i := range sv {
		sv[i] *= scale
	}
	var maskF []float64
	var maskB []int64
	if mask != nil {
		me, err := expandTo(mask, scores.Shape)
		if err != nil {
			return nil, nil, fmt.Errorf("attn_mask: %w", err)
		}
		if mask.DType == ir.Bool {
			maskB = me.Clone().ints()
		} else {
			maskF = me.To(ir.Float64).Clone().floats()
		}
	}
	rowsN := numel(batch) * L
	probs := make([]float64, len(sv))
	lse := make([]float64, rowsN)
	row := make([]float64, S)
	for r := int64(0); r < rowsN; r++ {
		i := r % L
		for j := int64(0); j < S; j++ {
			x := sv[r*S+j]
			switch {
			case causal && j > i:
				x = math.Inf(-1)
			case maskB != nil && maskB[r*S+j] == 0:
				x = math.Inf(-1)
			case maskF != nil:
				x += maskF[r*S+j]
			}
			row[j] = x
		}
		lse[r] = logSumExp(row)
		softmaxRow(row, probs[r*S:(r+1)*S], false, true)
		if dropout > 0 {
			for j := r * S; j < (r+1)*S; j++ {
				if m.drawFloat() < dropout {
					probs[j] = 0
				} else {
					probs[j] /= 1 - dropout
				}
			}
		}
	}
	p := FromFloat64(ir.Float64, scores.Shape, probs)
	out, err := matmul(p, v.To(ir.Float64))
	if err != nil {
		return nil, nil, err
	}
	return out.To(dt), FromFloat64(ir.Float32, append(append([]int64{}, batch...), L), lse), nil
}

func kSDPA(flash bool) kernel {
	return func(c *call) ([]Value, error) {
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
		mask, err := c.optTensor("attn_mask")
		if err != nil {
			return nil, err
		}
		drop, err := c.float("dropout_p")
		if err != nil {
			return nil, err
		}
		causal, err := c.bool("is_causal")
		if err != nil {
			return nil, err
		}
		if causal && mask != nil {
			return nil, fmt.Errorf("_scaled_dot_product_attention: explicit attn_mask should not be set when is_causal=True")
		}
		scale, ok, err := c.optFloat("scale")
		if err != nil {
			return nil, err
		}
		if !ok {
			scale = 1 / math.Sqrt(float64(q.Shape[q.Rank()-1]))
		}
		gqa := false
		if c.has("enable_gqa") {
			if gqa, err = c.bool("enable_gqa"); err != nil {
				return nil, err
			}
		}
		out, lse, err := attention(c.m, q, k, v, mask, causal, scale, drop, gqa)
		if err != nil {
			return nil, err
		}
		if flash {
			return []Value{out, lse}, nil
		}
		return one(out), nil
	}
}

// kEmbeddingBag computes bags of embeddings (sum, mean or max) and torch's
// auxiliary results: offset2bag, bag_size and max_indices.
func kEmbeddingBag(c *call) ([]Value, error) {
	w, err := c.tensor("weight")
	if err != nil {
		return nil, err
	}
	ix, err := c.tensor("indices")
	if err != nil {
		return nil, err
	}
	offs, err := c.tensor("offsets")
	if err != nil {
		return nil, err
	}
	mode, err := c.int("mode")
	if err != nil {
		return nil, err
	}
	psw, err := c.optTensor("per_sample_weights")
	if err != nil {
		return nil, err
	}
	includeLast, err := c.bool("include_last_offset")
	if err != nil {
		return nil, err
	}
	pad, err := c.int("padding_idx")
	if err != nil {
		return nil, err
	}
	if w.Rank() != 2 {
		return nil, fmt.Errorf("embedding_bag: weight must be 2-D, got %v", w.Shape)
	}
	if mode < 0 || mode > 2 {
		return nil, fmt.Errorf("embedding_bag: mode must be 0 (sum), 1 (mean) or 2 (max), got %d", mode)
	}
	if psw != nil && mode != 0 {
		return nil, fmt.Errorf("embedding_bag: per_sample_weights is only supported for mode='sum'")
	}
	iv := ix.Contiguous().ints()
	var ov []int64
	if ix.Rank() == 2 { // fixed-size bags: offsets are implied
		bagLen := ix.Shape[1]
		for b := int64(0); b < ix.Shape[0]; b++ {
			ov = append(ov, b*bagLen)
		}
	} else {
		ov = offs.ints()
	}
	nBags := int64(len(ov))
	if includeLast && ix.Rank() != 2 {
		nBags--
	}
	if nBags < 0 {
		nBags = 0
	}
	D, N := w.Shape[1], int64(len(iv))
	wv := w.To(ir.Float64).Contiguous().floats()
	var pv []float64
	if psw != nil {
		pv = psw.To(ir.Float64).Contiguous().floats()
	}
	out := make([]float64, nBags*D)
	offset2bag := make([]int64, N)
	bagSize := make([]int64, nBags)
	maxIdx := make([]int64, nBags*D)
	for b := int64(0); b < nBags; b++ {
		start := ov[b]
		end := N
		if b+1 < int64(len(ov)) {
			end = ov[b+1]
		}
		if start < 0 || start > end || end > N {
			return nil, fmt.Errorf("embedding_bag: offsets %v are not non-decreasing within [0, %d]", ov, N)
		}
		row := out[b*D : (b+1)*D]
		first := true
		count := int64(0)
		for j := start; j < end; j++ {
			offset2bag[j] = b
			i := iv[j]
			if i < 0 || i >= w.Shape[0] {
				return nil, domainErrorf("embedding_bag: index %d out of range for %d embeddings", i, w.Shape[0])
			}
			if i == pad {
				continue
			}
			count++
			for d := int64(0); d < D; d++ {
				x := wv[i*D+d]
				switch mode {
				case 2:
					if first || x > row[d] {
						row[d], maxIdx[b*D+d] = x, i
					}
				default:
					if pv != nil {
						x *= pv[j]
					}
					row[d] += x
				}
			}
			first = false
		}
		bagSize[b] = count
		if mode == 1 && count > 0 {
			for d := range row {
				row[d] /= float64(count)
			}
		}
		if mode != 2 {
			for d := range row {
				maxIdx[b*D+int64(d)] = 0
			}
		}
	}
	// As torch's CPU kernel: sum zeroes bag_size, and sum and mean return
	// a copy of bag_size as max_indices.
	if mode == 0 {
		clear(bagSize)
	}
	// torch's CPU fast path for sum (f32, f16 or bf16 weights, no
	// padding_idx) fills no offset2bag: it returns it empty.
	if mode == 0 && pad < 0 && (w.DType == ir.Float32 || w.DType == ir.Float16 || w.DType == ir.BFloat16) {
		offset2bag = offset2bag[:0]
	}
	maxShape := []int64{nBags, D}
	if mode != 2 {
		maxShape = []int64{nBags}
		maxIdx = append([]int64(nil), bagSize...)
	}
	return []Value{
		FromFloat64(w.DType, []int64{nBags, D}, out),
		FromInt64(ix.DType, []int64{int64(len(offset2bag))}, offset2bag),
		FromInt64(ix.DType, []int64{nBags}, bagSize),
		FromInt64(ix.DType, maxShape, maxIdx),
	}, nil
}
