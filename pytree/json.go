package pytree

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// maxDepth bounds the nesting of JSON values and of tree specs, so hostile
// input cannot exhaust the stack.
const maxDepth = 1000

// jkind is the kind of a JSON value.
type jkind uint8

const (
	jNull jkind = iota
	jBool
	jNumber
	jString
	jArray
	jObject
)

var jkindNames = [...]string{"null", "a boolean", "a number", "a string", "an array", "an object"}

func (k jkind) String() string { return jkindNames[k] }

// jvalue is a JSON value that keeps the order of object members (Go maps do
// not, and the order of dict keys and attributes is the order of leaves).
type jvalue struct {
	kind jkind
	// text is the string of a jString, the literal of a jNumber, and
	// "true"/"false" for a jBool.
	text    string
	elems   []jvalue
	members []jmember
}

type jmember struct {
	key string
	val jvalue
}

// get returns the member named key of an object.
func (v *jvalue) get(key string) (*jvalue, bool) {
	for i := range v.members {
		if v.members[i].key == key {
			return &v.members[i].val, true
		}
	}
	return nil, false
}

// isScalar reports a string, number, boolean or null: what Python dict keys
// serialize to.
func (v *jvalue) isScalar() bool { return v.kind != jArray && v.kind != jObject }

// keyText is how Python's str() prints a dict key that JSON encoded as v.
func (v *jvalue) keyText() string {
	switch v.kind {
	case jNull:
		return "None"
	case jBool:
		if v.text == "true" {
			return "True"
		}
		return "False"
	}
	return v.text
}

// parseJSON reads exactly one JSON value from data. Errors are *Error
// values located at path (plus the byte offset of the problem).
func parseJSON(data []byte, path string) (jvalue, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	r := &jreader{dec: dec, path: path}
	v, err := r.value(0)
	if err != nil {
		return jvalue{}, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return jvalue{}, r.fail("unexpected data after the JSON value")
	}
	return v, nil
}

type jreader struct {
	dec  *json.Decoder
	path string
}

func (r *jreader) fail(format string, args ...any) error {
	return errorf(r.path, "offset %d: %s", r.dec.InputOffset(), fmt.Sprintf(format, args...))
}

func (r *jreader) token() (json.Token, error) {
	t, err := r.dec.Token()
	if err != nil {
		if errors.Is(err, io.EOF) {
			return nil, r.fail("unexpected end of JSON input")
		}
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return nil, errorf(r.path, "offset %d: invalid JSON: %v", se.Offset, err)
		}
		return nil, r.fail("invalid JSON: %v", err)
	}
	return t, nil
}

func (r *jreader) value(depth int) (jvalue, error) {
	if depth > maxDepth {
		return jvalue{}, r.fail("JSON nested deeper than %d levels", maxDepth)
	}
	t, err := r.token()
	if err != nil {
		return jvalue{}, err
	}
	switch t := t.(type) {
	case nil:
		return jvalue{kind: jNull}, nil
	case bool:
		return jvalue{kind: jBool, text: strconv.FormatBool(t)}, nil
	case json.Number:
		return jvalue{kind: jNumber, text: t.String()}, nil
	case string:
		return jvalue{kind: jString, text: t}, nil
	case json.Delim:
		switch t {
		case '[':
			v := jvalue{kind: jArray}
			for r.dec.More() {
				e, err := r.value(depth + 1)
				if err != nil {
					return jvalue{}, err
				}
				v.elems = append(v.elems, e)
			}
			if _, err := r.token(); err != nil { // ']'
				return jvalue{}, err
			}
			return v, nil
		case '{':
			v := jvalue{kind: jObject}
			seen := map[string]bool{}
			for r.dec.More() {
				kt, err := r.token()
				if err != nil {
					return jvalue{}, err
				}
				key, ok := kt.(string)
				if !ok {
					return jvalue{}, r.fail("object key is not a string")
				}
				if seen[key] {
					return jvalue{}, r.fail("duplicate object key %q", key)
				}
				seen[key] = true
				e, err := r.value(depth + 1)
				if err != nil {
					return jvalue{}, err
				}
				v.members = append(v.members, jmember{key, e})
			}
			if _, err := r.token(); err != nil { // '}'
				return jvalue{}, err
			}
			return v, nil
		}
	}
	return jvalue{}, r.fail("unexpected JSON token %v", t)
}

// asInt reads a non-negative integer that fits in an int.
func (v *jvalue) asIndex() (int, bool) {
	if v.kind != jNumber {
		return 0, false
	}
	n, err := strconv.ParseInt(v.text, 10, 32)
	if err != nil || n < 0 {
		return 0, false
	}
	return int(n), true
}
