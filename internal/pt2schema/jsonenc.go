package pt2schema

import (
	"bufio"
	"io"
	"math"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// Encoder writes JSON the way Python's json.dumps does by default: ", "
// between elements, ": " after keys, ASCII-only strings and floats in
// Python repr form. Non-finite floats are written as the strings
// "Infinity", "-Infinity" and "NaN", as torch's serializer does. The first
// write error sticks and is returned by Flush.
type Encoder struct {
	w        *bufio.Writer
	err      error
	first    []bool // per open container: no element written yet
	afterKey bool
	scratch  []byte
}

// NewEncoder returns an encoder writing to w.
func NewEncoder(w io.Writer) *Encoder {
	return &Encoder{w: bufio.NewWriterSize(w, 64<<10)}
}

// Flush writes buffered output and returns the first error seen.
func (e *Encoder) Flush() error {
	if e.err != nil {
		return e.err
	}
	e.err = e.w.Flush()
	return e.err
}

func (e *Encoder) write(s string) {
	if e.err == nil {
		_, e.err = e.w.WriteString(s)
	}
}

func (e *Encoder) writeBytes(b []byte) {
	if e.err == nil {
		_, e.err = e.w.Write(b)
	}
}

// sep writes the separator before a value.
func (e *Encoder) sep() {
	if e.afterKey {
		e.afterKey = false
		return
	}
	if n := len(e.first); n > 0 {
		if e.first[n-1] {
			e.first[n-1] = false
		} else {
			e.write(", ")
		}
	}
}

// BeginObject opens an object.
func (e *Encoder) BeginObject() {
	e.sep()
	e.write("{")
	e.first = append(e.first, true)
}

// EndObject closes an object.
func (e *Encoder) EndObject() {
	e.first = e.first[:len(e.first)-1]
	e.write("}")
}

// BeginArray opens an array.
func (e *Encoder) BeginArray() {
	e.sep()
	e.write("[")
	e.first = append(e.first, true)
}

// EndArray closes an array.
func (e *Encoder) EndArray() {
	e.first = e.first[:len(e.first)-1]
	e.write("]")
}

// Key writes an object key; the next call writes its value.
func (e *Encoder) Key(k string) {
	e.sep()
	e.quote(k)
	e.write(": ")
	e.afterKey = true
}

// Str writes a string.
func (e *Encoder) Str(s string) {
	e.sep()
	e.quote(s)
}

// Int writes an integer.
func (e *Encoder) Int(v int64) {
	e.sep()
	e.scratch = strconv.AppendInt(e.scratch[:0], v, 10)
	e.writeBytes(e.scratch)
}

// Bool writes true or false.
func (e *Encoder) Bool(b bool) {
	e.sep()
	if b {
		e.write("true")
	} else {
		e.write("false")
	}
}

// Null writes null.
func (e *Encoder) Null() {
	e.sep()
	e.write("null")
}

// Float writes a float in Python repr form; non-finite values as strings.
func (e *Encoder) Float(f float64) {
	e.sep()
	switch {
	case math.IsInf(f, 1):
		e.write(`"Infinity"`)
	case math.IsInf(f, -1):
		e.write(`"-Infinity"`)
	case math.IsNaN(f):
		e.write(`"NaN"`)
	default:
		e.write(PyFloat(f))
	}
}

// RawValue writes pre-encoded JSON.
func (e *Encoder) RawValue(b []byte) {
	e.sep()
	e.writeBytes(b)
}

// PyFloat formats a finite float as Python's repr does: the shortest
// digits that read back exactly, fixed notation for exponents in [-4, 16)
// (always with a fraction: "1.0"), scientific otherwise ("1e-05", "1e+16").
func PyFloat(f float64) string {
	if f != 0 {
		exp := 0
		s := strconv.FormatFloat(f, 'e', -1, 64)
		for i := len(s) - 1; i >= 0; i-- {
			if s[i] == 'e' {
				if v, err := strconv.Atoi(s[i+1:]); err == nil {
					exp = v
				}
				break
			}
		}
		if exp < -4 || exp >= 16 {
			return s
		}
	}
	s := strconv.FormatFloat(f, 'f', -1, 64)
	for i := 0; i < len(s); i++ {
		if s[i] == '.' {
			return s
		}
	}
	return s + ".0"
}

const hexDigits = "0123456789abcdef"

// quote writes s as a JSON string with every non-ASCII character escaped.
func (e *Encoder) quote(s string) {
	b := append(e.scratch[:0], '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				b = append(b, '\\', c)
			case c == '\n':
				b = append(b, '\\', 'n')
			case c == '\r':
				b = append(b, '\\', 'r')
			case c == '\t':
				b = append(b, '\\', 't')
			case c == '\b':
				b = append(b, '\\', 'b')
			case c == '\f':
				b = append(b, '\\', 'f')
			case c < 0x20 || c == 0x7f:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&15])
			default:
				b = append(b, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		if r >= 0x10000 {
			r1, r2 := utf16.EncodeRune(r)
			b = appendU(b, r1)
			b = appendU(b, r2)
		} else {
			b = appendU(b, r) // invalid bytes arrive here as U+FFFD
		}
	}
	b = append(b, '"')
	e.scratch = b
	e.writeBytes(b)
}

func appendU(b []byte, r rune) []byte {
	return append(b, '\\', 'u', hexDigits[r>>12&15], hexDigits[r>>8&15], hexDigits[r>>4&15], hexDigits[r&15])
}
