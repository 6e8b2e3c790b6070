package fbs

import (
	"strings"
	"testing"

	"github.com/fxport/fxport/targets/executorch/schema"
)

// Slot numbers of the parsed schemas follow pte-format.md §2: a union
// takes two slots, fields are numbered in order.
func TestProgramSlots(t *testing.T) {
	s, err := Parse(schema.FS, schema.Program)
	if err != nil {
		t.Fatal(err)
	}
	if s.RootType != "Program" || s.FileIdentifier != "ET12" {
		t.Errorf("root %s identifier %s", s.RootType, s.FileIdentifier)
	}
	slot := func(table, field string) int {
		for _, f := range s.Tables[table].Fields {
			if f.Name == field {
				return f.Slot
			}
		}
		t.Fatalf("%s.%s missing", table, field)
		return -1
	}
	for _, c := range []struct {
		table, field string
		slot         int
	}{
		{"Program", "named_data", 7},
		{"ExecutionPlan", "non_const_buffer_device", 9},
		{"EValue", "val_type", 0},
		{"EValue", "val", 1},
		{"Instruction", "instr_args", 1},
		{"Tensor", "extra_tensor_info", 9},
		{"ExtraTensorInfo", "device_index", 4},
	} {
		if got := slot(c.table, c.field); got != c.slot {
			t.Errorf("%s.%s slot %d, want %d", c.table, c.field, got, c.slot)
		}
	}
	if s.Enums["ScalarType"] != 1 || s.EnumValues["ScalarType"][15] != "BFLOAT16" {
		t.Errorf("ScalarType %d %v", s.Enums["ScalarType"], s.EnumValues["ScalarType"])
	}
	x, err := Parse(schema.FS, schema.XNNPACK)
	if err != nil {
		t.Fatal(err)
	}
	u := x.Unions["XNodeUnion"]
	if u.Names[47] != "XNNCos" || u.Members[1] != "XNNNode2x1" || u.Names[36] != "XNNScaledDotProductAttention" {
		t.Errorf("XNodeUnion %v", u.Names)
	}
	if x.Enums["XNNDatatype"] != 2 || x.FileIdentifier != "XN01" {
		t.Errorf("XNNDatatype size %d, identifier %s", x.Enums["XNNDatatype"], x.FileIdentifier)
	}
}

func TestParseErrors(t *testing.T) {
	for src, want := range map[string]string{
		"table T { a: Missing; }": "unknown type",
		"table T { a: int }":      `expected ";"`,
		"enum E : nope { A }":     "bad underlying type",
		"union U { A }":           "unknown table A",
		"root_type Nope;":         "root_type Nope",
		"table T { a: [int; }":    `expected "]"`,
		"/* open":                 "unterminated comment",
	} {
		fsys := mapFS{"x.fbs": src}
		_, err := Parse(fsys, "x.fbs")
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: got %v, want %q", src, err, want)
		}
	}
}

func TestVerifyRejects(t *testing.T) {
	s, err := Parse(schema.FS, schema.Program)
	if err != nil {
		t.Fatal(err)
	}
	for name, buf := range map[string][]byte{
		"short":       {1, 2, 3},
		"root past":   []byte("\xff\x00\x00\x00ET12"),
		"vtable past": []byte("\x08\x00\x00\x00ET12\x00\x01\x00\x00"),
	} {
		if err := s.Verify(buf, "ET12"); err == nil {
			t.Errorf("%s: verified", name)
		}
	}
}
