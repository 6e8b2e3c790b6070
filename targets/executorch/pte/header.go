package pte

import (
	"encoding/binary"
	"fmt"
)

// ExtendedHeader is the optional "eh00" block that exir inserts at offset 8
// of a .pte, after the file identifier.
type ExtendedHeader struct {
	Length            uint32 // 32, or 24 in files from releases ≤ 0.7
	ProgramSize       uint64 // bytes of the flatbuffer including this header
	SegmentBaseOffset uint64 // file offset of the first segment
	SegmentDataSize   uint64 // 0 when Length < 32
}

const (
	programMagic   = "ET12"
	extHeaderMagic = "eh00"
	ptdMagic       = "FT01"
	ptdHeaderMagic = "FH01"
	bundledMagic   = "BP08"
	xnnHeaderMagic = "XH00"
)

// parseExtendedHeader returns the eh00 header of data, nil when absent.
func parseExtendedHeader(data []byte) (*ExtendedHeader, error) {
	return parseExtendedHeaderSized(data, uint64(len(data)))
}

// parseExtendedHeaderSized parses the eh00 header at the start of data, a
// prefix (at least the header) of a file of size bytes.
func parseExtendedHeaderSized(data []byte, size uint64) (*ExtendedHeader, error) {
	if len(data) < 16 || string(data[8:12]) != extHeaderMagic {
		return nil, nil
	}
	h := &ExtendedHeader{Length: binary.LittleEndian.Uint32(data[12:])}
	if h.Length < 24 {
		return nil, fmt.Errorf("eh00 header: length %d is under 24", h.Length)
	}
	if uint64(len(data)) < 8+uint64(h.Length) {
		return nil, fmt.Errorf("eh00 header: length %d runs past the %d-byte file", h.Length, size)
	}
	h.ProgramSize = binary.LittleEndian.Uint64(data[16:])
	h.SegmentBaseOffset = binary.LittleEndian.Uint64(data[24:])
	if h.Length >= 32 {
		h.SegmentDataSize = binary.LittleEndian.Uint64(data[32:])
	}
	switch {
	case h.ProgramSize < 8+uint64(h.Length) || h.ProgramSize > size:
		return nil, fmt.Errorf("eh00 header: program_size %d is outside [%d, %d]", h.ProgramSize, 8+h.Length, size)
	case h.SegmentBaseOffset < h.ProgramSize && h.SegmentBaseOffset != 0:
		return nil, fmt.Errorf("eh00 header: segment_base_offset %d is inside the %d-byte program", h.SegmentBaseOffset, h.ProgramSize)
	case h.SegmentBaseOffset > size:
		return nil, fmt.Errorf("eh00 header: segment_base_offset %d is past the end of the %d-byte file", h.SegmentBaseOffset, size)
	case h.Length >= 32 && h.SegmentDataSize > size-h.SegmentBaseOffset:
		return nil, fmt.Errorf("eh00 header: segment_data_size %d runs past the end of the file (segment base %d, file %d bytes)", h.SegmentDataSize, h.SegmentBaseOffset, size)
	}
	return h, nil
}

// XNNHeader is the "XH00" wrapper in front of an XNNPACK delegate payload.
type XNNHeader struct {
	Length             uint16 // 30
	FlatbufferOffset   uint32
	FlatbufferSize     uint32
	ConstantDataOffset uint32
	ConstantDataSize   uint64
}

func parseXNNHeader(data []byte) (*XNNHeader, error) {
	if len(data) < 8 || string(data[4:8]) != xnnHeaderMagic {
		return nil, nil
	}
	if len(data) < 30 {
		return nil, fmt.Errorf("XH00 header: payload of %d bytes is shorter than the 30-byte header", len(data))
	}
	h := &XNNHeader{
		Length:             binary.LittleEndian.Uint16(data[8:]),
		FlatbufferOffset:   binary.LittleEndian.Uint32(data[10:]),
		FlatbufferSize:     binary.LittleEndian.Uint32(data[14:]),
		ConstantDataOffset: binary.LittleEndian.Uint32(data[18:]),
		ConstantDataSize:   binary.LittleEndian.Uint64(data[22:]),
	}
	size := uint64(len(data))
	switch {
	case h.Length < 30:
		return nil, fmt.Errorf("XH00 header: length %d is under 30", h.Length)
	case uint64(h.FlatbufferOffset)+uint64(h.FlatbufferSize) > size:
		return nil, fmt.Errorf("XH00 header: flatbuffer [%d, +%d) runs past the %d-byte payload", h.FlatbufferOffset, h.FlatbufferSize, size)
	case uint64(h.ConstantDataOffset)+h.ConstantDataSize > size || uint64(h.ConstantDataOffset)+h.ConstantDataSize < h.ConstantDataSize:
		return nil, fmt.Errorf("XH00 header: constant data [%d, +%d) runs past the %d-byte payload", h.ConstantDataOffset, h.ConstantDataSize, size)
	}
	return h, nil
}

// FlatTensorHeader is the "FH01" header of a .ptd file.
type FlatTensorHeader struct {
	Length            uint32 // 40
	FlatbufferOffset  uint64
	FlatbufferSize    uint64
	SegmentBaseOffset uint64
	SegmentDataSize   uint64
}

func parseFlatTensorHeader(data []byte) (*FlatTensorHeader, error) {
	return parseFlatTensorHeaderSized(data, uint64(len(data)))
}

// parseFlatTensorHeaderSized parses the FH01 header at the start of data, a
// prefix (at least the header) of a file of size bytes.
func parseFlatTensorHeaderSized(data []byte, size uint64) (*FlatTensorHeader, error) {
	if len(data) < 16 || string(data[8:12]) != ptdHeaderMagic {
		return nil, nil
	}
	if len(data) < 48 {
		return nil, fmt.Errorf("FH01 header: file of %d bytes is shorter than the header", len(data))
	}
	h := &FlatTensorHeader{
		Length:            binary.LittleEndian.Uint32(data[12:]),
		FlatbufferOffset:  binary.LittleEndian.Uint64(data[16:]),
		FlatbufferSize:    binary.LittleEndian.Uint64(data[24:]),
		SegmentBaseOffset: binary.LittleEndian.Uint64(data[32:]),
		SegmentDataSize:   binary.LittleEndian.Uint64(data[40:]),
	}
	switch {
	case h.Length < 40:
		return nil, fmt.Errorf("FH01 header: length %d is under 40", h.Length)
	case h.FlatbufferOffset > size || h.FlatbufferSize > size-h.FlatbufferOffset:
		return nil, fmt.Errorf("FH01 header: flatbuffer [%d, +%d) runs past the %d-byte file", h.FlatbufferOffset, h.FlatbufferSize, size)
	case h.SegmentBaseOffset > size || h.SegmentDataSize > size-h.SegmentBaseOffset:
		return nil, fmt.Errorf("FH01 header: segment data [%d, +%d) runs past the %d-byte file", h.SegmentBaseOffset, h.SegmentDataSize, size)
	}
	return h, nil
}
