package pt2schema

import (
	"fmt"
	"strconv"
	"strings"
)

// MaxDepth bounds the nesting of JSON arrays and objects a Decoder accepts.
const MaxDepth = 1000

// Error is a decoding error located by its JSON path, e.g.
// "graph_module.graph.nodes[3].inputs[0].arg: unknown Argument tag \"as_foo\"".
type Error struct {
	Path string
	Msg  string
}

func (e *Error) Error() string {
	if e.Path == "" {
		return e.Msg
	}
	path := e.Path
	if len(path) > maxPathInError {
		// A path a million levels deep stays a readable message: its
		// start, the count left out, its end.
		path = path[:maxPathInError/2] + fmt.Sprintf("…(%d bytes)…", len(path)-maxPathInError) + path[len(path)-maxPathInError/2:]
	}
	return path + ": " + e.Msg
}

// maxPathInError bounds the JSON path an error message prints.
const maxPathInError = 400

// Span is the byte range of one JSON value inside a Decoder's input.
type Span struct{ Start, End int }

// pathElem is one step of a JSON path: a struct field, a map key or an index.
type pathElem struct {
	key   string
	index int
	kind  uint8 // 0 field, 1 map key, 2 index
}

// Decoder reads one JSON value from a byte slice, keeping track of the JSON
// path of the value being read so that errors can name it.
type Decoder struct {
	data  []byte
	pos   int
	end   int
	base  string // path of the value this decoder was made for
	path  []pathElem
	depth int
	// Scratch stacks for the lists decoded element by element: each list
	// is gathered on top of its stack and copied out at its exact length
	// (appending to the result grew it by doubling, about 170 MB of
	// garbage at 100k nodes). A list nested in an element uses the stack
	// above it and leaves it as it found it.
	symScratch   []SymInt
	argScratch   []Argument
	namScratch   []NamedArgument
	intScratch   []int64
	floatScratch []float64
	boolScratch  []bool
}

// NewDecoder returns a decoder over data with an empty base path.
func NewDecoder(data []byte) *Decoder {
	return &Decoder{data: data, end: len(data)}
}

// Sub returns a decoder over a span previously returned by Span, located at
// the current path plus elem (a field name; "" for the current path itself).
func (d *Decoder) Sub(s Span, field string) *Decoder {
	base := d.Path()
	if field != "" {
		base = joinField(base, field)
	}
	return &Decoder{data: d.data, pos: s.Start, end: s.End, base: base, depth: d.depth}
}

func joinField(base, field string) string {
	if base == "" {
		return field
	}
	return base + "." + field
}

// Path renders the JSON path of the value being read.
func (d *Decoder) Path() string {
	if len(d.path) == 0 {
		return d.base
	}
	var b strings.Builder
	b.WriteString(d.base)
	for _, e := range d.path {
		switch e.kind {
		case 0:
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(e.key)
		case 1:
			b.WriteByte('[')
			b.WriteString(strconv.Quote(e.key))
			b.WriteByte(']')
		default:
			b.WriteByte('[')
			b.WriteString(strconv.Itoa(e.index))
			b.WriteByte(']')
		}
	}
	return b.String()
}

// Errorf returns an *Error at the current path.
func (d *Decoder) Errorf(format string, args ...any) error {
	return &Error{Path: d.Path(), Msg: fmt.Sprintf(format, args...)}
}

func (d *Decoder) skipWS() {
	for d.pos < d.end {
		switch d.data[d.pos] {
		case ' ', '\t', '\n', '\r':
			d.pos++
		default:
			return
		}
	}
}

// Peek returns the first byte of the next value ('{', '[', '"', 't', 'f',
// 'n', a digit or '-'), or 0 at the end of input.
func (d *Decoder) Peek() byte {
	d.skipWS()
	if d.pos >= d.end {
		return 0
	}
	return d.data[d.pos]
}

func (d *Decoder) describe() string {
	switch c := d.Peek(); {
	case c == 0:
		return "end of input"
	case c == '{':
		return "an object"
	case c == '[':
		return "an array"
	case c == '"':
		return "a string"
	case c == 't' || c == 'f':
		return "a bool"
	case c == 'n':
		return "null"
	case c == '-' || c >= '0' && c <= '9':
		return "a number"
	default:
		return fmt.Sprintf("%q", c)
	}
}

// End checks that nothing but whitespace follows the value just read.
func (d *Decoder) End() error {
	d.skipWS()
	if d.pos != d.end {
		return d.Errorf("unexpected data after the JSON value at byte %d", d.pos)
	}
	return nil
}

func (d *Decoder) enter() error {
	d.depth++
	if d.depth > MaxDepth {
		return d.Errorf("JSON nested deeper than %d levels", MaxDepth)
	}
	return nil
}

// IsNull consumes a null and reports whether there was one.
func (d *Decoder) IsNull() bool {
	if d.Peek() == 'n' && d.end-d.pos >= 4 && string(d.data[d.pos:d.pos+4]) == "null" {
		d.pos += 4
		return true
	}
	return false
}

