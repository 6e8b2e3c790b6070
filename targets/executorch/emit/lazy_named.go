package emit

import (
	"encoding/hex"

	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/targets/executorch/pte"
	"github.com/fxport/fxport/targets/executorch/xnnpack"
)

// Delegates' named data and streaming. The XNNPACK serializer works on the
// bytes of the constants it is given (it permutes filters to OHWI, packs
// quantized weights and names every constant by the sha256 of the bytes it
// stores), so delegated weights are read into memory while their partition
// is serialized. Afterwards, a named-data entry whose key is the sha256 of
// a delegated weight as stored — the weight is used raw — is written from
// the weight's source instead of the serializer's copy, so raw delegated
// weights are not held until the file is written. Transformed constants
// (permuted filters, quantized packing, anything whose bytes differ from
// its weight's) stay in memory, one buffer per distinct constant, until the
// program is written.

// rawDelegateWeights returns the lazy bytes of every constant placeholder
// of the main graph that a delegate call uses, keyed like named data (the
// lowercase hex sha256), for the sizes in want only (weights of other sizes
// cannot match a named entry and are not read).
func (m *method) rawDelegateWeights(want map[uint64]bool) map[string]pte.Lazy {
	out := map[string]pte.Lazy{}
	for _, v := range m.p.Main.Inputs {
		spec, ok := m.constantSpec(v)
		if !ok || !usedByDelegate(v) {
			continue
		}
		w := m.p.Weight(spec.Target)
		if w == nil {
			continue
		}
		if n, err := weightSize(w); err != nil || !want[uint64(n)] {
			continue
		}
		l, err := weightLazy(w)
		if err != nil {
			continue // the serializer's copy is used
		}
		out[hex.EncodeToString(l.Digest[:])] = l
	}
	return out
}

// usedByDelegate reports a value some delegate call takes as an operand.
func usedByDelegate(v *ir.Value) bool {
	for _, u := range v.Uses() {
		if !u.IsReturn() && u.Op == xnnpack.OpCallDelegate {
			return true
		}
	}
	return false
}

// lazyNamedSegments replaces the in-memory segments of named data that
// are raw delegated weights (segs[first:], in the order of m.dels.named)
// with one lazy piece over the weight's source.
func (m *method) lazyNamedSegments(segs []pte.Segment, first int) {
	want := map[uint64]bool{}
	for _, nd := range m.dels.named {
		want[uint64(len(nd.Data))] = true
	}
	raw := m.rawDelegateWeights(want)
	for i, nd := range m.dels.named {
		if l, ok := raw[nd.Key]; ok && l.Size == uint64(len(nd.Data)) {
			segs[first+i] = pte.Segment{Size: l.Size, Pieces: []pte.Piece{{Lazy: l}}}
		}
	}
}

// namedDataEntry is the .ptd entry of named data key held in segment s,
// lazy when the segment is.
func namedDataEntry(key string, s pte.Segment) (pte.NamedTensor, error) {
	e := pte.NamedTensor{Key: key, Alignment: constantAlignment}
	if s.Pieces == nil {
		e.Data = s.Data
		return e, nil
	}
	l, err := pte.SegmentLazy("named data "+key, s)
	if err != nil {
		return e, err
	}
	e.Lazy = &l
	return e, nil
}
