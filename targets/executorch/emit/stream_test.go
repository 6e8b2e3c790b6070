package emit_test

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/fxport/fxport/frontends/pt2"
	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/pm"
	"github.com/fxport/fxport/targets/executorch/emit"
	"github.com/fxport/fxport/targets/executorch/pte"
)

// checkStreamed writes f (and data, when any) with the streaming writers
// and compares the bytes with Encode / EncodePTDWith; it returns the .pte.
func checkStreamed(t *testing.T, f *pte.File, data []pte.NamedTensor) []byte {
	t.Helper()
	want, err := pte.Encode(f)
	if err != nil {
		t.Fatalf("encode: %v", err)
	}
	var got bytes.Buffer
	if err := pte.Write(&got, f); err != nil {
		t.Fatalf("write: %v", err)
	}
	if !bytes.Equal(got.Bytes(), want) {
		t.Fatalf("pte.Write wrote %d bytes that differ from pte.Encode's %d", got.Len(), len(want))
	}
	if len(data) == 0 {
		return want
	}
	wantD, err := pte.EncodePTDWith(data, emit.PTDOptions)
	if err != nil {
		t.Fatalf("encode .ptd: %v", err)
	}
	got.Reset()
	if err := pte.WritePTD(&got, data, emit.PTDOptions); err != nil {
		t.Fatalf("write .ptd: %v", err)
	}
	if !bytes.Equal(got.Bytes(), wantD) {
		t.Fatalf("pte.WritePTD differs from pte.EncodePTDWith")
	}
	return want
}

// Every corpus program, exported to executorch-portable (constants in the
// .pte, and external in a .ptd) and executorch-xnnpack (named data in the
// .pte, and external), streams byte for byte what Encode gives; the
// emitted constant segment is lazy: pieces, not bytes.
func TestCorpusStreamedWriteMatchesEncode(t *testing.T) {
	files, err := filepath.Glob("../../../tests/corpus/*/program.pt2")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Skip("no corpus programs")
	}
	for _, f := range files {
		name := filepath.Base(filepath.Dir(f))
		for _, c := range []struct {
			backend string
			opts    emit.Options
		}{
			{"executorch.portable", emit.Options{}},
			{"executorch.portable", emit.Options{ExternalConstants: true}},
			{"executorch.xnnpack", emit.Options{}},
			{"executorch.xnnpack", emit.Options{ExternalConstants: true, ExternalDelegateData: true}},
		} {
			t.Run(fmt.Sprintf("%s/%s/external=%v", name, c.backend, c.opts.ExternalConstants), func(t *testing.T) {
				p, err := pt2.Read(f)
				if err != nil {
					t.Fatalf("load: %v", err)
				}
				pl, err := pm.Build(pm.TargetExecuTorch, c.backend)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := pm.Run(p, pl, nil, pm.Config{}); err != nil {
					t.Fatalf("pipeline: %v", err)
				}
				ef, data, err := emit.ProgramWithData(p, c.opts)
				if err != nil {
					t.Fatalf("emit: %v", err)
				}
				if s := ef.Segments[0]; s.Size > 0 && s.Pieces == nil {
					t.Errorf("constant segment of %d bytes is held in memory, not lazy", s.Size)
				}
				for _, e := range data {
					if e.Data != nil && e.HasLayout {
						t.Errorf(".ptd tensor %q is held in memory, not lazy", e.Key)
					}
				}
				checkStreamed(t, ef, data)
			})
		}
	}
}

// countingSource serves bytes and counts how often they are opened;
// after limit opens it serves short data (a source that changed on disk).
type countingSource struct {
	data  []byte
	opens atomic.Int32
	limit int32
}

func (s *countingSource) Open() (io.ReadCloser, error) {
	n := s.opens.Add(1)
	if s.limit > 0 && n > s.limit {
		return io.NopCloser(bytes.NewReader(s.data[:len(s.data)-1])), nil
	}
	return io.NopCloser(bytes.NewReader(s.data)), nil
}
func (s *countingSource) Size() int64    { return int64(len(s.data)) }
func (s *countingSource) String() string { return "counting" }

// lowerWithSources lowers the mul-add program with counting sources in
// place of its weights' (a = 3, b = 2).
func lowerWithSources(t *testing.T, limit int32) (*ir.Program, map[string]*countingSource) {
	t.Helper()
	p := lower(t, "testdata/external_mul_add.fxir")
	srcs := map[string]*countingSource{}
	for _, w := range p.Weights {
		r, err := w.Source.Open()
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(r)
		r.Close()
		if err != nil {
			t.Fatal(err)
		}
		s := &countingSource{data: b, limit: limit}
		w.Source = s
		srcs[w.Name] = s
	}
	return p, srcs
}

// Emission reads each weight once, as a stream, to deduplicate it; the
// bytes stay in the source until the writer opens it again.
func TestEmitLeavesConstantsInTheirSources(t *testing.T) {
	for _, ext := range []bool{false, true} {
		p, srcs := lowerWithSources(t, 0)
		f, data, err := emit.ProgramWithData(p, emit.Options{ExternalConstants: ext})
		if err != nil {
			t.Fatal(err)
		}
		for name, s := range srcs {
			if n := s.opens.Load(); n != 1 {
				t.Errorf("external=%v: weight %q opened %d times during emission, want 1 (the digest)", ext, name, n)
			}
		}
		if _, err := pte.Decode("m.pte", checkStreamed(t, f, data)); err != nil {
			t.Fatal(err)
		}
	}
}

