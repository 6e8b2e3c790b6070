package fxtext

import (
	"fmt"
	"strings"

	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/ir/sym"
)

// annotType reads a type annotation as torch prints them:
//
//	"f32[s0, 4]"          a tensor (dtype abbreviation and sizes)
//	"f32[3, 4][4, 1]cpu"  with strides and device (inductor logs); strides are dropped
//	"Sym(s0)"             a SymInt (a SymBool when the expression is a condition)
//	"i64[]"               a 0-dim tensor
//
// IR type spellings ("SymInt", "list<f32[2]>", "token", "f32[2]@cuda:0") and
// the Python scalar names int, float, bool, str are accepted too.
//
// ok is false for annotations that carry no type fxtext can use (a Python
// class such as torch.Tensor, or a Sym(...) whose expression is not an
// integer expression, e.g. a SymFloat's); the type then comes from shape
// inference. isSym reports a Sym(...) annotation, which cannot tell SymInt
// from SymFloat or SymBool.
func annotType(text string) (t ir.Type, isSym, ok bool, err error) {
	text = strings.TrimSpace(text)
	switch text {
	case "int":
		return ir.IntType, false, true, nil
	case "float":
		return ir.FloatType, false, true, nil
	case "bool":
		return ir.BoolType, false, true, nil
	case "str":
		return ir.StringType, false, true, nil
	case "SymInt", "SymFloat", "SymBool", "torch.SymInt", "torch.SymFloat", "torch.SymBool":
		t, _ := ir.ParseType(strings.TrimPrefix(text, "torch."))
		return t, true, true, nil
	}
	if strings.HasPrefix(text, "Sym(") && strings.HasSuffix(text, ")") {
		e, perr := sym.Parse(text[4 : len(text)-1])
		if perr != nil {
			return nil, true, false, nil
		}
		if e.IsBool() {
			return &ir.SymBoolType{Expr: e}, true, true, nil
		}
		return &ir.SymIntType{Expr: e}, true, true, nil
	}
	if i := strings.IndexByte(text, '['); i > 0 {
		if dt, known := ir.DTypeFromAbbr(text[:i]); known {
			return tensorAnnot(text, i, dt)
		}
	}
	if t, perr := ir.ParseType(text); perr == nil {
		return t, false, true, nil
	}
	return nil, false, false, nil
}

// tensorAnnot reads "dt[sizes]", optionally followed by "[strides]" and a device.
func tensorAnnot(text string, open int, dt ir.DType) (ir.Type, bool, bool, error) {
	closeAt := matchBracket(text, open)
	if closeAt < 0 {
		return nil, false, false, fmt.Errorf("annotation %q: unbalanced '['", text)
	}
	t, err := ir.ParseType(text[:closeAt+1])
	if err != nil {
		return nil, false, false, fmt.Errorf("annotation %q: %v", text, err)
	}
	tt := t.(*ir.TensorType)
	rest := text[closeAt+1:]
	if strings.HasPrefix(rest, "[") {
		c := matchBracket(rest, 0)
		if c < 0 {
			return nil, false, false, fmt.Errorf("annotation %q: unbalanced '[' in strides", text)
		}
		rest = rest[c+1:]
	}
	rest = strings.TrimPrefix(rest, "@")
	switch {
	case rest == "" || rest == "cpu":
	case isDeviceName(rest):
		tt.Device = rest
	default:
		return nil, false, false, fmt.Errorf("annotation %q: unexpected %q after the sizes", text, rest)
	}
	return tt, false, true, nil
}

func matchBracket(s string, open int) int {
	depth := 0
	for i := open; i < len(s); i++ {
		switch s[i] {
		case '[':
			depth++
		case ']':
			depth--
			if depth == 0 {
				return i
			}
		}
	}
	return -1
}

// isDeviceName accepts torch device spellings: cuda, cuda:0, meta, mps, xpu:1.
func isDeviceName(s string) bool {
	name, index, hasIndex := strings.Cut(s, ":")
	if !isIdentifier(name) {
		return false
	}
	if hasIndex {
		if index == "" {
			return false
		}
		for i := 0; i < len(index); i++ {
			if !isDigit(index[i]) {
				return false
			}
		}
	}
	return true
}

// typeSymbols lists the size symbols of a type (tensor dims only).
func typeSymbols(t ir.Type) []string {
	tt := ir.AsTensor(t)
	if tt == nil {
		return nil
	}
	var out []string
	for _, d := range tt.Shape {
		out = append(out, d.Symbols()...)
	}
	return out
}
