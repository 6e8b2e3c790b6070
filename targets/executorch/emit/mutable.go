package emit

import "github.com/fxport/fxport/targets/executorch/pte"

// mutableData accumulates the mutable-data segment: the initial state of
// mutable buffers (planned tensors with data_buffer_idx > 0), concatenated
// without inner alignment (pte-format.md §1). offsets[0] is the reserved
// placeholder, as in the constant segment; buffers are not deduplicated
// (each has its own planned storage, so each keeps its own slot). Like the
// constants, the bytes stay in the weights' sources until pte.Write.
type mutableData struct {
	pieces  []pte.Piece
	size    uint64
	offsets []uint64
}

func newMutableData() *mutableData { return &mutableData{offsets: []uint64{0}} }

// add appends the bytes of l and returns their data_buffer_idx.
func (d *mutableData) add(l pte.Lazy) uint32 {
	d.offsets = append(d.offsets, d.size)
	d.pieces = append(d.pieces, pte.Piece{Offset: d.size, Lazy: l})
	d.size += l.Size
	return uint32(len(d.offsets) - 1)
}

// segment is the mutable-data segment.
func (d *mutableData) segment() pte.Segment {
	return pte.Segment{Size: d.size, Pieces: d.pieces}
}

// empty reports whether no mutable buffer was added.
func (d *mutableData) empty() bool { return len(d.offsets) == 1 }
