package ir

import (
	"strings"
	"testing"
)

func TestOpTable(t *testing.T) {
	tab := NewOpTable[string]("test table")
	tab.Add("add", OpAtenAddTensor, OpAtenAddScalar)
	tab.Add("relu", OpAtenRelu)
	if v, ok := tab.Lookup(OpAtenAddScalar); !ok || v != "add" {
		t.Fatalf("Lookup(add.Scalar) = %q, %v", v, ok)
	}
	if tab.Has(OpAtenSubTensor) {
		t.Fatal("sub.Tensor found in a table without it")
	}
	if _, ok := tab.Lookup(OpInvalid); ok {
		t.Fatal("OpInvalid found")
	}
	if got := tab.Ops(); len(got) != 3 || got[0] != OpAtenRelu || got[1] != OpAtenAddTensor || got[2] != OpAtenAddScalar {
		t.Fatalf("Ops() = %v, want relu, add.Tensor, add.Scalar (op order)", got)
	}
	tab.Put(OpAtenRelu, "relu2")
	if v, _ := tab.Lookup(OpAtenRelu); v != "relu2" || tab.Len() != 3 {
		t.Fatalf("after Put: %q, Len %d", v, tab.Len())
	}
	for _, c := range []struct {
		name string
		f    func()
		want string
	}{
		{"duplicate", func() { tab.Add("again", OpAtenAddTensor) }, "test table: aten.add.Tensor added twice"},
		{"invalid", func() { tab.Add("bad", OpInvalid) }, "test table: invalid op 0"},
	} {
		t.Run(c.name, func(t *testing.T) {
			defer func() {
				r := recover()
				if s, _ := r.(string); !strings.Contains(s, c.want) {
					t.Fatalf("panic %v, want %q", r, c.want)
				}
			}()
			c.f()
			t.Fatal("no panic")
		})
	}
}
