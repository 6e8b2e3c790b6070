package pt2schema

import (
	"bytes"
	"encoding/json"
	"math"
	"reflect"
	"strings"
	"testing"
)

func TestPyFloat(t *testing.T) {
	for f, want := range map[float64]string{
		1: "1.0", 0.5: "0.5", 1e-05: "1e-05", 0.0001: "0.0001", 1e16: "1e+16", 1e15: "1000000000000000.0",
		123.456: "123.456", math.Copysign(0, -1): "-0.0", 0: "0.0", 5e-324: "5e-324",
		math.MaxFloat64: "1.7976931348623157e+308", -2.5e-7: "-2.5e-07", 1.5e300: "1.5e+300",
	} {
		if got := PyFloat(f); got != want {
			t.Errorf("PyFloat(%v) = %s, want %s", f, got, want)
		}
	}
}

func encode(f func(e *Encoder)) string {
	var b bytes.Buffer
	e := NewEncoder(&b)
	f(e)
	if err := e.Flush(); err != nil {
		panic(err)
	}
	return b.String()
}

func TestEncoderLikePython(t *testing.T) {
	got := encode(func(e *Encoder) {
		e.BeginObject()
		e.Key("a")
		e.BeginArray()
		e.Int(1)
		e.Float(math.Inf(1))
		e.Float(math.Inf(-1))
		e.Float(math.NaN())
		e.Null()
		e.Bool(true)
		e.EndArray()
		e.Key("s\u00e9")
		e.Str("\"\\\n\r\t\b\f\x01\x7f é😀")
		e.Key("o")
		e.BeginObject()
		e.EndObject()
		e.EndObject()
	})
	// What json.dumps writes for the same value.
	want := `{"a": [1, "Infinity", "-Infinity", "NaN", null, true], "s\u00e9": "\"\\\n\r\t\b\f\u0001\u007f \u00e9\ud83d\ude00", "o": {}}`
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

func TestDecoderValues(t *testing.T) {
	d := NewDecoder([]byte(` {"s": "a\u00e9\ud83d\ude00\n\"x", "lone": "\udc00", "i": -12, "f": [1.5, 2, "Infinity", "-Infinity", "NaN", NaN, -Infinity, 1e999], "b": [1, null, "oo", 2.0, 99999999999999999999]} `))
	var s, lone string
	var i int64
	var fs []float64
	var bounds []string
	err := d.Object(func(key string) error {
		var err error
		switch key {
		case "s":
			s, err = d.Str()
		case "lone":
			lone, err = d.Str()
		case "i":
			i, err = d.Int()
		case "f":
			return d.Array(func(int) error {
				f, err := d.Float()
				fs = append(fs, f)
				return err
			})
		case "b":
			return d.Array(func(int) error {
				v, ok, err := d.IntOrInf()
				if ok {
					bounds = append(bounds, string(rune('0'+v)))
				} else {
					bounds = append(bounds, "inf")
				}
				return err
			})
		}
		return err
	})
	if err == nil {
		err = d.End()
	}
	if err != nil {
		t.Fatal(err)
	}
	if s != "aé😀\n\"x" || lone != "\uFFFD" || i != -12 {
		t.Errorf("s=%q lone=%q i=%d", s, lone, i)
	}
	if len(fs) != 8 || fs[0] != 1.5 || fs[1] != 2 || !math.IsInf(fs[2], 1) || !math.IsInf(fs[3], -1) || !math.IsNaN(fs[4]) || !math.IsNaN(fs[5]) || !math.IsInf(fs[6], -1) || !math.IsInf(fs[7], 1) {
		t.Errorf("floats %v", fs)
	}
	if strings.Join(bounds, ",") != "1,inf,inf,2,inf" {
		t.Errorf("bounds %v", bounds)
	}
}

func TestDecoderErrors(t *testing.T) {
	for _, c := range []struct{ doc, want string }{
		{`{"a": [1, 2, {"b": {"c": 1.5}}]}`, `a[2].b.c: expected an integer, found 1.5`},
		{`{"m": {"k.1": 99999999999999999999}}`, `["m"]["k.1"]: integer 99999999999999999999 does not fit in 64 bits`},
		{"{\"a\": \"x\ty\"}", `a: control character 0x9 in string`},
		{`{"a": "\x"}`, `a: invalid escape \x in string`},
		{`{"a": "\u12"}`, `a: malformed \u escape`},
		{`{"a": 1,}`, `expected an object key`},
		{`{"a": [1 2]}`, `a: expected ',' or ']' in array`},
		{`{"a": tru}`, `a: expected a JSON value`},
		{`{"a": -}`, `a: malformed number`},
		{`{"a": "x`, `a: unterminated string`},
		{`{"a": 1} x`, `unexpected data after the JSON value`},
		{strings.Repeat(`{"a": `, 1001) + "1" + strings.Repeat("}", 1001), `JSON nested deeper than 1000 levels`},
	} {
		d := NewDecoder([]byte(c.doc))
		var walk func() error
		walk = func() error {
			switch d.Peek() {
			case '{':
				return d.Map(func(k string) error {
					if k == "a" || k == "b" || k == "c" {
						d.path[len(d.path)-1].kind = 0 // render as fields
					}
					return walk()
				})
			case '[':
				return d.Array(func(int) error { return walk() })
			case '"':
				_, err := d.Str()
				return err
			case '-', '1', '2', '3', '4', '5', '6', '7', '8', '9', '0':
				_, err := d.Int()
				return err
			}
			return d.Skip()
		}
		err := walk()
		if err == nil {
			err = d.End()
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%.40s: got %v, want %q", c.doc, err, c.want)
		}
	}
	// Skip checks strings without decoding them.
	for _, bad := range []string{`["a\qb"]`, `["a` + "\x01" + `"]`, `["\u00zz"]`, `["abc`} {
		if err := NewDecoder([]byte(bad)).Skip(); err == nil {
			t.Errorf("Skip(%s) accepted it", bad)
		}
	}
}

func TestUnion(t *testing.T) {
	for _, c := range []struct{ doc, want string }{
		{`{"as_int": 3}`, ""},
		{`{"as_none": null, "as_int": 3, "as_float": null}`, ""},
		{`{"as_int": 3, "as_float": 1.0}`, `Argument has more than one member ("as_int" and "as_float")`},
		{`{}`, `empty Argument`},
		{`{"as_none": null}`, `empty Argument`},
		{`{"as_bar": 1}`, `unknown Argument tag "as_bar"`},
		{`[1]`, `expected a Argument (an object with one member), found an array`},
		{`{"as_int": "3"}`, `as_int: expected an integer, found a string`},
	} {
		a, err := DecodeArgument(NewDecoder([]byte(c.doc)))
		if c.want == "" {
			if err != nil || a.Tag != TagInt || a.Int != 3 {
				t.Errorf("%s: %+v %v", c.doc, a, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want %q", c.doc, err, c.want)
		}
	}
}

// TestArgumentRoundTrip encodes every Argument kind and decodes it back.
func TestArgumentRoundTrip(t *testing.T) {
	idx := int64(1)
	args := []Argument{
		{Tag: TagNone}, {Tag: TagTensor, Name: "x"},
		{Tag: TagTensors, Elems: []Argument{{Tag: TagTensor, Name: "a"}, {Tag: TagTensor, Name: "b"}}},
		{Tag: TagInt, Int: -3}, {Tag: TagInts, Ints: []int64{1, -1}}, {Tag: TagFloat, Float: 0.25},
		{Tag: TagFloats, Floats: []float64{1, math.Inf(1)}}, {Tag: TagString, Str: "tanh"},
		{Tag: TagStrings, Strs: []string{"a", ""}}, {Tag: TagSymInt, Name: "s"},
		{Tag: TagSymInts, Elems: []Argument{{Tag: TagSymInt, Name: "s"}, {Tag: TagInt, Int: 4}}},
		{Tag: TagScalarType, Int: 7}, {Tag: TagMemoryFormat, Int: 2}, {Tag: TagLayout, Int: 7},
		{Tag: TagDevice, Device: Device{Type: "cuda", Index: &idx}}, {Tag: TagBool, Bool: true},
		{Tag: TagBools, Bools: []bool{true, false}}, {Tag: TagSymBool, Name: "c"},
		{Tag: TagSymBools, Elems: []Argument{{Tag: TagSymBool, Name: "c"}, {Tag: TagBool, Bool: true}}},
		{Tag: TagOptionalTensors, Elems: []Argument{{Tag: TagNone}, {Tag: TagTensor, Name: "t"}}},
		{Tag: TagCustomObj, Name: "o", Str: "__torch__.Foo"}, {Tag: TagOperator, Str: "torch.ops.aten.add.Tensor"},
		{Tag: TagSymFloat, Name: "f"},
		{Tag: TagSymFloats, Elems: []Argument{{Tag: TagSymFloat, Name: "f"}, {Tag: TagFloat, Float: 2}}},
		{Tag: TagComplex, Float: 1, Imag: -2},
		{Tag: TagNestedTensors, Elems: []Argument{{Tag: TagTensors, Elems: []Argument{{Tag: TagTensor, Name: "a"}}}, {Tag: TagTensors, Elems: []Argument{}}}},
		{Tag: TagIntLists, Elems: []Argument{{Tag: TagInts, Ints: []int64{1}}, {Tag: TagInts, Ints: []int64{}}}},
		{Tag: TagFloatLists, Elems: []Argument{{Tag: TagFloats, Floats: []float64{0.5}}}},
		{Tag: TagStringToArgument, Keys: []string{"k"}, Elems: []Argument{{Tag: TagInt, Int: 1}}},
	}
	for _, a := range args {
		text := encode(func(e *Encoder) {
			if err := EncodeArgument(e, a); err != nil {
				t.Fatal(err)
			}
		})
		got, err := DecodeArgument(NewDecoder([]byte(text)))
		if err != nil {
			t.Errorf("%s: %v", text, err)
			continue
		}
		if !reflect.DeepEqual(normalize(a), normalize(got)) {
			t.Errorf("%s read back as %+v", text, got)
		}
	}
}

// normalize makes empty and nil slices compare equal.
func normalize(a Argument) Argument {
	if len(a.Ints) == 0 {
		a.Ints = nil
	}
	if len(a.Floats) == 0 {
		a.Floats = nil
	}
	if len(a.Strs) == 0 {
		a.Strs = nil
	}
	if len(a.Bools) == 0 {
		a.Bools = nil
	}
	if len(a.Elems) == 0 {
		a.Elems = nil
	}
	if len(a.Keys) == 0 {
		a.Keys = nil
	}
	for i := range a.Elems {
		a.Elems[i] = normalize(a.Elems[i])
	}
	return a
}

func TestSpecsRoundTrip(t *testing.T) {
	tr := true
	ins := []InputSpec{
		{Kind: InUserInput, Arg: Argument{Tag: TagTensor, Name: "x"}},
		{Kind: InParameter, Arg: Argument{Tag: TagTensor, Name: "p"}, Target: "fc.weight"},
		{Kind: InBuffer, Arg: Argument{Tag: TagTensor, Name: "b"}, Target: "buf", Persistent: &tr},
		{Kind: InTensorConstant, Arg: Argument{Tag: TagTensor, Name: "c"}, Target: "k"},
		{Kind: InCustomObj, Arg: Argument{Tag: TagCustomObj, Name: "o", Str: "Foo"}, Target: "obj"},
		{Kind: InToken, Arg: Argument{Tag: TagTensor, Name: "tok"}},
		{Kind: InConstantInput, Name: "n", Value: Argument{Tag: TagFloat, Float: 0.5}},
	}
	for _, in := range ins {
		text := encode(func(e *Encoder) {
			if err := EncodeInputSpec(e, &in); err != nil {
				t.Fatal(err)
			}
		})
		got, err := DecodeInputSpec(NewDecoder([]byte(text)))
		if err != nil || !reflect.DeepEqual(got, in) {
			t.Errorf("%s read back as %+v (%v)", text, got, err)
		}
	}
	for k := OutUserOutput; k <= OutParameterMutation; k++ {
		out := OutputSpec{Kind: k, Arg: Argument{Tag: TagTensor, Name: "y"}}
		if outputTargets[k] != "" {
			out.Target = "t"
		}
		text := encode(func(e *Encoder) {
			if err := EncodeOutputSpec(e, &out); err != nil {
				t.Fatal(err)
			}
		})
		got, err := DecodeOutputSpec(NewDecoder([]byte(text)))
		if err != nil || !reflect.DeepEqual(got, out) {
			t.Errorf("%s read back as %+v (%v)", text, got, err)
		}
	}
}

func TestTensorMetaDefaults(t *testing.T) {
	m, err := DecodeTensorMeta(NewDecoder([]byte(`{"meta": {"dtype": "BFLOAT16", "sizes": [{"as_int": 2}, 3], "storage_offset": 4}}`)))
	if err != nil {
		t.Fatal(err)
	}
	if m.DType != 13 || len(m.Sizes) != 2 || m.Sizes[1].Int != 3 || m.StorageOffset.Int != 4 || m.Layout != 7 || m.Device.Type != "cpu" {
		t.Errorf("%+v", m)
	}
	if _, err := DecodeTensorMeta(NewDecoder([]byte(`{"sizes": []}`))); err == nil {
		t.Error("a TensorMeta without dtype was accepted")
	}
}

// Escaped strings decode as encoding/json decodes them: slowStr sizes its
// buffer from the escaped length, which must never cut a string short.
func TestEscapedStringsMatchEncodingJSON(t *testing.T) {
	pieces := []string{`\"`, `\\`, `\/`, `\n`, `\t`, `\b`, `\f`, `\r`, `\u00e9`, `\u4e2d`, `\ud83d\ude00`, `\udc00`, `\ud83dx`, "é", "中", "a", " "}
	rng := uint64(1)
	for trial := 0; trial < 2000; trial++ {
		var raw strings.Builder
		raw.WriteString(`\n`) // always escaped: slowStr
		for k := 0; k < trial%40; k++ {
			rng = rng*6364136223846793005 + 1442695040888963407
			raw.WriteString(pieces[(rng>>33)%uint64(len(pieces))])
		}
		text := `"` + raw.String() + `"`
		var want string
		if err := json.Unmarshal([]byte(text), &want); err != nil {
			t.Fatalf("encoding/json rejects %s: %v", text, err)
		}
		got, err := NewDecoder([]byte(text)).Str()
		if err != nil || got != want {
			t.Fatalf("Str(%s) = %q, %v; want %q", text, got, err, want)
		}
	}
}
