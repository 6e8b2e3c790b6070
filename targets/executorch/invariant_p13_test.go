package executorch_test

import (
	"archive/zip"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fxport/fxport/frontends/pt2"
	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/pm"
	"github.com/fxport/fxport/targets/executorch/emit"
	"github.com/fxport/fxport/targets/executorch/pte"
)

// p13SymInt spells a SymInt of a tensor_values entry: an integer, or an
// expression with an optional hint ("u0" has none, "s0@4" has hint 4).
func p13SymInt(s string) string {
	if _, err := fmt.Sscanf(s, "%d", new(int)); err == nil && !strings.ContainsAny(s, "*su@") {
		return `{"as_int": ` + s + `}`
	}
	expr, hint, ok := strings.Cut(s, "@")
	h := "null"
	if ok {
		h = `{"as_int": ` + hint + `}`
	}
	return fmt.Sprintf(`{"as_expr": {"expr_str": %q, "hint": %s}}`, expr, h)
}

// p13Meta is a float32 TensorMeta with the given sizes and strides.
func p13Meta(sizes, strides []string) string {
	var sz, st []string
	for i := range sizes {
		sz = append(sz, p13SymInt(sizes[i]))
		st = append(st, p13SymInt(strides[i]))
	}
	return fmt.Sprintf(`{"dtype": 7, "sizes": [%s], "requires_grad": false, "device": {"type": "cpu", "index": null}, "strides": [%s], "storage_offset": {"as_int": 0}, "layout": 7}`,
		strings.Join(sz, ", "), strings.Join(st, ", "))
}

