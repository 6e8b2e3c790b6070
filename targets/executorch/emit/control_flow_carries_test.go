package emit_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fxport/fxport/interp"
	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/targets/executorch/emit"
	etfb "github.com/fxport/fxport/targets/executorch/fb/executorch_flatbuffer"
	"github.com/fxport/fxport/targets/executorch/run"
)

// whilePermuted returns carried input %a as carried value 2 while carried
// value 1 changes: the in-order carry copies would overwrite %a's slot
// first, so loop-carry-copies copies it in the body.
const whilePermuted = `graph forward(%start: i64[], %n: i64[], %x: f32[8], %y: f32[8]) {
  %w: i64[], %w_1: f32[8], %w_2: f32[8] = higher_order.while_loop(^c, ^b, [%start, %x, %y], [%n])
  ^c(%i: i64[], %a: f32[8], %b: f32[8], %lim: i64[]) {
    %le: b8[] = aten.le.Tensor(%i, %lim)
    return %le
  }
  ^b(%i: i64[], %a: f32[8], %b: f32[8], %lim: i64[]) {
    %inc: i64[] = aten.add.Scalar(%i, 1)
    %m: f32[8] = aten.mul.Tensor(%a, %b)
    %s: f32[8] = aten.add.Tensor(%m, %b)
    return %inc, %s, %a
  }
  %out: f32[8] = aten.sub.Tensor(%w_1, %w_2)
  return %out, %w_2
}
`

// scanPermuted is a Fibonacci-like scan: carry 1 takes carry 0's old value.
const scanPermuted = `graph forward(%xs: f32[4, 8], %a0: f32[8], %b0: f32[8]) {
  %scan: f32[8], %scan_1: f32[8], %scan_2: f32[4, 8] = higher_order.scan(^cell, [%a0, %b0], [%xs], [])
  ^cell(%a: f32[8], %b: f32[8], %x: f32[8]) {
    %s: f32[8] = aten.add.Tensor(%a, %b)
    %t: f32[8] = aten.mul.Tensor(%s, %x)
    return %t, %a, %s
  }
  return %scan, %scan_1, %scan_2
}
`

// whileChannelsLast carries an image whose initial value and body output
// are channels-last into a contiguous slot: clone.out (the carry copy)
// requires equal dim orders, so loop-carry-copies copies both into the
// slot's order. The pointwise ops of both bodies take channels-last
// operands only: the portable kernels refuse a mix
// (tensors_have_same_dim_order).
const whileChannelsLast = `graph forward(%start: i64[], %n: i64[], %x: f32[2, 3, 2, 2]) {
  %xc: f32[2, 3, 2, 2]{0,2,3,1} = aten.clone.default(%x, memory_format=torch.channels_last)
  %w: i64[], %w_1: f32[2, 3, 2, 2] = higher_order.while_loop(^c, ^b, [%start, %xc], [%n])
  ^c(%i: i64[], %acc: f32[2, 3, 2, 2], %lim: i64[]) {
    %le: b8[] = aten.le.Tensor(%i, %lim)
    return %le
  }
  ^b(%i: i64[], %acc: f32[2, 3, 2, 2], %lim: i64[]) {
    %inc: i64[] = aten.add.Scalar(%i, 1)
    %t: f32[2, 3, 2, 2]{0,2,3,1} = aten.clone.default(%acc, memory_format=torch.channels_last)
    %u: f32[2, 3, 2, 2]{0,2,3,1} = aten.mul.Tensor(%t, %t)
    %v: f32[2, 3, 2, 2]{0,2,3,1} = aten.add.Tensor(%u, %t)
    return %inc, %v
  }
  return %w_1
}
`

