package emit

import (
	"github.com/fxport/fxport/targets/executorch/pte"
	"github.com/fxport/fxport/targets/executorch/xnnpack"
)

// Delegates' named data and streaming. The XNNPACK serializer holds no
// constant's bytes: each xnnpack.Named it returns carries a lazy recipe
// (the weight's source for a raw constant; for a transformed one — a
// filter permuted to OHWI, a transposed linear weight, packed or quantized
// bytes — the transform recomputed from the source) with the sha256 that
// is its key, checked as the bytes are written. Each distinct key becomes
// one segment made of that single lazy piece, so pte.Write copies the
// constants one at a time and a .ptd entry (external.go) takes the piece
// as it is.

// namedSegment is the segment of a delegate's named constant: one lazy
// piece over the whole of it.
func namedSegment(nd xnnpack.Named) pte.Segment {
	return pte.Segment{Size: nd.Data.Size, Pieces: []pte.Piece{{Lazy: nd.Data}}}
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