// p13Archive writes a PT2 archive (torch ≥ 2.9 layout, no weights) of the
// program x → c = clone(x, memory_format=channels_last) → r = relu(c) → r,
// x: f32[s0, 3, u0, 4] with the strides xStrides, c and r channels_last.
// The channels_last strides (12*u0, 1, 12, 3) involve the unbacked u0, so
// they have no hint: only the symbol ranges can order them.
func p13Archive(t *testing.T, xStrides []string) string {
	t.Helper()
	sizes := []string{"s0@2", "3", "u0", "4"}
	cl := []string{"12*u0", "1", "12", "3"}
	in := func(name, arg string, kind int) string {
		return fmt.Sprintf(`{"name": %q, "arg": %s, "kind": %d}`, name, arg, kind)
	}
	ref := func(name string) string { return `{"as_tensor": {"name": "` + name + `"}}` }
	node := func(target, inputs, output string) string {
		return `{"target": "` + target + `", "inputs": [` + inputs + `], "outputs": [` + ref(output) + `], "metadata": {}}`
	}
	doc := fmt.Sprintf(`{"graph_module": {"graph": {"inputs": [%s], "outputs": [%s], "nodes": [%s, %s],
 "tensor_values": {"x": %s, "c": %s, "r": %s}},
 "signature": {"input_specs": [{"user_input": {"arg": %s}}], "output_specs": [{"user_output": {"arg": %s}}]}, "module_call_graph": []},
 "opset_version": {"aten": 10}, "range_constraints": {"s0": {"min_val": 2, "max_val": 8}, "u0": {"min_val": 0, "max_val": 16}},
 "schema_version": {"major": 8, "minor": 20}, "torch_version": "2.9.0"}`,
		ref("x"), ref("r"),
		node("torch.ops.aten.clone.default", in("self", ref("x"), 1)+", "+in("memory_format", `{"as_memory_format": 2}`, 2), "c"),
		node("torch.ops.aten.relu.default", in("self", ref("c"), 1), "r"),
		p13Meta(sizes, xStrides), p13Meta(sizes, cl), p13Meta(sizes, cl), ref("x"), ref("r"))
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, e := range []struct{ name, data string }{
		{"p13/archive_format", "pt2"}, {"p13/archive_version", "0"}, {"p13/byteorder", "little"}, {"p13/models/model.json", doc},
	} {
		w, err := zw.CreateHeader(&zip.FileHeader{Name: e.name, Method: zip.Store})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write([]byte(e.data)); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "p13.pt2")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// ET-P13: dim orders come from (possibly unbacked) strides through
// ir.DimOrderFromStrides, in the frontend; the lowering carries them to the
// TensorMeta dim_order of the .pte and to the dim_order argument of the
// clone kernel.
func TestInvariant_ET_P13(t *testing.T) {
	channelsLast := []int{0, 2, 3, 1}
	for _, c := range []struct {
		name     string
		xStrides []string
		xRead    []int // x's dim order as read
		xPTE     []int // x's TensorMeta dim_order in the .pte
	}{
		// A contiguous input: the channels_last c and r keep the dim order
		// the frontend derived from their unbacked strides.
		{"contiguous input", []string{"36*u0", "12*u0", "4", "1"}, nil, []int{0, 1, 2, 3}},
		// A channels_last input is read as such; portable-prepare makes
		// user inputs contiguous (ET-B05), as the Python exporter's
		// _make_contiguous did before tracing.
		{"channels_last input", []string{"12*u0", "1", "12", "3"}, channelsLast, []int{0, 1, 2, 3}},
	} {
		t.Run(c.name, func(t *testing.T) {
			p, err := pt2.Read(p13Archive(t, c.xStrides))
			if err != nil {
				t.Fatal(err)
			}
			if !p.Env.IsUnbacked("u0") {
				t.Fatal("u0 is not unbacked")
			}
			byName := map[string]*ir.Value{}
			for _, v := range p.Main.Inputs {
				byName[v.Name] = v
			}
			for _, n := range p.Main.Nodes() {
				for _, r := range n.Results {
					byName[r.Name] = r
				}
			}
			for name, want := range map[string][]int{"x": c.xRead, "c": channelsLast, "r": channelsLast} {
				v := byName[name]
				if v == nil || v.Tensor() == nil {
					t.Fatalf("no tensor %%%s in\n%s", name, ir.Print(p))
				}
				if got := v.Tensor().DimOrder; !slices.Equal(got, want) {
					t.Errorf("%%%s read with dim order %v, want %v", name, got, want)
				}
			}

			pl, err := pm.Build(pm.TargetExecuTorch, "executorch.portable")
			if err != nil {
				t.Fatal(err)
			}
			if _, err := pm.Run(p, pl, nil, pm.Config{VerifyEach: true}); err != nil {
				t.Fatalf("pipeline: %v", err)
			}
			cloned := false
			for _, n := range p.Main.Nodes() {
				if n.Op.Info().Name != "dim_order_ops._clone_dim_order.out" {
					continue
				}
				cloned = true
				if a := n.Arg("dim_order"); a.String() != "[0, 2, 3, 1]" {
					t.Errorf("%s: dim_order argument %v, want [0, 2, 3, 1]", n.Short(), a)
				}
			}
			if !cloned {
				t.Fatalf("no _clone_dim_order.out in the lowered program:\n%s", ir.Print(p))
			}
			ef, err := emit.Program(p, emit.Options{NoMetadataMethod: true})
			if err != nil {
				t.Fatalf("emit: %v", err)
			}
			b, err := pte.Encode(ef)
			if err != nil {
				t.Fatalf("encode: %v", err)
			}
			f, err := pte.Decode("p13.pte", b)
			if err != nil {
				t.Fatalf("decode: %v", err)
			}
			plan := f.Program.ExecutionPlan[0]
			if x := tensorValue(t, plan, plan.Inputs[0]); !slices.Equal(bytesToInts(x.DimOrder), c.xPTE) {
				t.Errorf("input TensorMeta dim_order %v, want %v", x.DimOrder, c.xPTE)
			}
			if r := tensorValue(t, plan, plan.Outputs[0]); !slices.Equal(bytesToInts(r.DimOrder), channelsLast) || r.Sizes[2] != 16 {
				t.Errorf("output TensorMeta sizes %v dim_order %v, want sizes [8 3 16 4] dim_order %v", r.Sizes, r.DimOrder, channelsLast)
			}
		})
	}
}

func bytesToInts(b []byte) []int {
	out := make([]int, len(b))
	for i, x := range b {
		out[i] = int(x)
	}
	return out
}