// scanChannelsLast is the scan form: a channels-last initial carry and
// combine output in a contiguous carry slot, and a channels-last step
// output stacked into contiguous rows (et_copy_index copies bytes).
const scanChannelsLast = `graph forward(%xs: f32[3, 2, 3, 2, 2], %h: f32[2, 3, 2, 2]) {
  %hc: f32[2, 3, 2, 2]{0,2,3,1} = aten.clone.default(%h, memory_format=torch.channels_last)
  %scan: f32[2, 3, 2, 2], %scan_1: f32[3, 2, 3, 2, 2], %scan_2: f32[3, 2, 3, 2, 2] = higher_order.scan(^cell, [%hc], [%xs], [])
  ^cell(%carry: f32[2, 3, 2, 2], %row: f32[2, 3, 2, 2]) {
    %t: f32[2, 3, 2, 2]{0,2,3,1} = aten.clone.default(%row, memory_format=torch.channels_last)
    %m: f32[2, 3, 2, 2]{0,2,3,1} = aten.mul.Tensor(%t, %t)
    %s: f32[2, 3, 2, 2]{0,2,3,1} = aten.add.Tensor(%m, %t)
    %y: f32[2, 3, 2, 2]{0,2,3,1} = aten.neg.default(%t)
    %z: f32[2, 3, 2, 2] = aten.neg.default(%carry)
    return %s, %y, %z
  }
  return %scan, %scan_1, %scan_2
}
`

// whileSymInt carries a SymInt counter (a literal 0 to start, the trip
// count the input's leading dim) and a second SymInt that takes the
// counter's old value: a permuted non-tensor carry, saved by a MoveCall.
const whileSymInt = `symbol s0: [1, 8] hint 3
graph forward(%x: f32[s0, 4], %v: f32[4]) {
  %n: Sym(s0) = aten.sym_size.int(%x, 0)
  %w: SymInt, %w_1: SymInt, %w_2: f32[4] = higher_order.while_loop(^c, ^b, [0, 0, %v], [%n])
  ^c(%i: SymInt, %p: SymInt, %acc: f32[4], %lim: SymInt) {
    %lt: SymBool = operator.lt(%i, %lim)
    return %lt
  }
  ^b(%i: SymInt, %p: SymInt, %acc: f32[4], %lim: SymInt) {
    %inc: SymInt = operator.add(%i, 1)
    %m: f32[4] = aten.mul.Scalar(%acc, %inc)
    %s: f32[4] = aten.add.Scalar(%m, %p)
    return %inc, %i, %s
  }
  %f: f32[4] = aten.add.Scalar(%w_2, %w_1)
  %g: f32[4] = aten.mul.Scalar(%f, %w)
  return %g
}
`

