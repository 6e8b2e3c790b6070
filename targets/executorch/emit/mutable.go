package emit

// mutableData accumulates the mutable-data segment: the initial state of
// mutable buffers (planned tensors with data_buffer_idx > 0), concatenated
// without inner alignment (pte-format.md §1). offsets[0] is the reserved
// placeholder, as in the constant segment; buffers are not deduplicated
// (each has its own planned storage, so each keeps its own slot).
type mutableData struct {
	data    []byte
	offsets []uint64
}

func newMutableData() *mutableData { return &mutableData{offsets: []uint64{0}} }

// add appends b and returns its data_buffer_idx.
func (d *mutableData) add(b []byte) uint32 {
	d.offsets = append(d.offsets, uint64(len(d.data)))
	d.data = append(d.data, b...)
	return uint32(len(d.offsets) - 1)
}

// empty reports whether no mutable buffer was added.
func (d *mutableData) empty() bool { return len(d.offsets) == 1 }
