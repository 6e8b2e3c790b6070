package pt2

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fxport/fxport/ir"
)

// symInt spells a SymInt: an integer, or an expression with an optional
// hint ("u0" has none, "s0@4" has hint 4).
func symInt(s string) string {
	if _, err := fmt.Sscanf(s, "%d", new(int)); err == nil && !strings.ContainsAny(s, "*su@(") {
		return `{"as_int": ` + s + `}`
	}
	expr, hint, ok := strings.Cut(s, "@")
	h := "null"
	if ok {
		h = `{"as_int": ` + hint + `}`
	}
	return fmt.Sprintf(`{"as_expr": {"expr_str": %q, "hint": %s}}`, expr, h)
}

// stridedMeta is a float32 TensorMeta with explicit sizes and strides.
func stridedMeta(sizes, strides []string) string {
	var sz, st []string
	for i := range sizes {
		sz = append(sz, symInt(sizes[i]))
		st = append(st, symInt(strides[i]))
	}
	return fmt.Sprintf(`{"dtype": 7, "sizes": [%s], "requires_grad": false, "device": {"type": "cpu", "index": null}, "strides": [%s], "storage_offset": {"as_int": 0}, "layout": 7}`,
		strings.Join(sz, ", "), strings.Join(st, ", "))
}

// dimOrderRanges constrains s0 to [2, 8] and u0 to [0, inf], u1 to [0, 8].
const dimOrderRanges = `"s0": {"min_val": 2, "max_val": 8}, "u0": {"min_val": 0}, "u1": {"min_val": 0, "max_val": 8}`

// ET-P13: the reader derives dim orders from symbolic strides with
// ir.DimOrderFromStrides, under the program's ranges; layouts without a dim
// order (expanded) read as contiguous and never fail the read.
func TestReadDimOrders(t *testing.T) {
	for _, c := range []struct {
		name           string
		sizes, strides []string
		want           []int
	}{
		{"channels_last static", []string{"2", "3", "4", "5"}, []string{"60", "1", "15", "3"}, []int{0, 2, 3, 1}},
		{"channels_last with hints", []string{"s0@2", "3", "4", "5"}, []string{"60", "1", "15", "3"}, []int{0, 2, 3, 1}},
		// the unbacked u0 has no hint: only its range orders 12*u0
		{"channels_last unbacked", []string{"s0@2", "3", "u0", "4"}, []string{"12*u0", "1", "12", "3"}, []int{0, 2, 3, 1}},
		{"channels_last srepr", []string{"s0@2", "3", "u0", "4"},
			[]string{"Mul(Integer(12), Symbol('u0', integer=True))", "1", "12", "3"}, []int{0, 2, 3, 1}},
		{"contiguous unbacked", []string{"s0@2", "3", "u0", "4"}, []string{"12*u0", "4*u0", "4", "1"}, nil},
		{"transposed unbacked", []string{"u0", "s0@2"}, []string{"1", "u0"}, []int{1, 0}},
		{"size one placed canonically", []string{"1", "3", "u0", "4"}, []string{"12*u0", "1", "12", "3"}, []int{0, 2, 3, 1}},
		// a stride that might be 0 (u1 in [0, 8]) is no error: u1 → 8
		{"maybe zero stride", []string{"4", "3"}, []string{"1", "u1"}, []int{1, 0}},
		// expanded layouts (stride 0 on a dim > 1) read as contiguous
		{"expanded", []string{"4", "3"}, []string{"0", "1"}, nil},
		{"expanded transposed", []string{"4", "3", "2"}, []string{"1", "0", "4"}, nil},
		{"expanded symbolic", []string{"s0@2", "3"}, []string{"0", "1"}, nil},
		// strides the reader cannot parse leave the contiguous order
		{"unparsable stride", []string{"4", "3"}, []string{"1", "foo(u0"}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			j := jprog{nodes: []string{relu}, outputs: []string{tref("relu")}, ranges: dimOrderRanges,
				tv: map[string]string{"x": stridedMeta(c.sizes, c.strides), "relu": stridedMeta(c.sizes, c.strides)}}
			p, err := readJSON(j.String())
			if err != nil {
				t.Fatalf("%v\n%s", err, j)
			}
			x := p.Main.Inputs[0].Tensor()
			if !slices.Equal(x.DimOrder, c.want) || (x.DimOrder == nil) != (c.want == nil) {
				t.Errorf("%%x: sizes %v strides %v read with dim order %v, want %v", c.sizes, c.strides, x.DimOrder, c.want)
			}
			if r := p.Main.Nodes()[0].Result().Tensor(); !slices.Equal(r.DimOrder, c.want) {
				t.Errorf("%%relu read with dim order %v, want %v", r.DimOrder, c.want)
			}
			if _, err := ir.Parse([]byte(ir.Print(p)), "reread.fxir"); err != nil {
				t.Errorf("the program does not print and parse back: %v", err)
			}
		})
	}
}

