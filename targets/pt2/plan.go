package pt2

import (
	"fmt"
	"math/bits"
	"strconv"

	"github.com/fxport/fxport/internal/pt2schema"
	"github.com/fxport/fxport/ir"
)

// payload is one raw storage record: the bytes of a source that one or more
// weights view.
type payload struct {
	name  string // weight_<i> or tensor_<i>
	src   ir.WeightSource
	first string // the first weight that views it, for errors
}

// weightPlan assigns every weight to a payload record and a config entry.
type weightPlan struct {
	weights, constants             []*payload
	weightsConfig, constantsConfig pt2schema.PayloadConfig
}

// planWeights sorts the weights into the weights config (parameters,
// persistent buffers, weights the signature does not mention) and the
// constants config (lifted constants, non-persistent buffers), and groups
// weights that share a source into one payload, so aliasing views survive.
// Weights without a source get an empty payload each.
func planWeights(p *ir.Program) (*weightPlan, error) {
	isParam := map[string]bool{}
	isConst := map[string]bool{}
	for _, in := range p.Signature.Inputs {
		switch {
		case in.Kind == ir.Parameter:
			isParam[in.Target] = true
		case in.Kind == ir.ConstantTensor, in.Kind == ir.Buffer && !in.Persistent:
			isConst[in.Target] = true
		}
	}
	plan := &weightPlan{
		weightsConfig:   pt2schema.PayloadConfig{Entries: []pt2schema.PayloadEntry{}},
		constantsConfig: pt2schema.PayloadConfig{Entries: []pt2schema.PayloadEntry{}},
	}
	bySource := [2]map[string]*payload{{}, {}}
	for _, w := range p.Weights {
		part := 0
		prefix := "weight_"
		list, cfg := &plan.weights, &plan.weightsConfig
		if isConst[w.Name] && !isParam[w.Name] {
			part, prefix, list, cfg = 1, "tensor_", &plan.constants, &plan.constantsConfig
		}
		var pl *payload
		if w.Source != nil {
			pl = bySource[part][w.Source.String()]
		}
		if pl == nil {
			pl = &payload{name: prefix + strconv.Itoa(len(*list)), src: w.Source, first: w.Name}
			*list = append(*list, pl)
			if w.Source != nil {
				bySource[part][w.Source.String()] = pl
			}
		}
		tm, err := weightMeta(w, pl)
		if err != nil {
			return nil, fmt.Errorf("weight %q: %v", w.Name, err)
		}
		tm.RequiresGrad = isParam[w.Name]
		cfg.Entries = append(cfg.Entries, pt2schema.PayloadEntry{FQN: w.Name, Meta: pt2schema.PayloadMeta{
			PathName: pl.name, IsParam: isParam[w.Name], TensorMeta: tm,
		}})
	}
	return plan, nil
}

// weightMeta is the tensor_meta of a weight, after checking that its view
// (shape, strides, storage offset) stays inside its payload.
func weightMeta(w *ir.Weight, pl *payload) (*pt2schema.TensorMeta, error) {
	if w.Type == nil {
		return nil, fmt.Errorf("no type")
	}
	shape, ok := w.Type.StaticShape()
	if !ok {
		return nil, fmt.Errorf("symbolic shape %s", w.Type)
	}
	code := w.Type.DType.PT2Code()
	if code < 0 {
		return nil, fmt.Errorf("dtype %s has no torch.export code", w.Type.DType)
	}
	dev, err := deviceOf(w.Type.Device)
	if err != nil {
		return nil, err
	}
	strides := w.Strides
	if strides == nil {
		strides = make([]int64, len(shape))
		acc := int64(1)
		for i := len(shape) - 1; i >= 0; i-- {
			strides[i] = acc
			acc *= max(shape[i], 1)
		}
	}
	if len(strides) != len(shape) {
		return nil, fmt.Errorf("%d strides for %d dims", len(strides), len(shape))
	}
	if w.StorageOffset < 0 {
		return nil, fmt.Errorf("negative storage offset %d", w.StorageOffset)
	}
	if pl.src != nil {
		size := pl.src.Size()
		elem := int64(w.Type.DType.Size())
		if size%elem != 0 {
			return nil, fmt.Errorf("its source has %d bytes, not a multiple of the %d-byte %s", size, elem, w.Type.DType)
		}
		last, numel := uint64(w.StorageOffset), uint64(1)
		for i, d := range shape {
			if strides[i] < 0 || d < 0 {
				return nil, fmt.Errorf("negative size or stride")
			}
			hi, lo := bits.Mul64(numel, uint64(d))
			if hi != 0 {
				return nil, fmt.Errorf("shape %v overflows", shape)
			}
			numel = lo
			if d > 0 {
				hi, lo = bits.Mul64(uint64(d-1), uint64(strides[i]))
				if hi != 0 || last+lo < last {
					return nil, fmt.Errorf("strides %v overflow", strides)
				}
				last += lo
			}
		}
		if numel > 0 && last >= uint64(size/elem) {
			return nil, fmt.Errorf("its view reaches element %d but its source holds %d elements", last, size/elem)
		}
	}
	m := &pt2schema.TensorMeta{DType: int64(code), Device: dev, Layout: 7, StorageOffset: pt2schema.SymInt{Int: w.StorageOffset}}
	for i := range shape {
		m.Sizes = append(m.Sizes, pt2schema.SymInt{Int: shape[i]})
		m.Strides = append(m.Strides, pt2schema.SymInt{Int: strides[i]})
	}
	return m, nil
}
