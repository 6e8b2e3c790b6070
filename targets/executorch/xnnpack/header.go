package xnnpack

import "encoding/binary"

// XH00 header (pte-format.md §8.1): 4 zero bytes, "XH00", u16 header
// length 30, u32 flatbuffer offset, u32 flatbuffer size, u32 constant data
// offset, u64 constant data size; the graph starts at 32 and is padded to 16.
const (
	headerLength = 30
	graphOffset  = 32
)

// wrap puts the XH00 header in front of graph (no inline constant data:
// constants are named data).
func wrap(graph []byte) []byte {
	padded := (len(graph) + 15) / 16 * 16
	out := make([]byte, graphOffset+padded)
	copy(out[4:8], "XH00")
	binary.LittleEndian.PutUint16(out[8:], headerLength)
	binary.LittleEndian.PutUint32(out[10:], graphOffset)
	binary.LittleEndian.PutUint32(out[14:], uint32(len(graph)))
	binary.LittleEndian.PutUint32(out[18:], uint32(graphOffset+padded))
	binary.LittleEndian.PutUint64(out[22:], 0)
	copy(out[graphOffset:], graph)
	return out
}
