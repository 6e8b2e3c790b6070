package pte

import (
	"bufio"
	"fmt"
	"io"

	"github.com/fxport/fxport/internal/inputfile"
	etfb "github.com/fxport/fxport/targets/executorch/fb/executorch_flatbuffer"
	ftfb "github.com/fxport/fxport/targets/executorch/fb/flat_tensor_flatbuffer"
	"github.com/fxport/fxport/targets/executorch/internal/fbs"
)

// DataFile is a decoded flat-tensor data file (.ptd).
type DataFile struct {
	Name    string
	Size    int
	Header  *FlatTensorHeader // nil when the file has no FH01 header
	Version uint32
	Tensors []NamedTensor
}

// NamedTensor is one named_data entry of a .ptd with its bytes.
type NamedTensor struct {
	Key        string
	Segment    uint32
	ScalarType etfb.ScalarType
	Sizes      []int32
	DimOrder   []byte
	HasLayout  bool
	Data       []byte
	// Alignment is the entry's own alignment when encoding (0: none beyond
	// the file's segment alignment); DecodePTD leaves it 0.
	Alignment uint64
	// Lazy, when set instead of Data (writing only), produces the entry's
	// bytes on demand (WritePTD streams them; EncodePTDWith reads them).
	Lazy *Lazy
}

// ReadPTD reads and decodes the .ptd file at path.
func ReadPTD(path string) (*DataFile, error) {
	data, err := inputfile.ReadFile(path, 0)
	if err != nil {
		return nil, err
	}
	return DecodePTD(path, data)
}

// DecodePTD decodes a .ptd held in data; name labels errors.
func DecodePTD(name string, data []byte) (d *DataFile, err error) {
	defer func() {
		if r := recover(); r != nil {
			d, err = nil, fmt.Errorf("%s: malformed data file (decoder panic: %v)", name, r)
		}
	}()
	if err := loadSchemas(); err != nil {
		return nil, err
	}
	if id := fbs.Identifier(data); id != ptdMagic {
		return nil, fmt.Errorf("%s: not a .ptd: file identifier (bytes 4-8) is %q, want %q", name, id, ptdMagic)
	}
	h, err := parseFlatTensorHeader(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	fb := data
	if h != nil {
		fb = data[:h.FlatbufferOffset+h.FlatbufferSize]
	}
	if err := schemas.flatTensor.Verify(fb, ptdMagic); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	ft := ftfb.GetRootAsFlatTensor(fb, 0).UnPack()
	d = &DataFile{Name: name, Size: len(data), Header: h, Version: ft.Version}
	for i, nd := range ft.NamedData {
		if int(nd.SegmentIndex) >= len(ft.Segments) {
			return nil, fmt.Errorf("%s: FlatTensor.named_data[%d](%s): segment %d out of range (%d segments)", name, i, nd.Key, nd.SegmentIndex, len(ft.Segments))
		}
		seg := ft.Segments[nd.SegmentIndex]
		if h == nil {
			return nil, fmt.Errorf("%s: FlatTensor.named_data[%d](%s): segment data without an FH01 header", name, i, nd.Key)
		}
		if seg.Offset > h.SegmentDataSize || seg.Size > h.SegmentDataSize-seg.Offset {
			return nil, fmt.Errorf("%s: FlatTensor.segments[%d]: [%d, +%d) runs past the %d bytes of segment data", name, nd.SegmentIndex, seg.Offset, seg.Size, h.SegmentDataSize)
		}
		at := h.SegmentBaseOffset + seg.Offset
		t := NamedTensor{Key: nd.Key, Segment: nd.SegmentIndex, Data: data[at : at+seg.Size]}
		if l := nd.TensorLayout; l != nil {
			t.HasLayout, t.ScalarType, t.Sizes, t.DimOrder = true, l.ScalarType, l.Sizes, l.DimOrder
		}
		d.Tensors = append(d.Tensors, t)
	}
	return d, nil
}

// Summary writes a deterministic description of the data file.
func (d *DataFile) Summary(w io.Writer) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "file: %d bytes, flat tensor (FT01) version %d\n", d.Size, d.Version)
	if h := d.Header; h != nil {
		fmt.Fprintf(bw, "header: FH01 length %d, flatbuffer_offset %d, flatbuffer_size %d, segment_base_offset %d, segment_data_size %d\n",
			h.Length, h.FlatbufferOffset, h.FlatbufferSize, h.SegmentBaseOffset, h.SegmentDataSize)
	}
	for _, t := range d.Tensors {
		layout := "no layout"
		if t.HasLayout {
			layout = scalarName(t.ScalarType) + dims(t.Sizes) + " dim_order " + dims(t.DimOrder)
		}
		fmt.Fprintf(bw, "  %q: segment %d, %d bytes, %s\n", t.Key, t.Segment, len(t.Data), layout)
	}
	return bw.Flush()
}
