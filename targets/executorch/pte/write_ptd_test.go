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
