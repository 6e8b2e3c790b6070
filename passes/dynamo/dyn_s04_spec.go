package dynamo

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/fxport/fxport/ir/sym"
)

// MetaDynamicShapes is the program metadata key where the capture shim
// records the user's dynamic-shape specification (text or JSON form, see
// ParseDynamicShapes); apply-dynamic-shapes reads it.
const MetaDynamicShapes = "export.dynamic_shapes"

// DimSpec is one entry of a dynamic-shape specification: the user's name
// and range for one dim of one input.
type DimSpec struct {
	// Input is the input's flat name ("input_ids",
	// "past_key_values.layers.0.keys") or its placeholder name.
	Input string
	// Dim is the dim index; negative counts from the end.
	Dim int
	// Name is the symbol's new name; "" keeps it.
	Name string
	// Min and Max bound the dim; nil keeps the traced bound.
	Min, Max *sym.Bound
	// Where locates the entry for error messages.
	Where string
}

// Label is "input.dim" for messages.
func (d DimSpec) Label() string { return d.Input + "." + strconv.Itoa(d.Dim) }

// rangeText renders the entry's bounds ("[1, 64]", "[1, keep]").
func (d DimSpec) rangeText() string {
	b := func(x *sym.Bound) string {
		if x == nil {
			return "keep"
		}
		return x.String()
	}
	return "[" + b(d.Min) + ", " + b(d.Max) + "]"
}

// ParseDynamicShapes reads a dynamic-shape specification; source names it
// in errors ("option spec"). Two forms are accepted.
//
// Text: entries separated by commas, semicolons or newlines, each
//
//	<input>.<dim>=<name>             name the symbol of that dim
//	<input>.<dim>=<name>:<lo>..<hi>  name it and narrow its range
//	<input>.<dim>=<lo>..<hi>         only narrow the range
//
// where <input> is a flat input name (it may contain dots: the dim is the
// last component), <dim> an index (negative counts from the end), <lo> and
// <hi> integers, either one omitted to keep the traced bound, <hi> "inf"
// for no upper bound. Example: "input_ids.0=batch:1..64, input_ids.1=seq:1..inf".
//
// JSON, torch's dynamic_shapes layout: an object from input name to an
// object from dim index to either the symbol name or an object with
// optional "name", "min" and "max" ("max" may be "inf"), e.g.
// {"input_ids": {"0": {"name": "batch", "min": 1, "max": 64}, "1": "seq"}}.
func ParseDynamicShapes(text, source string) ([]DimSpec, error) {
	t := strings.TrimSpace(text)
	if t == "" {
		return nil, nil
	}
	if strings.HasPrefix(t, "{") {
		return parseDynamicShapesJSON(t, source)
	}
	var out []DimSpec
	entries := strings.FieldsFunc(t, func(r rune) bool { return r == ',' || r == ';' || r == '\n' })
	for i, e := range entries {
		e = strings.TrimSpace(e)
		if e == "" {
			continue
		}
		where := fmt.Sprintf("%s: entry %d %q", source, i+1, e)
		d, err := parseDimEntry(e)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", where, err)
		}
		d.Where = where
		out = append(out, d)
	}
	return out, nil
}

func parseDimEntry(e string) (DimSpec, error) {
	eq := strings.LastIndexByte(e, '=')
	if eq < 0 {
		return DimSpec{}, fmt.Errorf("want <input>.<dim>=<name>[:<lo>..<hi>]")
	}
	lhs, rhs := strings.TrimSpace(e[:eq]), strings.TrimSpace(e[eq+1:])
	dot := strings.LastIndexByte(lhs, '.')
	if dot <= 0 {
		return DimSpec{}, fmt.Errorf("%q is not <input>.<dim>", lhs)
	}
	dim, err := strconv.Atoi(lhs[dot+1:])
	if err != nil {
		return DimSpec{}, fmt.Errorf("dim %q is not an integer", lhs[dot+1:])
	}
	d := DimSpec{Input: lhs[:dot], Dim: dim}
	name, rng := rhs, ""
	switch {
	case strings.Contains(rhs, ":"):
		name, rng, _ = strings.Cut(rhs, ":")
		if rng == "" {
			return DimSpec{}, fmt.Errorf("empty range after %q", name+":")
		}
	case strings.Contains(rhs, ".."):
		name, rng = "", rhs
	}
	d.Name = strings.TrimSpace(name)
	if d.Name != "" && !sym.ValidName(d.Name) {
		return DimSpec{}, fmt.Errorf("%q is not a valid symbol name", d.Name)
	}
	if rng != "" {
		lo, hi, ok := strings.Cut(rng, "..")
		if !ok {
			return DimSpec{}, fmt.Errorf("range %q is not <lo>..<hi>", rng)
		}
		if d.Min, err = parseSpecBound(lo, false); err != nil {
			return DimSpec{}, err
		}
		if d.Max, err = parseSpecBound(hi, true); err != nil {
			return DimSpec{}, err
		}
	}
	if d.Name == "" && d.Min == nil && d.Max == nil {
		return DimSpec{}, fmt.Errorf("neither a name nor a range")
	}
	return d, d.checkRange()
}

