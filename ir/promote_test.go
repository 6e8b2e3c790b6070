package ir_test

import (
	"testing"

	"github.com/fxport/fxport/ir"
)

func TestPromoteTypes(t *testing.T) {
	U := ir.Undefined
	cases := []struct{ a, b, want ir.DType }{
		{ir.Bool, ir.Bool, ir.Bool},
		{ir.Bool, ir.Uint8, ir.Uint8},
		{ir.Bool, ir.Float16, ir.Float16},
		{ir.Uint8, ir.Int8, ir.Int16},
		{ir.Uint8, ir.Int16, ir.Int16},
		{ir.Uint8, ir.Int64, ir.Int64},
		{ir.Int8, ir.Int32, ir.Int32},
		{ir.Int32, ir.Int64, ir.Int64},
		{ir.Int64, ir.Float16, ir.Float16},
		{ir.Uint8, ir.BFloat16, ir.BFloat16},
		{ir.Float16, ir.BFloat16, ir.Float32},
		{ir.Float16, ir.Float32, ir.Float32},
		{ir.BFloat16, ir.Float64, ir.Float64},
		{ir.Float32, ir.Float64, ir.Float64},
		{ir.Int32, ir.Complex32, ir.Complex32},
		{ir.Float16, ir.Complex32, ir.Complex32},
		{ir.BFloat16, ir.Complex32, ir.Complex64},
		{ir.Float32, ir.Complex32, ir.Complex64},
		{ir.Float64, ir.Complex64, ir.Complex128},
		{ir.Complex64, ir.Complex128, ir.Complex128},
		{ir.Uint16, ir.Uint16, ir.Uint16},
		{ir.Uint16, ir.Bool, ir.Uint16},
		{ir.Uint32, ir.Float32, ir.Float32},
		{ir.Uint16, ir.Int32, U},
		{ir.Uint64, ir.Uint8, U},
		{ir.Float8E4M3FN, ir.Float8E4M3FN, ir.Float8E4M3FN},
		{ir.Float8E4M3FN, ir.Float32, U},
		{ir.Float8E5M2, ir.Float8E4M3FN, U},
		{ir.QInt8, ir.Int8, U},
	}
	for _, c := range cases {
		if got := ir.PromoteTypes(c.a, c.b); got != c.want {
			t.Errorf("PromoteTypes(%s, %s) = %s, want %s", c.a, c.b, got, c.want)
		}
		if got := ir.PromoteTypes(c.b, c.a); got != c.want {
			t.Errorf("PromoteTypes(%s, %s) = %s, want %s (not symmetric)", c.b, c.a, got, c.want)
		}
	}
	// Symmetric and idempotent over every pair.
	for _, a := range ir.AllDTypes() {
		if got := ir.PromoteTypes(a, a); got != a {
			t.Errorf("PromoteTypes(%s, %s) = %s", a, a, got)
		}
		for _, b := range ir.AllDTypes() {
			if ir.PromoteTypes(a, b) != ir.PromoteTypes(b, a) {
				t.Errorf("PromoteTypes(%s, %s) is not symmetric", a, b)
			}
		}
	}
}

