package pt2schema

// Scalars: numbers, strings, bools and the float spellings torch uses.

import (
	"math"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// number scans a JSON number and reports its text and whether it is an
// integer (no fraction, no exponent). It also accepts -Infinity.
func (d *Decoder) number() (string, bool, error) {
	d.skipWS()
	start := d.pos
	i := d.pos
	if i < d.end && d.data[i] == '-' {
		i++
		if d.end-i >= 8 && string(d.data[i:i+8]) == "Infinity" {
			d.pos = i + 8
			return "-Infinity", false, nil
		}
	}
	digits := func() int {
		n := 0
		for i < d.end && d.data[i] >= '0' && d.data[i] <= '9' {
			i++
			n++
		}
		return n
	}
	if i < d.end && d.data[i] == '0' {
		i++
	} else if digits() == 0 {
		return "", false, d.Errorf("malformed number")
	}
	isInt := true
	if i < d.end && d.data[i] == '.' {
		i++
		isInt = false
		if digits() == 0 {
			return "", false, d.Errorf("malformed number")
		}
	}
	if i < d.end && (d.data[i] == 'e' || d.data[i] == 'E') {
		i++
		isInt = false
		if i < d.end && (d.data[i] == '+' || d.data[i] == '-') {
			i++
		}
		if digits() == 0 {
			return "", false, d.Errorf("malformed number")
		}
	}
	d.pos = i
	return string(d.data[start:i]), isInt, nil
}

// Int reads an integer that fits in an int64.
func (d *Decoder) Int() (int64, error) {
	c := d.Peek()
	if c != '-' && (c < '0' || c > '9') {
		return 0, d.Errorf("expected an integer, found %s", d.describe())
	}
	text, isInt, err := d.number()
	if err != nil {
		return 0, err
	}
	if !isInt {
		return 0, d.Errorf("expected an integer, found %s", text)
	}
	v, err := strconv.ParseInt(text, 10, 64)
	if err != nil {
		return 0, d.Errorf("integer %s does not fit in 64 bits", text)
	}
	return v, nil
}

// IntOrInf reads an integer bound, where null, the strings "Infinity" and
// "-Infinity", and integers beyond 64 bits mean "unbounded" (ok=false).
func (d *Decoder) IntOrInf() (v int64, ok bool, err error) {
	switch c := d.Peek(); {
	case c == 'n':
		if d.IsNull() {
			return 0, false, nil
		}
	case c == '"':
		s, err := d.Str()
		if err != nil {
			return 0, false, err
		}
		switch s {
		case "Infinity", "-Infinity", "inf", "-inf", "oo", "-oo", "int_oo", "-int_oo":
			return 0, false, nil
		}
		return 0, false, d.Errorf("expected an integer bound, found string %q", s)
	case c == 'I' || c == '-' || c >= '0' && c <= '9':
		if d.literal("Infinity") {
			return 0, false, nil
		}
		text, isInt, err := d.number()
		if err != nil {
			return 0, false, err
		}
		if text == "-Infinity" {
			return 0, false, nil
		}
		if !isInt {
			f, err := strconv.ParseFloat(text, 64)
			if err != nil || f != math.Trunc(f) {
				return 0, false, d.Errorf("expected an integer bound, found %s", text)
			}
			if math.Abs(f) >= 1<<63 {
				return 0, false, nil
			}
			return int64(f), true, nil
		}
		v, err := strconv.ParseInt(text, 10, 64)
		if err != nil {
			return 0, false, nil // beyond int64: unbounded
		}
		return v, true, nil
	}
	return 0, false, d.Errorf("expected an integer bound, found %s", d.describe())
}

// Float reads a number, or one of the strings (or bare tokens) "Infinity",
// "-Infinity", "NaN" that torch and Python use for non-finite floats.
func (d *Decoder) Float() (float64, error) {
	switch c := d.Peek(); {
	case c == '"':
		s, err := d.Str()
		if err != nil {
			return 0, err
		}
		switch s {
		case "Infinity", "inf":
			return math.Inf(1), nil
		case "-Infinity", "-inf":
			return math.Inf(-1), nil
		case "NaN", "nan":
			return math.NaN(), nil
		}
		return 0, d.Errorf("expected a float, found string %q", s)
	case c == 'N':
		if d.literal("NaN") {
			return math.NaN(), nil
		}
	case c == 'I':
		if d.literal("Infinity") {
			return math.Inf(1), nil
		}
	case c == '-' || c >= '0' && c <= '9':
		text, _, err := d.number()
		if err != nil {
			return 0, err
		}
		if text == "-Infinity" {
			return math.Inf(-1), nil
		}
		f, err := strconv.ParseFloat(text, 64)
		if err != nil {
			// Out of range: ParseFloat returns ±Inf, as Python does.
			if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
				return f, nil
			}
			return 0, d.Errorf("malformed float %s", text)
		}
		return f, nil
	}
	return 0, d.Errorf("expected a float, found %s", d.describe())
}

// Bool reads true or false.
func (d *Decoder) Bool() (bool, error) {
	if d.Peek() == 't' && d.literal("true") {
		return true, nil
	}
	if d.Peek() == 'f' && d.literal("false") {
		return false, nil
	}
	return false, d.Errorf("expected a bool, found %s", d.describe())
}

