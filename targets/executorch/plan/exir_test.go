package plan_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	etfb "github.com/fxport/fxport/targets/executorch/fb/executorch_flatbuffer"
	"github.com/fxport/fxport/targets/executorch/plan"
	"github.com/fxport/fxport/targets/executorch/pte"
)

// exirPrograms are the programs of the genuine files whose planned tensors
// are placed by exir's current greedy (sort by aligned size, ties in
// reverse collection order, first non-overlapping shared object), written
// as the IR the portable pipeline lowers. An XNNPACK-delegated file's
// planned tensors are the delegate call's inputs and outputs: one node
// reading the inputs stands in for the call (same lifetimes).
var exirPrograms = []struct{ file, src string }{
	{"et_portable_add_scalar_constant.pte", `input c: constant_tensor "c"
input x: user_input
output user_output
weight "c": f32[] = inline("0000803f")
graph forward(%c: f32[], %x: f32[3]) {
  %add: f32[3] = aten.add.Tensor(%x, %c)
  return %add
}`},
	{"djl_portable_to_dim_order_copy_mul.pte", `graph forward(%price: f32[1], %qty: i64[1]) {
  %f: f32[1] = aten._to_copy.default(%qty, dtype=torch.float32)
  %mul: f32[1] = aten.mul.Tensor(%price, %f)
  return %mul
}`},
	{"ecn_portable_add_i64_f32.pte", `graph forward(%a: i64[1], %b: f32[1]) {
  %aa: i64[1] = aten.add.Tensor(%a, %a)
  %bb: f32[1] = aten.add.Tensor(%b, %b)
  return %aa, %bb
}`},
	{"djl_portable_mul_double_input.pte", `input c: constant_tensor "c"
input x: user_input
output user_output
weight "c": f32[] = inline("00000040")
graph forward(%c: f32[], %x: f32[4]) {
  %mul: f32[4] = aten.mul.Tensor(%x, %c)
  return %mul
}`},
	{"djl_portable_expand_512mib_output.pte", `graph forward(%x: f32[1]) {
  %e: f32[134217728] = aten.expand.default(%x, [134217728])
  return %e
}`},
	{"djl_xnnpack_add_f32x1.pte", `graph forward(%a: f32[1], %b: f32[1]) {
  %add: f32[1] = aten.add.Tensor(%a, %b)
  return %add
}`},
	{"ecn_xnnpack_add_f32x3.pte", `graph forward(%a: f32[3], %b: f32[3]) {
  %add: f32[3] = aten.add.Tensor(%a, %b)
  return %add
}`},
}

// The exir greedy placement reproduces the planned offsets of every genuine
// file above exactly (each planned tensor, in value order). The ties are
// what matters: in ecn_portable_add_i64_f32 an i64[1] and an f32[1] tensor
// both take 16 aligned bytes, so exir visits them as equals (later first)
// and the second add's f32 output reuses the first input's bytes at 0; a
// sort on unaligned sizes puts it at 16.
//
// Two genuine files are not reproduced: et_portable_add_f32x1.pte and
// rs_portable_add_f32x1.pte (x at 0, y at 16, out at 32) come from an older
// exir whose greedy took tensors in collection order without sorting; the
// same program in djl_xnnpack_add_f32x1.pte and ecn_xnnpack_add_f32x3.pte
// (current exir) has out at 0, y at 16, x at 32, so no single rule matches
// both; fxport follows the current one (TestOlderExirAddFilesDiffer).
func TestExirOffsetsMatchGenuineFiles(t *testing.T) {
	dir := genuinePTEDir(t)
	for _, c := range exirPrograms {
		t.Run(c.file, func(t *testing.T) {
			want, wantArena := genuineOffsets(t, filepath.Join(dir, c.file))
			got, arena := plannedOffsets(t, c.src)
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("planned offsets differ (-exir +fxport):\n%s", d)
			}
			// exir pads the arena of a graph with an XNNPACK delegate call
			// by 64 bytes (apply_algo's extra_padding). This test plans a
			// portable stand-in for the call, so the padding fxport adds
			// with a real call (TestGenuineArenaPadding) does not apply.
			if strings.Contains(c.file, "xnnpack") {
				wantArena -= 64
			}
			if arena != wantArena {
				t.Errorf("arena %d bytes, exir %d", arena, wantArena)
			}
		})
	}
}

// The older exir's add files: same arena, the other order of equal-size
// tensors (documented above); a planner change that starts matching them
// must revisit the rule (and this test).
func TestOlderExirAddFilesDiffer(t *testing.T) {
	dir := genuinePTEDir(t)
	got, arena := plannedOffsets(t, exirPrograms[5].src)
	for _, f := range []string{"et_portable_add_f32x1.pte", "rs_portable_add_f32x1.pte"} {
		want, wantArena := genuineOffsets(t, filepath.Join(dir, f))
		if arena != wantArena {
			t.Errorf("%s: arena %d, exir %d", f, arena, wantArena)
		}
		if cmp.Equal(want, got) || len(want) != len(got) {
			t.Errorf("%s: exir %v, fxport %v: expected the same tensors in the other tie order", f, want, got)
		}
		if want[0] != got[2] || want[2] != got[0] || want[1] != got[1] {
			t.Errorf("%s: exir %v, fxport %v: not the reversed tie order", f, want, got)
		}
	}
}

// genuinePTEDir finds shared/testdata/pte above the package.
func genuinePTEDir(t *testing.T) string {
	t.Helper()
	for _, d := range []string{"../../../shared/testdata/pte", "../../../../shared/testdata/pte", "/work/shared/testdata/pte"} {
		if st, err := os.Stat(d); err == nil && st.IsDir() {
			return d
		}
	}
	t.Skip("genuine ExecuTorch files (shared/testdata/pte) not found")
	return ""
}

// genuineOffsets lists the memory offsets of the planned tensors of the
// file's first method, in value order, and its arena size.
func genuineOffsets(t *testing.T, path string) ([]int64, int64) {
	t.Helper()
	f, err := pte.Read(path)
	if err != nil {
		t.Fatal(err)
	}
	ep := f.Program.ExecutionPlan[0]
	var out []int64
	for _, v := range ep.Values {
		tt, ok := v.Val.Value.(*etfb.TensorT)
		if !ok || tt.AllocationInfo == nil {
			continue
		}
		a := tt.AllocationInfo
		out = append(out, int64(a.MemoryOffsetHigh)<<32|int64(a.MemoryOffsetLow))
	}
	var arena int64
	if sz := ep.NonConstBufferSizes; len(sz) > 1 {
		arena = sz[1]
	}
	return out, arena
}

// plannedOffsets lowers src with the portable pipeline and lists the
// offsets of its planned storage classes, in the order exir emits their
// tensors (graph inputs, then node results), and the arena size.
func plannedOffsets(t *testing.T, src string) ([]int64, int64) {
	t.Helper()
	p := parse(t, src)
	lower(t, p)
	pl := mustPlan(t, p, plan.DefaultOptions())
	if pl.Algorithm != "exir greedy" {
		t.Errorf("placement %q won, want exir greedy", pl.Algorithm)
	}
	seen := map[int]bool{}
	var out []int64
	for _, e := range pl.Values {
		if !seen[e.Class] {
			seen[e.Class] = true
			out = append(out, e.Offset)
		}
	}
	return out, pl.Planned()
}
