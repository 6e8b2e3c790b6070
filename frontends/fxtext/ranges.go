package fxtext

import (
	"math"
	"strings"

	"github.com/fxport/fxport/ir/sym"
)

// symRange is one entry of "Range constraints:".
type symRange struct {
	name string
	r    sym.Range
	pos  pos
}

// parseRanges reads the range constraints of an ExportedProgram print:
//
//	{s0: VR[2, int_oo], u0: VR[0, 10]}                     (torch >= 2.4)
//	{s0: ValueRanges(lower=2, upper=oo, is_bool=False)}     (torch 2.2-2.3)
//	{s0: RangeConstraint(min_val=2, max_val=9223372036854775806)}  (torch 2.1, "Symbol to range:")
func parseRanges(sec *section, file string) ([]symRange, error) {
	if strings.TrimSpace(sec.text) == "" {
		return nil, nil
	}
	lines, err := lexLines(sec.text, file, sec.pos.line)
	if err != nil {
		return nil, err
	}
	var toks []token
	for _, ll := range lines {
		toks = append(toks, ll.toks...)
	}
	ps := &parser{file: file, src: sec.text, toks: toks, endAt: sec.pos}
	e, err := ps.test()
	if err != nil {
		return nil, err
	}
	if !ps.atEnd() {
		return nil, errAt(file, ps.peek().pos, "range constraints: unexpected %s", ps.peek().describe())
	}
	if e.kind != eDict {
		return nil, errAt(file, e.pos, "range constraints: expected a {symbol: range} dict")
	}
	var out []symRange
	for i, key := range e.keys {
		v := e.elems[i]
		if !sym.ValidName(key) {
			return nil, errAt(file, v.pos, "range constraints: %q is not a symbol name", key)
		}
		r, err := rangeValue(v, file)
		if err != nil {
			return nil, err
		}
		out = append(out, symRange{name: key, r: r, pos: v.pos})
	}
	return out, nil
}

func rangeValue(v *expr, file string) (sym.Range, error) {
	switch {
	case v.kind == eSubscript && v.fn.kind == eName && v.fn.name == "VR":
		r, err := sym.ParseRange(v.text())
		if err != nil {
			return sym.Range{}, errAt(file, v.pos, "range constraints: %v", err)
		}
		return clampRange(r), nil
	case v.kind == eCall && v.fn.kind == eName && (v.fn.name == "ValueRanges" || v.fn.name == "RangeConstraint"):
		r := sym.Unbounded()
		for i, k := range v.keys {
			b, err := sym.ParseBound(strings.ReplaceAll(v.kw[i].text(), " ", ""))
			switch k {
			case "lower", "min_val":
				if err != nil {
					return r, errAt(file, v.kw[i].pos, "range constraints: %v", err)
				}
				r.Lo = b
			case "upper", "max_val":
				if err != nil {
					return r, errAt(file, v.kw[i].pos, "range constraints: %v", err)
				}
				r.Hi = b
			}
		}
		return clampRange(r), nil
	}
	return sym.Range{}, errAt(file, v.pos, "range constraints: expected VR[lo, hi], found %q", clip(v.text()))
}

// clampRange reads torch 2.1's "no upper bound" (sys.maxsize - 1) as infinity.
func clampRange(r sym.Range) sym.Range {
	if r.Hi.IsFinite() && r.Hi.V >= math.MaxInt64-1 {
		r.Hi = sym.PosInf()
	}
	if r.Lo.IsFinite() && r.Lo.V <= math.MinInt64+1 {
		r.Lo = sym.NegInf()
	}
	return r
}

// isUnbackedName reports torch's unbacked symbol names: u0 (and i0 in 2.1).
func isUnbackedName(name string) bool {
	if len(name) < 2 || (name[0] != 'u' && name[0] != 'i') {
		return false
	}
	for i := 1; i < len(name); i++ {
		if !isDigit(name[i]) {
			return false
		}
	}
	return true
}
