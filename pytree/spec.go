package pytree

import (
	"encoding/json"
	"strconv"
	"strings"
)

// Protocol is the TreeSpec serialization protocol Decode reads.
const Protocol = 1

// KeyKind says how a child is reached from its parent.
type KeyKind uint8

// Key kinds, after torch's pytree key types.
const (
	// SequenceKey is a position in a tuple, list or other sequence.
	SequenceKey KeyKind = iota + 1
	// MappingKey is a dict key.
	MappingKey
	// AttrKey is an attribute or field name.
	AttrKey
)

// Key is one step of a path from the root of a tree to a leaf.
type Key struct {
	Kind KeyKind
	// Index is the position of a SequenceKey.
	Index int
	// Name is the key of a MappingKey (as Python's str() prints it) or the
	// attribute of an AttrKey.
	Name string
}

// String is the key as it appears in a dotted name: the index or the name.
func (k Key) String() string {
	if k.Kind == SequenceKey {
		return strconv.Itoa(k.Index)
	}
	return k.Name
}

// Spec is one decoded TreeSpec node: a leaf (Type "") or a container of
// children.
type Spec struct {
	// Type is the serialized type name ("builtins.dict",
	// "transformers.cache_utils:DynamicCache"); "" for a leaf.
	Type string
	// Context is the node's context as torch wrote it: the text of a string
	// context (often itself JSON, such as `["x", "y"]`), the JSON text of
	// any other context, "" for null.
	Context  string
	Children []*Spec
	// ChildPaths[i] locates child i inside this node the way the Python
	// exporter names it: one key for a tuple, list or dict; for an object
	// flattened with a JSON-native context (DYN-S05) the path of attributes
	// and indices that holds it ([layers, 0, keys]).
	ChildPaths [][]Key
	// ChildKeys[i] is the single key torch's flatten_with_keys gives child i
	// (a SequenceKey for objects flattened to a tensor list); torch.export
	// builds placeholder names from these keys.
	ChildKeys []Key
}

// IsLeaf reports whether s is a leaf.
func (s *Spec) IsLeaf() bool { return s.Type == "" }

// NumLeaves counts the leaves under s.
func (s *Spec) NumLeaves() int {
	if s.IsLeaf() {
		return 1
	}
	n := 0
	for _, c := range s.Children {
		n += c.NumLeaves()
	}
	return n
}

// Leaf is one leaf of a tree, in flattening order.
type Leaf struct {
	// Path is the naming path from the root (see Spec.ChildPaths).
	Path []Key
	// TorchPath is the key path torch's tree_flatten_with_path reports.
	TorchPath []Key
}

// Name is the dotted name of the leaf ("past_key_values.layers.0.keys");
// "" for a tree that is a single leaf.
func (l Leaf) Name() string { return DottedName(l.Path) }

// DottedName joins a path with dots.
func DottedName(path []Key) string {
	parts := make([]string, len(path))
	for i, k := range path {
		parts[i] = k.String()
	}
	return strings.Join(parts, ".")
}

// Leaves lists the leaves under s in flattening order.
func (s *Spec) Leaves() []Leaf {
	var out []Leaf
	var walk func(n *Spec, path, tpath []Key)
	walk = func(n *Spec, path, tpath []Key) {
		if n.IsLeaf() {
			out = append(out, Leaf{Path: append([]Key(nil), path...), TorchPath: append([]Key(nil), tpath...)})
			return
		}
		for i, c := range n.Children {
			walk(c, append(path, n.ChildPaths[i]...), append(tpath, n.ChildKeys[i]))
		}
	}
	walk(s, nil, nil)
	return out
}

// Decode parses a serialized TreeSpec string.
func Decode(text string) (*Spec, error) {
	v, err := parseJSON([]byte(text), "$")
	if err != nil {
		return nil, err
	}
	if v.kind != jArray || len(v.elems) != 2 {
		return nil, errorf("$", "want [protocol, spec], got %s", describe(&v))
	}
	proto := &v.elems[0]
	if n, ok := proto.asIndex(); !ok || n != Protocol {
		return nil, errorf("$[0]", "unsupported TreeSpec protocol %s (want %d)", proto.keyText(), Protocol)
	}
	return decodeNode(&v.elems[1], "$[1]", 0)
}

// describe names a JSON value's kind for error messages ("an array of 3").
func describe(v *jvalue) string {
	switch v.kind {
	case jArray:
		return "an array of " + strconv.Itoa(len(v.elems))
	case jString:
		return "the string " + strconv.Quote(short(v.text))
	}
	return v.kind.String()
}

func short(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}

func decodeNode(v *jvalue, path string, depth int) (*Spec, error) {
	if depth > maxDepth {
		return nil, errorf(path, "tree nested deeper than %d levels", maxDepth)
	}
	if v.kind != jObject {
		return nil, errorf(path, "want a spec object, got %s", describe(v))
	}
	field := func(name string) (*jvalue, error) {
		f, ok := v.get(name)
		if !ok {
			return nil, errorf(path, "missing %q", name)
		}
		return f, nil
	}
	typ, err := field("type")
	if err != nil {
		return nil, err
	}
	ctx, err := field("context")
	if err != nil {
		return nil, err
	}
	kids, err := field("children_spec")
	if err != nil {
		return nil, err
	}
	if kids.kind != jArray {
		return nil, errorf(path+".children_spec", "want an array, got %s", describe(kids))
	}
	switch typ.kind {
	case jNull:
		if ctx.kind != jNull || len(kids.elems) != 0 {
			return nil, errorf(path+".type", "a leaf (type null) must have a null context and no children")
		}
		return &Spec{}, nil
	case jString:
		if typ.text == "" {
			return nil, errorf(path+".type", "empty type name")
		}
	default:
		return nil, errorf(path+".type", "want a type name or null, got %s", describe(typ))
	}
	s := &Spec{Type: typ.text, Context: contextText(ctx)}
	for i := range kids.elems {
		c, err := decodeNode(&kids.elems[i], path+".children_spec["+strconv.Itoa(i)+"]", depth+1)
		if err != nil {
			return nil, err
		}
		s.Children = append(s.Children, c)
	}
	if err := s.nameChildren(ctx, path+".context"); err != nil {
		return nil, err
	}
	return s, nil
}

// contextText renders a context for Spec.Context.
func contextText(v *jvalue) string {
	switch v.kind {
	case jNull:
		return ""
	case jString:
		return v.text
	}
	var b strings.Builder
	v.encode(&b)
	return b.String()
}

// encode writes v as compact JSON, keeping member order.
func (v *jvalue) encode(b *strings.Builder) {
	switch v.kind {
	case jNull:
		b.WriteString("null")
	case jBool, jNumber:
		b.WriteString(v.text)
	case jString:
		q, _ := json.Marshal(v.text)
		b.Write(q)
	case jArray:
		b.WriteByte('[')
		for i := range v.elems {
			if i > 0 {
				b.WriteByte(',')
			}
			v.elems[i].encode(b)
		}
		b.WriteByte(']')
	case jObject:
		b.WriteByte('{')
		for i := range v.members {
			if i > 0 {
				b.WriteByte(',')
			}
			q, _ := json.Marshal(v.members[i].key)
			b.Write(q)
			b.WriteByte(':')
			v.members[i].val.encode(b)
		}
		b.WriteByte('}')
	}
}