// parseSpecBound reads one side of a range: "" (keep), an integer, or an
// infinity for the upper side.
func parseSpecBound(s string, upper bool) (*sym.Bound, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, nil
	}
	b, err := sym.ParseBound(s)
	if err != nil {
		return nil, fmt.Errorf("bound %q: want an integer%s", s, map[bool]string{true: " or inf", false: ""}[upper])
	}
	if !b.IsFinite() && !(upper && b.Inf > 0) {
		return nil, fmt.Errorf("bound %q: only the upper bound may be infinite (+inf)", s)
	}
	return &b, nil
}

func (d DimSpec) checkRange() error {
	if d.Min != nil && d.Max != nil && d.Min.Cmp(*d.Max) > 0 {
		return fmt.Errorf("min %s > max %s", d.Min, d.Max)
	}
	if d.Min != nil && d.Min.Cmp(sym.Finite(0)) < 0 {
		return fmt.Errorf("min %s is negative", d.Min)
	}
	return nil
}

func parseDynamicShapesJSON(text, source string) ([]DimSpec, error) {
	var top map[string]map[string]json.RawMessage
	dec := json.NewDecoder(strings.NewReader(text))
	dec.UseNumber()
	if err := dec.Decode(&top); err != nil {
		return nil, fmt.Errorf("%s: want {input: {dim: name or {name, min, max}}}: %v", source, err)
	}
	var out []DimSpec
	for _, input := range sortedKeys(top) {
		dims := top[input]
		keys := sortedKeys(dims)
		sort.SliceStable(keys, func(i, j int) bool {
			a, errA := strconv.Atoi(keys[i])
			b, errB := strconv.Atoi(keys[j])
			if errA == nil && errB == nil {
				return a < b
			}
			return keys[i] < keys[j]
		})
		for _, k := range keys {
			where := fmt.Sprintf("%s: %q dim %q", source, input, k)
			dim, err := strconv.Atoi(k)
			if err != nil {
				return nil, fmt.Errorf("%s: dim key is not an integer", where)
			}
			d, err := parseDimJSON(dims[k])
			if err != nil {
				return nil, fmt.Errorf("%s: %v", where, err)
			}
			d.Input, d.Dim, d.Where = input, dim, where
			out = append(out, d)
		}
	}
	return out, nil
}

func parseDimJSON(raw json.RawMessage) (DimSpec, error) {
	var name string
	if err := json.Unmarshal(raw, &name); err == nil {
		if !sym.ValidName(name) {
			return DimSpec{}, fmt.Errorf("%q is not a valid symbol name", name)
		}
		return DimSpec{Name: name}, nil
	}
	var obj struct {
		Name string          `json:"name"`
		Min  json.RawMessage `json:"min"`
		Max  json.RawMessage `json:"max"`
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&obj); err != nil {
		return DimSpec{}, fmt.Errorf("want a name or {\"name\", \"min\", \"max\"}: %v", err)
	}
	d := DimSpec{Name: obj.Name}
	if d.Name != "" && !sym.ValidName(d.Name) {
		return DimSpec{}, fmt.Errorf("%q is not a valid symbol name", d.Name)
	}
	var err error
	if d.Min, err = jsonBound(obj.Min, false); err != nil {
		return DimSpec{}, err
	}
	if d.Max, err = jsonBound(obj.Max, true); err != nil {
		return DimSpec{}, err
	}
	if d.Name == "" && d.Min == nil && d.Max == nil {
		return DimSpec{}, fmt.Errorf("neither a name nor a range")
	}
	return d, d.checkRange()
}

// jsonBound reads "min"/"max": absent or null (keep), a number, or a
// string such as "inf".
func jsonBound(raw json.RawMessage, upper bool) (*sym.Bound, error) {
	s := strings.TrimSpace(string(raw))
	if s == "" || s == "null" {
		return nil, nil
	}
	var str string
	if err := json.Unmarshal(raw, &str); err == nil {
		s = str
	}
	return parseSpecBound(s, upper)
}
