package pte

import (
	"bytes"
	"strings"
	"testing"

	etfb "github.com/fxport/fxport/targets/executorch/fb/executorch_flatbuffer"
)

func TestEncodePTDRoundTrip(t *testing.T) {
	in := []NamedTensor{
		{Key: "a", HasLayout: true, ScalarType: etfb.ScalarTypeFLOAT, Sizes: []int32{2, 2}, DimOrder: []byte{0, 1}, Data: bytes.Repeat([]byte{1}, 16)},
		{Key: "blob_so", Data: []byte("opaque library bytes")},
		{Key: "empty", Data: []byte{}},
	}
	data, err := EncodePTD(in)
	if err != nil {
		t.Fatal(err)
	}
	d, err := DecodePTD("x.ptd", data)
	if err != nil {
		t.Fatal(err)
	}
	if d.Header == nil || d.Header.FlatbufferOffset != 48 || d.Header.SegmentBaseOffset%PTDSegmentAlignment != 0 {
		t.Fatalf("header %+v", d.Header)
	}
	if len(d.Tensors) != len(in) {
		t.Fatalf("%d tensors, want %d", len(d.Tensors), len(in))
	}
	for i, g := range d.Tensors {
		w := in[i]
		if g.Key != w.Key || !bytes.Equal(g.Data, w.Data) || g.HasLayout != w.HasLayout || g.ScalarType != w.ScalarType {
			t.Errorf("entry %d: got %+v, want %+v", i, g, w)
		}
	}
	if !d.Tensors[0].HasLayout || len(d.Tensors[0].Sizes) != 2 {
		t.Errorf("layout lost: %+v", d.Tensors[0])
	}
	again, _ := EncodePTD(in)
	if !bytes.Equal(data, again) {
		t.Errorf("EncodePTD is not deterministic")
	}
	var sb strings.Builder
	if err := d.Summary(&sb); err != nil || !strings.Contains(sb.String(), `"blob_so": segment 1, 20 bytes, no layout`) {
		t.Errorf("summary %q, %v", sb.String(), err)
	}
}

func TestEncodePTDRejectsBadKeys(t *testing.T) {
	if _, err := EncodePTD([]NamedTensor{{Key: "k"}, {Key: "k"}}); err == nil || !strings.Contains(err.Error(), `key "k" appears twice`) {
		t.Errorf("err = %v", err)
	}
	if _, err := EncodePTD([]NamedTensor{{Key: ""}}); err == nil || !strings.Contains(err.Error(), "empty key") {
		t.Errorf("err = %v", err)
	}
}

// EncodePTDWith: the segment alignment applies to the base and every
// segment, an entry's own alignment raises its segment's (lcm), and
// ShareSegments stores identical bytes once.
func TestEncodePTDWithAlignmentAndSharing(t *testing.T) {
	in := []NamedTensor{
		{Key: "x", Data: []byte{1, 2, 3}},
		{Key: "y", Data: []byte{4}, Alignment: 64},
		{Key: "z", Data: []byte{1, 2, 3}},
	}
	data, err := EncodePTDWith(in, PTDOptions{SegmentAlignment: 16, ShareSegments: true})
	if err != nil {
		t.Fatal(err)
	}
	d, err := DecodePTD("x.ptd", data)
	if err != nil {
		t.Fatal(err)
	}
	if want := alignUp64(alignUp64(d.Header.FlatbufferSize, 16)+48, 16); d.Header.SegmentBaseOffset != want {
		t.Errorf("segment base %d for a %d-byte flatbuffer", d.Header.SegmentBaseOffset, d.Header.FlatbufferSize)
	}
	if got := []uint32{d.Tensors[0].Segment, d.Tensors[1].Segment, d.Tensors[2].Segment}; got[0] != 0 || got[1] != 1 || got[2] != 0 {
		t.Errorf("segments %v, want [0 1 0]", got)
	}
	base := d.Header.SegmentBaseOffset
	if at := uint64(bytes.Index(data[base:], []byte{4})); at != 64 {
		t.Errorf("y at %d from the base, want 64", at)
	}
	if d.Header.SegmentDataSize != 65 {
		t.Errorf("segment data %d bytes, want 65", d.Header.SegmentDataSize)
	}
	plain, err := EncodePTDWith(in, PTDOptions{SegmentAlignment: 16})
	if err != nil {
		t.Fatal(err)
	}
	if p, _ := DecodePTD("p.ptd", plain); p.Tensors[2].Segment != 2 {
		t.Errorf("without ShareSegments z is in segment %d, want 2", p.Tensors[2].Segment)
	}
}
