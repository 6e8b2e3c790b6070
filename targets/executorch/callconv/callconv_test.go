package callconv

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fxport/fxport/internal/testenv"
	"github.com/fxport/fxport/ir"
	etfb "github.com/fxport/fxport/targets/executorch/fb/executorch_flatbuffer"
	"github.com/fxport/fxport/targets/executorch/pte"
)

// The argument counts the genuine runtime's kernel wrappers take (its
// "Expected N args received M" checks, and exir's own calls in
// testdata/exir_calls.pte).
func TestArity(t *testing.T) {
	for _, c := range []struct {
		op    string
		slot  Slot
		arity int
	}{
		{"aten.add.out", ValueSlot, 5},
		{"aten.native_layer_norm.out", ListSlot, 9},
		{"aten._native_batch_norm_legit_no_training.out", ListSlot, 11},
		{"aten.max_pool2d_with_indices.out", ListSlot, 9},
		{"aten.topk.values", ListSlot, 8},
		{"aten.split_copy.Tensor_out", ListSlot, 5},
		{"aten.split_with_sizes_copy.out", ListSlot, 5},
		{"aten.copy_.default", ValueSlot, 4},
		{"aten.sym_size.int", ValueSlot, 3},
		{"executorch_prim.et_view.default", ValueSlot, 3},
		{"executorch_prim.et_copy_index.tensor", NoSlot, 3},
	} {
		op, ok := ir.LookupOp(c.op)
		if !ok {
			t.Errorf("%s: not in the op table", c.op)
			continue
		}
		s := &op.Info().Schema
		if got := ReturnSlot(s); got != c.slot {
			t.Errorf("%s: %s, want %s", c.op, got, c.slot)
		}
		if got := Arity(s); got != c.arity {
			t.Errorf("%s: arity %d, want %d", c.op, got, c.arity)
		}
	}
}

// exir's own program for multi-output and list-out ops follows the
// convention call for call, and Check notices each way of breaking it.
func TestCheckExirProgram(t *testing.T) {
	f, err := pte.Read(filepath.Join("testdata", "exir_calls.pte"))
	if err != nil {
		t.Fatal(err)
	}
	plan := f.Methods[0].Plan
	seen := map[string]bool{}
	for _, o := range plan.Operators {
		if _, ok := Lookup(o); !ok {
			t.Errorf("operator %s.%s is not in fxport's op table", o.Name, o.Overload)
		}
		seen[o.Name+"."+o.Overload] = true
	}
	for _, want := range []string{"aten::native_layer_norm.out", "aten::topk.values", "aten::split_with_sizes_copy.out", "aten::_native_batch_norm_legit_no_training.out", "aten::max_pool2d_with_indices.out"} {
		if !seen[want] {
			t.Errorf("exir_calls.pte lacks %s (operators %v)", want, seen)
		}
	}
	if err := Check(plan, Lookup); err != nil {
		t.Fatalf("exir's program: %v", err)
	}
	// Breakages: one argument per output (fxport's old form), a dropped
	// return slot, a slot listing other tensors.
	calls := func() []*etfb.KernelCallT {
		var ks []*etfb.KernelCallT
		for _, in := range plan.Chains[0].Instructions {
			if k, ok := in.InstrArgs.Value.(*etfb.KernelCallT); ok {
				ks = append(ks, k)
			}
		}
		return ks
	}
	for _, c := range []struct {
		name, want string
		edit       func(k *etfb.KernelCallT, s *ir.Schema)
	}{
		{"one arg per output", "arguments, want", func(k *etfb.KernelCallT, s *ir.Schema) {
			l, _ := listItems(plan, k.Args[len(k.Args)-1])
			k.Args = append(k.Args[:len(k.Args)-1], l...)
		}},
		{"no return slot", "arguments, want", func(k *etfb.KernelCallT, s *ir.Schema) { k.Args = k.Args[:len(k.Args)-1] }},
		{"slot of another tensor", "not a TensorList of the out tensors", func(k *etfb.KernelCallT, s *ir.Schema) { k.Args[len(k.Args)-1] = k.Args[0] }},
	} {
		for _, k := range calls() {
			s, _ := Lookup(plan.Operators[k.OpIndex])
			if ReturnSlot(s) != ListSlot {
				continue
			}
			saved := append([]int32(nil), k.Args...)
			c.edit(k, s)
			err := Check(plan, Lookup)
			k.Args = saved
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%s in %s: %v, want an error containing %q", c.name, plan.Operators[k.OpIndex].Name, err, c.want)
			}
		}
	}
}

// Every kernel call of every genuine ExecuTorch file whose operator
// fxport's op table knows follows the convention.
func TestCheckGenuineFiles(t *testing.T) {
	dir := testenv.Shared(t, "testdata/pte")
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	calls := 0
	for _, e := range ents {
		name := e.Name()
		if strings.Contains(name, "corrupt") || !(strings.HasSuffix(name, ".pte") || strings.HasSuffix(name, ".bpte")) {
			continue
		}
		f, err := pte.Read(filepath.Join(dir, name))
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		for _, m := range f.Methods {
			if err := Check(m.Plan, Lookup); err != nil {
				t.Errorf("%s: %v", name, err)
			}
			for _, ch := range m.Plan.Chains {
				for _, in := range ch.Instructions {
					if k, ok := in.InstrArgs.Value.(*etfb.KernelCallT); ok {
						if _, known := Lookup(m.Plan.Operators[k.OpIndex]); known {
							calls++
						}
					}
				}
			}
		}
	}
	if calls == 0 {
		t.Fatal("no kernel call of a known operator in the genuine files")
	}
	t.Logf("%d kernel calls of known operators checked", calls)
}