// Strides serve only the dim order: a symbol only they mention is not
// declared, and the order is derived after the ranges are read (they come
// after the graph in the file).
func TestReadDimOrderStrideSymbols(t *testing.T) {
	j := jprog{nodes: []string{relu}, outputs: []string{tref("relu")},
		ranges: `"u0": {"min_val": 0, "max_val": 2}`,
		tv:     map[string]string{"x": stridedMeta([]string{"u0", "3"}, []string{"1", "u0 + u9"})}}
	p, err := readJSON(j.String())
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(p.Env.Symbols(), "u9") {
		t.Errorf("u9, mentioned only by a stride, was declared: %v", p.Env.Symbols())
	}
	// u0 + u9 vs 1: u9 is unknown (unbounded, → 2^20), so dim 1 is outer.
	if got := p.Main.Inputs[0].Tensor().DimOrder; !slices.Equal(got, []int{1, 0}) {
		t.Errorf("dim order %v, want [1 0]", got)
	}
}

// A PT2 archive (torch ≥ 2.9 layout) whose channels_last input has an
// unbacked spatial dim reads with dim order [0, 2, 3, 1].
func TestReadDimOrderArchive(t *testing.T) {
	j := jprog{nodes: []string{relu}, outputs: []string{tref("relu")}, ranges: dimOrderRanges,
		tv: map[string]string{
			"x":    stridedMeta([]string{"s0@2", "3", "u0", "4"}, []string{"12*u0", "1", "12", "3"}),
			"relu": stridedMeta([]string{"s0@2", "3", "u0", "4"}, []string{"12*u0", "1", "12", "3"}),
		}}
	data := buildZip(t, []zentry{
		{name: "cl/archive_format", data: []byte("pt2")},
		{name: "cl/archive_version", data: []byte("0")},
		{name: "cl/byteorder", data: []byte("little")},
		{name: "cl/models/model.json", data: []byte(j.String())},
	})
	path := filepath.Join(t.TempDir(), "channels_last.pt2")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	p := mustRead(t, path)
	if got, _ := p.Meta.Get(MetaLayout); got != LayoutArchive {
		t.Fatalf("read as layout %q, want %q", got, LayoutArchive)
	}
	if !p.Env.IsUnbacked("u0") {
		t.Fatal("u0 is not unbacked")
	}
	for _, v := range []*ir.Value{p.Main.Inputs[0], p.Main.Nodes()[0].Result()} {
		if got := v.Tensor().DimOrder; !slices.Equal(got, []int{0, 2, 3, 1}) {
			t.Errorf("%s: dim order %v, want [0 2 3 1]", v, got)
		}
	}
	if text := ir.Print(p); !strings.Contains(text, "%x: f32[s0, 3, u0, 4]{0,2,3,1}") {
		t.Errorf("IR text lacks the channels_last input:\n%s", text)
	}
}