// knownKeys are the schema's field names and union tags; object keys equal
// to one of them are not allocated again for every object.
var knownKeys = func() map[string]string {
	m := map[string]string{}
	for _, k := range strings.Fields(`name arg kind target inputs outputs metadata
		is_hop_single_tensor_return dtype sizes requires_grad device strides storage_offset layout
		type index expr_str hint as_expr as_name as_int as_bool as_float as_none as_tensor
		as_tensors as_ints as_floats as_string as_strings as_sym_int as_sym_ints as_scalar_type
		as_memory_format as_layout as_device as_bools as_sym_bool as_sym_bools as_graph
		as_optional_tensors as_custom_obj as_operator as_sym_float as_sym_floats graph class_fqn
		path_name is_param use_pickle tensor_meta min_val max_val stack_trace nn_module_stack
		source_fn_stack torch_fn from_node custom`) {
		m[k] = k
	}
	return m
}()

// key reads an object key, reusing the string of a known field name.
func (d *Decoder) key() (string, error) {
	if d.Peek() == '"' {
		if end := d.pos + 1 + bytesIndexQuote(d.data[d.pos+1:d.end]); end > d.pos+1 {
			if k, ok := knownKeys[string(d.data[d.pos+1:end])]; ok {
				d.pos = end + 1
				return k, nil
			}
		}
	}
	return d.Str()
}

// bytesIndexQuote returns the index of the first '"' in b when no escape
// comes before it, or -1.
func bytesIndexQuote(b []byte) int {
	for i, c := range b {
		switch c {
		case '"':
			return i
		case '\\':
			return -1
		}
	}
	return -1
}

// skipStr consumes a string without decoding it, checking its escapes.
func (d *Decoder) skipStr() error {
	for i := d.pos + 1; i < d.end; i++ {
		switch c := d.data[i]; {
		case c == '"':
			d.pos = i + 1
			return nil
		case c < 0x20:
			return d.Errorf("control character %#x in string", c)
		case c == '\\':
			if i+1 >= d.end {
				return d.Errorf("unterminated string")
			}
			switch d.data[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i++
			case 'u':
				if _, ok := hex4(d.data[i+2 : d.end]); !ok {
					return d.Errorf("malformed \\u escape in string")
				}
				i += 5
			default:
				return d.Errorf("invalid escape \\%c in string", d.data[i+1])
			}
		}
	}
	return d.Errorf("unterminated string")
}

// Str reads a string, decoding escapes. Invalid UTF-8 and lone surrogates
// become U+FFFD.
func (d *Decoder) Str() (string, error) {
	if d.Peek() != '"' {
		return "", d.Errorf("expected a string, found %s", d.describe())
	}
	start := d.pos + 1
	i := start
	for i < d.end {
		c := d.data[i]
		if c == '"' {
			s := d.data[start:i]
			d.pos = i + 1
			if utf8.Valid(s) {
				return string(s), nil
			}
			return strings.ToValidUTF8(string(s), "\uFFFD"), nil
		}
		if c == '\\' {
			return d.slowStr(start)
		}
		if c < 0x20 {
			return "", d.Errorf("control character %#x in string", c)
		}
		i++
	}
	return "", d.Errorf("unterminated string")
}

func (d *Decoder) slowStr(start int) (string, error) {
	// Size the builder once: the decoded string is never longer than its
	// escaped form. Grown by doubling instead, it allocated about twice
	// the string and kept up to twice its bytes alive (the node metadata
	// of a 100k-node program: 170 MB allocated, 70 MB kept).
	var b strings.Builder
	b.Grow(rawStrLen(d.data[start:d.end]))
	i := start
	for i < d.end {
		c := d.data[i]
		switch {
		case c == '"':
			d.pos = i + 1
			return strings.ToValidUTF8(b.String(), "\uFFFD"), nil
		case c < 0x20:
			return "", d.Errorf("control character %#x in string", c)
		case c != '\\':
			b.WriteByte(c)
			i++
			continue
		}
		if i+1 >= d.end {
			break
		}
		e := d.data[i+1]
		i += 2
		switch e {
		case '"', '\\', '/':
			b.WriteByte(e)
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'u':
			r, ok := hex4(d.data[i:d.end])
			if !ok {
				return "", d.Errorf("malformed \\u escape in string")
			}
			i += 4
			if utf16.IsSurrogate(r) {
				if d.end-i >= 6 && d.data[i] == '\\' && d.data[i+1] == 'u' {
					if r2, ok := hex4(d.data[i+2 : d.end]); ok {
						if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
							b.WriteRune(dec)
							i += 6
							continue
						}
					}
				}
				r = utf8.RuneError
			}
			b.WriteRune(r)
		default:
			return "", d.Errorf("invalid escape \\%c in string", e)
		}
	}
	return "", d.Errorf("unterminated string")
}

// rawStrLen is the length of the escaped string that starts b, up to its
// closing quote (or the end of b).
func rawStrLen(b []byte) int {
	for i := 0; i < len(b); i++ {
		switch b[i] {
		case '"':
			return i
		case '\\':
			i++
		}
	}
	return len(b)
}

func hex4(b []byte) (rune, bool) {
	if len(b) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range b[:4] {
		r <<= 4
		switch {
		case c >= '0' && c <= '9':
			r |= rune(c - '0')
		case c >= 'a' && c <= 'f':
			r |= rune(c - 'a' + 10)
		case c >= 'A' && c <= 'F':
			r |= rune(c - 'A' + 10)
		default:
			return 0, false
		}
	}
	return r, true
}

// Strs reads a list of strings.
func (d *Decoder) Strs() ([]string, error) {
	out := []string{}
	err := d.Array(func(int) error {
		s, err := d.Str()
		out = append(out, s)
		return err
	})
	return out, err
}

// StrMap reads a Dict[str, str] in file order.
func (d *Decoder) StrMap() ([]KV, error) {
	var out []KV
	err := d.Map(func(k string) error {
		v, err := d.Str()
		out = append(out, KV{k, v})
		return err
	})
	return out, err
}

// KV is one entry of a Dict[str, str].
type KV struct{ Key, Value string }