// Permuted carries (a carried input returned as another carried value),
// channels-last carried values in a contiguous slot and SymInt carries
// run to the interpreter's results under both MoveCall semantics, for
// several trip counts, and their emitted chains never read overwritten
// bytes.
func TestEmitLoopCarries(t *testing.T) {
	cases := []struct {
		name, src string
		inputs    [][]interp.Value
	}{
		{"while_permuted", whilePermuted, [][]interp.Value{
			{i64(1), i64(0), vec(8, 1), vec(8, 2)}, {i64(1), i64(1), vec(8, 1), vec(8, 2)}, {i64(1), i64(4), vec(8, 3), vec(8, 1)},
		}},
		{"scan_permuted", scanPermuted, [][]interp.Value{{mat(4, 8), vec(8, 1), vec(8, 2)}}},
		{"while_channels_last", whileChannelsLast, [][]interp.Value{
			{i64(1), i64(0), image(2, 3, 2, 2)}, {i64(1), i64(1), image(2, 3, 2, 2)}, {i64(1), i64(3), image(2, 3, 2, 2)},
		}},
		{"scan_channels_last", scanChannelsLast, [][]interp.Value{{image(3, 2, 3, 2, 2), image(2, 3, 2, 2)}}},
		{"while_symint", whileSymInt, [][]interp.Value{
			{mat(1, 4), vec(4, 1)}, {mat(3, 4), vec(4, 2)}, {mat(8, 4), vec(4, 3)},
		}},
	}
	for _, c := range cases {
		ref, f := exportRun(t, c.name, c.src)
		for _, trips := range []int{0, 1, 2, 3} {
			for _, alias := range []bool{false, true} {
				if err := checkEmittedTrace(f, traceOptions{Trips: trips, Aliasing: alias}); err != nil {
					t.Fatalf("%s, %d trips, aliasing %v: %v", c.name, trips, alias, err)
				}
			}
		}
		for i, in := range c.inputs {
			for _, alias := range []bool{false, true} {
				compareRunOpts(t, fmt.Sprintf("%s inputs %d aliasing %v", c.name, i, alias), ref, f, in, run.Options{AliasingMoves: alias})
			}
		}
	}
	// The SymInt carries are MoveCalls (two initial, two back, one save of
	// the permuted counter), never clone.out.
	_, f := exportRun(t, "while_symint", whileSymInt)
	if got := countInstr(f, etfb.InstructionArgumentsMoveCall); got != 5 {
		t.Errorf("while_symint: %d MoveCall instructions, want 5", got)
	}
	if got := countKernel(f, "aten::clone", "out"); got != 2 {
		t.Errorf("while_symint: %d aten::clone.out kernel calls, want 2 (the tensor carry in and back)", got)
	}
	// The scan copies the initial carry, the carried output and the
	// channels-last step output (two clones in the source, three inserted).
	_, f = exportRun(t, "scan_channels_last", scanChannelsLast)
	if got := countKernel(f, "dim_order_ops::_clone_dim_order", "out"); got != 5 {
		t.Errorf("scan_channels_last: %d _clone_dim_order.out kernel calls, want 5", got)
	}
	// The channels-last carry is copied into the slot's order twice (the
	// initial value, the body output) before clone.out copies it.
	_, f = exportRun(t, "while_channels_last", whileChannelsLast)
	if got := countKernel(f, "dim_order_ops::_clone_dim_order", "out"); got != 4 {
		t.Errorf("while_channels_last: %d _clone_dim_order.out kernel calls, want 4 (two in the source, two inserted)", got)
	}
}

// image is a deterministic f32 tensor of the given shape.
func image(shape ...int64) interp.Value {
	n := int64(1)
	for _, d := range shape {
		n *= d
	}
	xs := make([]float64, n)
	for i := range xs {
		xs[i] = float64((i*7)%17)/8 - 1
	}
	return interp.FromFloat64(ir.Float32, shape, xs)
}

// A scan or map_impl without xs has no trip count: torch never traces one
// (torch.scan returns init when xs is empty), so the emitter refuses it
// with an error naming the node instead of guessing a length.
func TestEmitScanWithoutXsRefused(t *testing.T) {
	for _, c := range []struct{ name, src, node string }{
		{"scan_no_xs", `graph forward(%init: f32[3]) {
  %scan: f32[3] = higher_order.scan(^combine_graph_0, [%init], [], [])
  ^combine_graph_0(%carry: f32[3]) {
    %next: f32[3] = aten.mul.Scalar(%carry, 2)
    return %next
  }
  return %scan
}
`, "%scan"},
		{"map_no_xs", `graph forward(%w: f32[3]) {
  %map: f32[0, 3] = higher_order.map_impl(^body_graph_0, [], [%w])
  ^body_graph_0(%weight: f32[3]) {
    %m: f32[3] = aten.mul.Scalar(%weight, 2)
    return %m
  }
  return %map
}
`, "%map"},
	} {
		path := filepath.Join(t.TempDir(), c.name+".fxir")
		if err := os.WriteFile(path, []byte(c.src), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := emit.Program(lower(t, path), emit.Options{NoMetadataMethod: true})
		if err == nil {
			t.Fatalf("%s: emitted, want an error", c.name)
		}
		if msg := err.Error(); !strings.Contains(msg, c.node) || !strings.Contains(msg, "without xs has no trip count") {
			t.Errorf("%s: error %q does not name node %s and the missing xs", c.name, msg, c.node)
		}
	}
}
