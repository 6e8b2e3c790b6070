package main

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/pm"
	etemit "github.com/fxport/fxport/targets/executorch/emit"
)

// shrinkingSource serves its bytes on the first open (emission hashes
// them) and one byte short afterwards, like a weight file truncated
// between emission and writing.
type shrinkingSource struct {
	data  []byte
	opens int
}

func (s *shrinkingSource) Open() (io.ReadCloser, error) {
	s.opens++
	if s.opens > 1 {
		return io.NopCloser(bytes.NewReader(s.data[:len(s.data)-1])), nil
	}
	return io.NopCloser(bytes.NewReader(s.data)), nil
}
func (s *shrinkingSource) Size() int64    { return int64(len(s.data)) }
func (s *shrinkingSource) String() string { return "shrinking" }

// A weight that fails while the .pte (or .ptd) is being streamed fails the
// export naming the weight, leaves the files already at the destination
// untouched and no temporary file behind.
func TestWriteExecuTorchStreamFailureLeavesNoFile(t *testing.T) {
	for _, ext := range []bool{false, true} {
		src, err := os.ReadFile(mulAdd)
		require.NoError(t, err)
		p, err := ir.Parse(src, mulAdd)
		require.NoError(t, err)
		pl, err := pm.Build(pm.TargetExecuTorch, "executorch.portable")
		require.NoError(t, err)
		_, err = pm.Run(p, pl, nil, pm.Config{})
		require.NoError(t, err)
		w := p.Weight("b")
		r, err := w.Source.Open()
		require.NoError(t, err)
		data, err := io.ReadAll(r)
		r.Close()
		require.NoError(t, err)
		w.Source = &shrinkingSource{data: data}

		dir := t.TempDir()
		out := filepath.Join(dir, "m.pte")
		require.NoError(t, os.WriteFile(out, []byte("previous"), 0o644))
		err = writeExecuTorch(p, out, etemit.Options{ExternalConstants: ext})
		require.Error(t, err)
		require.Contains(t, err.Error(), `weight "b"`)
		require.Contains(t, err.Error(), "yields 15 bytes, declared 16")
		got, err := os.ReadFile(out)
		require.NoError(t, err)
		require.Equal(t, "previous", string(got), "the existing .pte was replaced")
		entries, err := os.ReadDir(dir)
		require.NoError(t, err)
		for _, e := range entries {
			require.False(t, strings.Contains(e.Name(), ".tmp"), "temporary file %s left", e.Name())
			require.NotEqual(t, "m.ptd", e.Name(), "m.ptd written although the export failed")
		}
	}
}