func TestResultTypeOf(t *testing.T) {
	T := func(d ir.DType) ir.Operand { return ir.Operand{DType: d} }
	Z := func(d ir.DType) ir.Operand { return ir.Operand{DType: d, ZeroDim: true} }
	S := func(d ir.DType) ir.Operand { return ir.Operand{DType: d, Scalar: true} }
	cases := []struct {
		name string
		ops  []ir.Operand
		want ir.DType
	}{
		{"i64 tensor + 1.5", []ir.Operand{T(ir.Int64), S(ir.Float64)}, ir.Float32},
		{"i64 tensor + 1", []ir.Operand{T(ir.Int64), S(ir.Int64)}, ir.Int64},
		{"i32 tensor + i64 0-dim", []ir.Operand{T(ir.Int32), Z(ir.Int64)}, ir.Int32},
		{"i32 tensor + f64 0-dim", []ir.Operand{T(ir.Int32), Z(ir.Float64)}, ir.Float64},
		{"u8 tensor + i8 tensor", []ir.Operand{T(ir.Uint8), T(ir.Int8)}, ir.Int16},
		{"u8 tensor + int", []ir.Operand{T(ir.Uint8), S(ir.Int64)}, ir.Uint8},
		{"bool + bool", []ir.Operand{T(ir.Bool), T(ir.Bool)}, ir.Bool},
		{"bool tensor + int", []ir.Operand{T(ir.Bool), S(ir.Int64)}, ir.Int64},
		{"bool tensor + float", []ir.Operand{T(ir.Bool), S(ir.Float64)}, ir.Float32},
		{"f16 + f32 0-dim", []ir.Operand{T(ir.Float16), Z(ir.Float32)}, ir.Float16},
		{"f16 tensor + float", []ir.Operand{T(ir.Float16), S(ir.Float64)}, ir.Float16},
		{"f16 0-dim + f32 0-dim", []ir.Operand{Z(ir.Float16), Z(ir.Float32)}, ir.Float32},
		{"i32 0-dim + 2.5", []ir.Operand{Z(ir.Int32), S(ir.Float64)}, ir.Float32},
		{"i32 0-dim + int", []ir.Operand{Z(ir.Int32), S(ir.Int64)}, ir.Int32},
		{"int + float scalars", []ir.Operand{S(ir.Int64), S(ir.Float64)}, ir.Float32},
		{"int tensor + complex", []ir.Operand{T(ir.Int32), S(ir.Complex128)}, ir.Complex64},
		{"f64 tensor + complex", []ir.Operand{T(ir.Float64), S(ir.Complex128)}, ir.Complex128},
		{"bf16 tensor + c64 0-dim", []ir.Operand{T(ir.BFloat16), Z(ir.Complex64)}, ir.Complex64},
		{"c64 tensor + f64 0-dim", []ir.Operand{T(ir.Complex64), Z(ir.Float64)}, ir.Complex64},
	}
	for _, c := range cases {
		got, err := ir.ResultTypeOf(c.ops...)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if got != c.want {
			t.Errorf("%s: got %s, want %s", c.name, got, c.want)
		}
	}
	if _, err := ir.ResultTypeOf(T(ir.Uint16), T(ir.Int32)); err == nil {
		t.Errorf("uint16 + int32 should not promote")
	}
	if _, err := ir.ResultTypeOf(); err == nil {
		t.Errorf("no operands should fail")
	}
}

func TestResultTypeArgs(t *testing.T) {
	p := ir.NewProgram()
	x, _ := p.Main.AddInput("x", ir.Tensor(ir.Int32, 3))
	s, _ := p.Main.AddInput("s", &ir.SymIntType{})
	f, _ := p.Main.AddInput("f", ir.SymFloat)
	cases := []struct {
		args []ir.Arg
		want ir.DType
	}{
		{[]ir.Arg{ir.ValueArg(x), ir.IntArg(2)}, ir.Int32},
		{[]ir.Arg{ir.ValueArg(x), ir.FloatArg(2)}, ir.Float32},
		{[]ir.Arg{ir.ValueArg(x), ir.BoolArg(true)}, ir.Int32},
		{[]ir.Arg{ir.ValueArg(x), ir.ValueArg(s)}, ir.Int32},
		{[]ir.Arg{ir.ValueArg(x), ir.ValueArg(f)}, ir.Float32},
		{[]ir.Arg{ir.ValueArg(x), ir.NoneArg()}, ir.Int32},
		{[]ir.Arg{ir.ListArg(ir.ValueArg(x), ir.FloatArg(1))}, ir.Float32},
	}
	for i, c := range cases {
		got, err := ir.ResultType(c.args...)
		if err != nil || got != c.want {
			t.Errorf("case %d: got %s, %v; want %s", i, got, err, c.want)
		}
	}
	if _, err := ir.ResultType(ir.StringArg("x")); err == nil {
		t.Errorf("a string takes no part in promotion")
	}
}

func TestCanCast(t *testing.T) {
	for _, c := range []struct {
		from, to ir.DType
		want     bool
	}{
		{ir.Int64, ir.Float32, true},
		{ir.Float32, ir.Int64, false},
		{ir.Float64, ir.Float16, true},
		{ir.Complex64, ir.Float32, false},
		{ir.Int32, ir.Bool, false},
		{ir.Bool, ir.Int8, true},
	} {
		if got := ir.CanCast(c.from, c.to); got != c.want {
			t.Errorf("CanCast(%s, %s) = %v", c.from, c.to, got)
		}
	}
}