func (d *Decoder) literal(word string) bool {
	if d.end-d.pos >= len(word) && string(d.data[d.pos:d.pos+len(word)]) == word {
		d.pos += len(word)
		return true
	}
	return false
}

// object iterates the members of an object; kind is 0 for a struct (path
// ".key") and 1 for a map (path ["key"]). fn must consume the member's
// value or leave it untouched (it is then skipped).
func (d *Decoder) object(kind uint8, fn func(key string) error) error {
	if d.Peek() != '{' {
		return d.Errorf("expected an object, found %s", d.describe())
	}
	if err := d.enter(); err != nil {
		return err
	}
	d.pos++
	first := true
	for {
		c := d.Peek()
		if c == '}' {
			d.pos++
			d.depth--
			return nil
		}
		if !first {
			if c != ',' {
				return d.Errorf("expected ',' or '}' in object, found %s", d.describe())
			}
			d.pos++
			c = d.Peek()
		}
		first = false
		if c != '"' {
			return d.Errorf("expected an object key, found %s", d.describe())
		}
		key, err := d.key()
		if err != nil {
			return err
		}
		if d.Peek() != ':' {
			return d.Errorf("expected ':' after key %q", key)
		}
		d.pos++
		d.path = append(d.path, pathElem{key: key, kind: kind})
		d.skipWS()
		start := d.pos
		if err := fn(key); err != nil {
			return err
		}
		if d.pos == start {
			if err := d.Skip(); err != nil {
				return err
			}
		}
		d.path = d.path[:len(d.path)-1]
	}
}

// Object iterates the fields of a struct-like object. Unknown fields are
// skipped when fn leaves them unread.
func (d *Decoder) Object(fn func(key string) error) error { return d.object(0, fn) }

// Map iterates the entries of a dict-like object (paths render as ["key"]).
func (d *Decoder) Map(fn func(key string) error) error { return d.object(1, fn) }

// Array iterates the elements of an array; fn must consume element i.
func (d *Decoder) Array(fn func(i int) error) error {
	if d.Peek() != '[' {
		return d.Errorf("expected an array, found %s", d.describe())
	}
	if err := d.enter(); err != nil {
		return err
	}
	d.pos++
	for i := 0; ; i++ {
		c := d.Peek()
		if c == ']' {
			d.pos++
			d.depth--
			return nil
		}
		if i > 0 {
			if c != ',' {
				return d.Errorf("expected ',' or ']' in array, found %s", d.describe())
			}
			d.pos++
		}
		d.path = append(d.path, pathElem{index: i, kind: 2})
		d.skipWS()
		start := d.pos
		if err := fn(i); err != nil {
			return err
		}
		if d.pos == start {
			if err := d.Skip(); err != nil {
				return err
			}
		}
		d.path = d.path[:len(d.path)-1]
	}
}

// Union reads a single-member object {"tag": payload}. Members whose value
// is null are ignored (torch 2.1 wrote every member); exactly one must
// remain. fn returns false for a tag it does not know, which is an error
// naming typeName at the union's path.
func (d *Decoder) Union(typeName string, fn func(tag string) (bool, error)) error {
	if d.Peek() != '{' {
		return d.Errorf("expected a %s (an object with one member), found %s", typeName, d.describe())
	}
	var got string
	n := 0
	err := d.object(0, func(key string) error {
		if d.IsNull() {
			return nil
		}
		n++
		if n > 1 {
			d.path = d.path[:len(d.path)-1]
			return d.Errorf("%s has more than one member (%q and %q)", typeName, got, key)
		}
		got = key
		known, err := fn(key)
		if err != nil {
			return err
		}
		if !known {
			d.path = d.path[:len(d.path)-1]
			return d.Errorf("unknown %s tag %q", typeName, key)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if n == 0 {
		return d.Errorf("empty %s (no member set)", typeName)
	}
	return nil
}

// Skip consumes one value of any kind.
func (d *Decoder) Skip() error {
	switch c := d.Peek(); {
	case c == '{':
		return d.object(0, func(string) error { return d.Skip() })
	case c == '[':
		return d.Array(func(int) error { return d.Skip() })
	case c == '"':
		return d.skipStr()
	case c == 't':
		if d.literal("true") {
			return nil
		}
	case c == 'f':
		if d.literal("false") {
			return nil
		}
	case c == 'n':
		if d.literal("null") {
			return nil
		}
	case c == 'N':
		if d.literal("NaN") {
			return nil
		}
	case c == 'I':
		if d.literal("Infinity") {
			return nil
		}
	case c == '-' || c >= '0' && c <= '9':
		_, _, err := d.number()
		return err
	}
	return d.Errorf("expected a JSON value, found %s", d.describe())
}

// Span consumes one value and returns its byte range.
func (d *Decoder) Span() (Span, error) {
	d.skipWS()
	start := d.pos
	if err := d.Skip(); err != nil {
		return Span{}, err
	}
	return Span{start, d.pos}, nil
}

// Raw consumes one value and returns its bytes.
func (d *Decoder) Raw() ([]byte, error) {
	s, err := d.Span()
	if err != nil {
		return nil, err
	}
	return d.data[s.Start:s.End], nil
}
