package pte

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	etfb "github.com/fxport/fxport/targets/executorch/fb/executorch_flatbuffer"
	xnnfb "github.com/fxport/fxport/targets/executorch/fb/fb_xnnpack"
)

func TestGenuineFilesDecode(t *testing.T) {
	files := append(genuineFiles(t, "*.pte"), genuineFiles(t, "*.bpte")...)
	for _, path := range files {
		name := filepath.Base(path)
		f, err := Read(path)
		if name == corruptFile {
			if err == nil || !strings.Contains(err.Error(), `want "ET12"`) || !strings.Contains(err.Error(), name) {
				t.Errorf("%s: want a file-identifier error naming the file, got %v", name, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if len(f.Methods) == 0 {
			t.Errorf("%s: no methods", name)
		}
		var buf bytes.Buffer
		if err := f.Summary(&buf); err != nil {
			t.Errorf("%s: summary: %v", name, err)
		}
	}
}

func mustRead(t *testing.T, name string) *File {
	t.Helper()
	f, err := Read(filepath.Join(genuineDir(t), name))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func segSizes(f *File) (out [][2]uint64) {
	for _, s := range f.Segments {
		out = append(out, [2]uint64{s.Offset, s.Size})
	}
	return out
}

// Facts from PROVENANCE.md and pte-format.md.
func TestGenuineFacts(t *testing.T) {
	t.Run("xnnpack_add", func(t *testing.T) {
		f := mustRead(t, "ecn_xnnpack_add_f32x3.pte")
		h := f.Header
		if h == nil || h.ProgramSize != 1088 || h.SegmentBaseOffset != 1152 || h.SegmentDataSize != 432 || f.Size != 1584 {
			t.Fatalf("header %+v size %d", h, f.Size)
		}
		if got := segSizes(f); len(got) != 2 || got[0] != [2]uint64{0, 0} || got[1] != [2]uint64{0, 432} {
			t.Errorf("segments %v", got)
		}
		d := f.Methods[0].Delegates
		if len(d) != 1 || d[0].ID != XNNPACKBackendID || d[0].XNNPACK == nil {
			t.Fatalf("delegates %+v", d)
		}
		g := d[0].XNNPACK.Graph
		if g.NumExterns != 3 || len(g.Xnodes) != 1 || g.Xnodes[0].XnodeUnion.Type != xnnfb.XNodeUnionXNNAdd {
			t.Errorf("graph externs %d nodes %d", g.NumExterns, len(g.Xnodes))
		}
		in := f.Program.ExecutionPlan[0].Chains[0].Instructions[0].InstrArgs
		if dc, ok := in.Value.(*etfb.DelegateCallT); !ok || len(dc.Args) != 3 {
			t.Errorf("instruction %+v", in)
		}
	})
	t.Run("conv_segments", func(t *testing.T) {
		f := mustRead(t, "djl_xnnpack_conv2d_relu_nhwc.pte")
		want := [][2]uint64{{0, 0}, {0, 1136}, {1152, 864}, {2048, 32}}
		got := segSizes(f)
		if len(got) != len(want) {
			t.Fatalf("segments %v", got)
		}
		for i := range want {
			if got[i] != want[i] {
				t.Errorf("segment %d = %v, want %v", i, got[i], want[i])
			}
		}
		g := f.Methods[0].Delegates[0].XNNPACK.Graph
		kinds := []xnnfb.XNodeUnion{xnnfb.XNodeUnionXNNStaticTranspose, xnnfb.XNodeUnionXNNConv2d, xnnfb.XNodeUnionXNNStaticTranspose}
		for i, k := range kinds {
			if g.Xnodes[i].XnodeUnion.Type != k {
				t.Errorf("node %d = %s, want %s", i, g.Xnodes[i].XnodeUnion.Type, k)
			}
		}
		if mm := g.Xnodes[1].OutputMinMax; mm == nil || mm.OutputMin != 0 {
			t.Errorf("conv output_min_max %+v", mm)
		}
	})
	t.Run("add_scalar_constant", func(t *testing.T) {
		f := mustRead(t, "et_portable_add_scalar_constant.pte")
		pl := f.Program.ExecutionPlan[0]
		kc := pl.Chains[0].Instructions[0].InstrArgs.Value.(*etfb.KernelCallT)
		if got := opName(pl.Operators[kc.OpIndex]); got != "aten::add.out" {
			t.Errorf("op %s", got)
		}
		if want := []int32{1, 0, 3, 2, 2}; !equal32(kc.Args, want) {
			t.Errorf("args %v, want %v", kc.Args, want)
		}
		if f.Header == nil || f.Header.SegmentDataSize != 4 {
			t.Errorf("header %+v", f.Header)
		}
	})
	t.Run("no_header", func(t *testing.T) {
		f := mustRead(t, "ecn_portable_add_i64_f32.pte")
		if f.Header != nil || f.Size != 1320 {
			t.Errorf("header %+v size %d", f.Header, f.Size)
		}
		if got := f.Program.ExecutionPlan[0].NonConstBufferSizes; len(got) != 2 || got[1] != 48 {
			t.Errorf("non_const_buffer_sizes %v", got)
		}
	})
	t.Run("qnn_methods", func(t *testing.T) {
		f := mustRead(t, "et_qnn_stories260k_hybrid_llama.pte")
		if len(f.Methods) != 29 {
			t.Errorf("%d methods, want 29", len(f.Methods))
		}
	})
	t.Run("constant_methods", func(t *testing.T) {
		f := mustRead(t, "ecn_portable_constant_methods.pte")
		var names []string
		for _, m := range f.Methods {
			names = append(names, m.Plan.Name)
		}
		if got := strings.Join(names, ","); got != "forward,get_scalar,get_double,get_bool,get_tensor" {
			t.Errorf("methods %s", got)
		}
	})
	t.Run("deprecated_inline", func(t *testing.T) {
		f := mustRead(t, "et_deprecated_inline_constant_buffer_mul_add.pte")
		var sizes []int
		for _, b := range f.Program.ConstantBuffer {
			sizes = append(sizes, len(b.Storage))
		}
		if len(sizes) != 3 || sizes[0] != 0 || sizes[1] != 16 || sizes[2] != 16 {
			t.Errorf("constant_buffer sizes %v", sizes)
		}
	})
	t.Run("bundled", func(t *testing.T) {
		f := mustRead(t, "et_bundled_program_mul_add.bpte")
		if f.Bundled == nil || len(f.Bundled.TestSuites) != 1 || len(f.Bundled.TestSuites[0].Cases) != 10 || f.Size != 4608 || f.Bundled.ProgramSize != 1696 {
			t.Fatalf("bundled %+v size %d", f.Bundled, f.Size)
		}
		if f.Header == nil || f.Header.Length != 24 {
			t.Errorf("embedded header %+v, want the old 24-byte eh00", f.Header)
		}
	})
	t.Run("ptd", func(t *testing.T) {
		d, err := ReadPTD(filepath.Join(genuineDir(t), "rs_external_constants_mul_add.ptd"))
		if err != nil {
			t.Fatal(err)
		}
		h := d.Header
		if h == nil || h.FlatbufferOffset != 48 || h.FlatbufferSize != 256 || h.SegmentBaseOffset != 304 || h.SegmentDataSize != 32 {
			t.Fatalf("header %+v", h)
		}
		if len(d.Tensors) != 2 || d.Tensors[0].Key != "a" || d.Tensors[1].Key != "b" || len(d.Tensors[1].Data) != 16 ||
			d.Tensors[0].ScalarType != etfb.ScalarTypeFLOAT {
			t.Errorf("tensors %+v", d.Tensors)
		}
		f := mustRead(t, "rs_external_constants_mul_add.pte")
		var ext []string
		for _, v := range f.Program.ExecutionPlan[0].Values {
			if x, ok := v.Val.Value.(*etfb.TensorT); ok && x.ExtraTensorInfo != nil && x.ExtraTensorInfo.Location == etfb.TensorDataLocationEXTERNAL {
				ext = append(ext, x.ExtraTensorInfo.FullyQualifiedName)
			}
		}
		if strings.Join(ext, ",") != "a,b" {
			t.Errorf("external tensors %v", ext)
		}
	})
}

func equal32(a, b []int32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// Truncations and single-byte corruptions of genuine files must give errors
// (or decode), never panic.
func TestMalformed(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(genuineDir(t), "djl_xnnpack_conv2d_relu_nhwc.pte"))
	if err != nil {
		t.Fatal(err)
	}
	for n := 0; n < len(data); n += 7 {
		if _, err := Decode("trunc", data[:n]); err != nil && strings.Contains(err.Error(), "panic") {
			t.Fatalf("truncated to %d: %v", n, err)
		} else if err == nil && n < 1232 {
			t.Fatalf("truncated to %d (inside the program) decoded", n)
		}
	}
	for i := 0; i < 1232; i++ {
		c := append([]byte(nil), data...)
		c[i] ^= 0xA5
		if _, err := Decode("flip", c); err != nil && strings.Contains(err.Error(), "panic") {
			t.Fatalf("byte %d flipped: %v", i, err)
		}
	}
	_, err = Decode("x.pte", []byte("\x10\x00\x00\x00ET12eh00\xff\xff\xff\xff"))
	if err == nil || !strings.HasPrefix(err.Error(), "x.pte: eh00 header") {
		t.Errorf("bad eh00: %v", err)
	}
}