// A weight whose source yields other than its declared size at write time
// fails the write with an error naming the weight.
func TestStreamedWriteRejectsChangedSource(t *testing.T) {
	for _, ext := range []bool{false, true} {
		p, _ := lowerWithSources(t, 1)
		f, data, err := emit.ProgramWithData(p, emit.Options{ExternalConstants: ext})
		if err != nil {
			t.Fatal(err)
		}
		err = pte.Write(io.Discard, f)
		if err == nil && ext {
			err = pte.WritePTD(io.Discard, data, emit.PTDOptions)
		}
		if err == nil || !strings.Contains(err.Error(), `"a"`) || !strings.Contains(err.Error(), "yields 15 bytes, declared 16") {
			t.Errorf("external=%v: err = %v, want the short weight \"a\" named", ext, err)
		}
	}
}

// Mutable buffers' initial state is lazy too (the llama block's KV cache).
func TestMutableSegmentIsLazy(t *testing.T) {
	path := "../../../tests/corpus/llama_block/program.pt2"
	if _, err := os.Stat(path); err != nil {
		t.Skip("no llama_block corpus program")
	}
	p, err := pt2.Read(path)
	if err != nil {
		t.Fatal(err)
	}
	pl, err := pm.Build(pm.TargetExecuTorch, "executorch.portable")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pm.Run(p, pl, nil, pm.Config{}); err != nil {
		t.Fatal(err)
	}
	f, err := emit.Program(p, emit.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Segments) < 2 || f.Segments[1].Pieces == nil || f.Segments[1].Data != nil {
		t.Fatalf("mutable-data segment is not lazy: %d segments", len(f.Segments))
	}
	checkStreamed(t, f, nil)
}

// XNNPACK named data holds no bytes: the raw bias is a piece over its
// weight's source, the OHWI-permuted filter a recipe that permutes the
// source again when written, each with the sha256 that is its key. The
// serializer reads each weight once, as it stores it: the bias for its
// digest, the filter for the permutation it hashes and drops. Both stream
// exactly as Encode writes them.
func TestDelegateNamedDataIsLazy(t *testing.T) {
	p := lowerXNNPACK(t, "../xnnpack/testdata/conv_relu.fxir")
	srcs := map[string]*flipSource{}
	for _, w := range p.Weights {
		s := &flipSource{data: readSource(t, w)}
		w.Source = s
		srcs[w.Name] = s
	}
	f, err := emit.Program(p, emit.Options{NoMetadataMethod: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Program.NamedData) != 2 {
		t.Fatalf("%d named data entries, want the filter and the bias", len(f.Program.NamedData))
	}
	for _, nd := range f.Program.NamedData {
		s := f.Segments[nd.SegmentIndex]
		if s.Data != nil || len(s.Pieces) != 1 || s.Pieces[0].Digest == nil {
			t.Fatalf("named data %s: segment holds %d bytes and %d pieces, want one lazy piece with its digest", nd.Key, len(s.Data), len(s.Pieces))
		}
		if got := fmt.Sprintf("%x", *s.Pieces[0].Digest); got != nd.Key {
			t.Errorf("named data %s: piece digest %s", nd.Key, got)
		}
	}
	for name, want := range map[string]int32{"conv.weight": 1, "conv.bias": 1} {
		if n := srcs[name].opens.Load(); n != want {
			t.Errorf("weight %q opened %d times during emission, want %d", name, n, want)
		}
	}
	checkStreamed(t, f, nil)
}

// A delegated weight whose bytes change after serialization (same size)
// fails the write, naming the weight, whether it is stored raw or permuted:
// its key would no longer be the sha256 of what is written.
func TestDelegateNamedDataRejectsChangedSource(t *testing.T) {
	for _, name := range []string{"conv.weight", "conv.bias"} {
		p := lowerXNNPACK(t, "../xnnpack/testdata/conv_relu.fxir")
		var src *flipSource
		for _, w := range p.Weights {
			s := &flipSource{data: readSource(t, w)}
			w.Source = s
			if w.Name == name {
				src = s
			}
		}
		f, err := emit.Program(p, emit.Options{NoMetadataMethod: true})
		if err != nil {
			t.Fatal(err)
		}
		src.flip.Store(true)
		err = pte.Write(io.Discard, f)
		if err == nil || !strings.Contains(err.Error(), `"`+name+`"`) || !strings.Contains(err.Error(), "sha256") {
			t.Errorf("%s changed: err = %v, want a digest mismatch naming it", name, err)
		}
	}
}

// flipSource serves bytes, counting opens; once flip is set it serves them
// with the first byte changed (a source rewritten in place).
type flipSource struct {
	data  []byte
	opens atomic.Int32
	flip  atomic.Bool
}

func (s *flipSource) Open() (io.ReadCloser, error) {
	s.opens.Add(1)
	b := s.data
	if s.flip.Load() {
		b = append([]byte{b[0] ^ 1}, b[1:]...)
	}
	return io.NopCloser(bytes.NewReader(b)), nil
}
func (s *flipSource) Size() int64    { return int64(len(s.data)) }
func (s *flipSource) String() string { return "flip" }

// readSource reads w's bytes.
func readSource(t *testing.T, w *ir.Weight) []byte {
	t.Helper()
	r, err := w.Source.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// lowerXNNPACK parses an .fxir file and runs the executorch.xnnpack pipeline.
func lowerXNNPACK(t *testing.T, path string) *ir.Program {
	t.Helper()
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	p, err := ir.Parse(src, filepath.Base(path))
	if err != nil {
		t.Fatal(err)
	}
	pl, err := pm.Build(pm.TargetExecuTorch, "executorch.xnnpack")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pm.Run(p, pl, nil, pm.Config{}); err != nil {
		t.Fatal(err)
	}
	return p
}
