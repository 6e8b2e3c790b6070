package xnnpack_test

import (
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/pm"
	"github.com/fxport/fxport/targets/executorch/emit"
	"github.com/fxport/fxport/targets/executorch/pte"
)

// TestGenuineArenaPadding: a graph calling an XNNPACK delegate gets 64
// bytes after its last planned tensor (exir/memory_planning.py apply_algo:
// extra_padding = 64 when _contains_xnnpack_delegate), the same program on
// portable kernels none; offsets and arena sizes are exir's in both.
func TestGenuineArenaPadding(t *testing.T) {
	dir := genuineDir(t)
	for _, c := range []struct {
		pipeline, genuine string
		offsets           bool // also compare offsets (the older portable file's tie-breaks differ)
	}{
		{"", "djl_xnnpack_add_f32x1.pte", true},
		{"executorch.portable", "et_portable_add_f32x1.pte", false},
	} {
		t.Run(c.genuine, func(t *testing.T) {
			p := parse(t, filepath.Join("testdata", "add.fxir"))
			if c.pipeline != "" {
				lowerBackend(t, p, c.pipeline)
			} else {
				lower(t, p, "")
			}
			ef, err := emit.Program(p, emit.Options{NoMetadataMethod: true})
			if err != nil {
				t.Fatal(err)
			}
			b, err := pte.Encode(ef)
			if err != nil {
				t.Fatal(err)
			}
			ours, err := pte.Decode("add.pte", b)
			if err != nil {
				t.Fatal(err)
			}
			want, err := pte.Read(filepath.Join(dir, c.genuine))
			if err != nil {
				t.Fatal(err)
			}
			w, o := planOf(want), planOf(ours)
			if !c.offsets {
				w, o = w[:len(want.Methods[0].Plan.NonConstBufferSizes)], o[:len(ours.Methods[0].Plan.NonConstBufferSizes)]
			}
			if diff := cmp.Diff(w, o); diff != "" {
				t.Errorf("memory plan differs from %s (-genuine +ours):\n%s", c.genuine, diff)
			}
		})
	}
}

// lowerBackend runs the named executorch pipeline.
func lowerBackend(t *testing.T, p *ir.Program, backend string) {
	t.Helper()
	pl, err := pm.Build(pm.TargetExecuTorch, backend)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pm.Run(p, pl, nil, pm.Config{VerifyEach: true}); err != nil {
		t.Fatal(err)
	}
}
