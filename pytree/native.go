package pytree

import (
	"strconv"
	"strings"
)

// tagKey marks a tagged object in a JSON-native context (DYN-S05).
const tagKey = "_t"

// The tags of a JSON-native context.
const (
	tagTensor = "tensor"
	tagSym    = "sym"
	tagSize   = "size"
	tagDevice = "device"
	tagDtype  = "dtype"
	tagLayout = "layout"
	tagType   = "type"
	tagMap    = "map"
	tagSeq    = "seq"
	tagObj    = "obj"
)

// nativeChildren follows a JSON-native context (transformers'
// _flatten_to_context, catalog DYN-S05) to the leaf markers {"_t": "tensor",
// "i": k} and {"_t": "sym", "i": k}, and names child k after the path that
// holds its marker. Every child must be referenced exactly once.
func (s *Spec) nativeChildren(ctx *jvalue, path string) error {
	n := len(s.Children)
	w := nativeWalker{paths: make([][]Key, n), seen: make([]bool, n)}
	if err := w.walk(ctx, path, nil, 0); err != nil {
		return err
	}
	for i, ok := range w.seen {
		if !ok {
			return errorf(path, "child %d of %d is referenced by no tensor or sym marker", i, n)
		}
	}
	s.ChildPaths = w.paths
	for i := range s.Children {
		s.ChildKeys = append(s.ChildKeys, Key{Kind: SequenceKey, Index: i})
	}
	return nil
}

type nativeWalker struct {
	paths [][]Key
	seen  []bool
}

func (w *nativeWalker) walk(v *jvalue, path string, keys []Key, depth int) error {
	if depth > maxDepth {
		return errorf(path, "context nested deeper than %d levels", maxDepth)
	}
	switch v.kind {
	case jArray: // a plain list
		for i := range v.elems {
			if err := w.walk(&v.elems[i], path+"["+strconv.Itoa(i)+"]", appendKey(keys, Key{Kind: SequenceKey, Index: i}), depth+1); err != nil {
				return err
			}
		}
		return nil
	case jObject:
	default: // None, bool, int, float, str
		return nil
	}
	tag, tagged := v.get(tagKey)
	if !tagged { // a plain dict
		return w.members(v, path, keys, MappingKey, depth)
	}
	if tag.kind != jString {
		return errorf(path+"."+tagKey, "want a tag string, got %s", describe(tag))
	}
	field := func(name string, kind jkind) (*jvalue, error) {
		f, ok := v.get(name)
		if !ok {
			return nil, errorf(path, "%q object without %q", tag.text, name)
		}
		if f.kind != kind {
			return nil, errorf(path+"."+name, "want %s, got %s", kind, describe(f))
		}
		return f, nil
	}
	switch tag.text {
	case tagTensor, tagSym:
		f, err := field("i", jNumber)
		if err != nil {
			return err
		}
		i, ok := f.asIndex()
		if !ok || i >= len(w.paths) {
			return errorf(path+".i", "leaf index %s out of range (the node has %d children)", f.text, len(w.paths))
		}
		if w.seen[i] {
			return errorf(path+".i", "leaf index %d referenced twice", i)
		}
		w.seen[i] = true
		w.paths[i] = append([]Key(nil), keys...)
		return nil
	case tagSize:
		f, err := field("v", jArray)
		if err != nil {
			return err
		}
		for i := range f.elems {
			if f.elems[i].kind != jNumber {
				return errorf(path+".v["+strconv.Itoa(i)+"]", "want an int, got %s", describe(&f.elems[i]))
			}
		}
		return nil
	case tagDevice:
		_, err := field("s", jString)
		return err
	case tagDtype, tagLayout:
		_, err := field("n", jString)
		return err
	case tagType:
		return w.classPath(v, path)
	case tagMap:
		if err := w.classPath(v, path); err != nil {
			return err
		}
		f, err := field("v", jObject)
		if err != nil {
			return err
		}
		return w.members(f, path+".v", keys, MappingKey, depth)
	case tagSeq:
		if err := w.classPath(v, path); err != nil {
			return err
		}
		f, err := field("v", jArray)
		if err != nil {
			return err
		}
		for i := range f.elems {
			if err := w.walk(&f.elems[i], path+".v["+strconv.Itoa(i)+"]", appendKey(keys, Key{Kind: SequenceKey, Index: i}), depth+1); err != nil {
				return err
			}
		}
		return nil
	case tagObj:
		if err := w.classPath(v, path); err != nil {
			return err
		}
		f, err := field("s", jObject)
		if err != nil {
			return err
		}
		return w.members(f, path+".s", keys, AttrKey, depth)
	}
	return errorf(path+"."+tagKey, "unknown tag %q (want one of tensor, sym, size, device, dtype, layout, type, map, seq, obj)", tag.text)
}

// members walks an object's members in order, each under its key.
func (w *nativeWalker) members(v *jvalue, path string, keys []Key, kind KeyKind, depth int) error {
	for i := range v.members {
		m := &v.members[i]
		if err := w.walk(&m.val, memberPath(path, m.key), appendKey(keys, Key{Kind: kind, Name: m.key}), depth+1); err != nil {
			return err
		}
	}
	return nil
}

// classPath checks the "p" member: a class path "<module>:<qualname>".
func (w *nativeWalker) classPath(v *jvalue, path string) error {
	p, ok := v.get("p")
	if !ok {
		return errorf(path, "tagged object without its class path %q", "p")
	}
	if p.kind != jString {
		return errorf(path+".p", "want a class path string, got %s", describe(p))
	}
	mod, qual, ok := strings.Cut(p.text, ":")
	if !ok || mod == "" || qual == "" {
		return errorf(path+".p", "class path %q is not \"<module>:<qualname>\"", p.text)
	}
	return nil
}

// appendKey returns keys + k without aliasing keys' backing array.
func appendKey(keys []Key, k Key) []Key {
	out := make([]Key, len(keys), len(keys)+1)
	copy(out, keys)
	return append(out, k)
}

// memberPath extends a JSON path by an object key: ".key" when the key is
// an identifier, `["key"]` otherwise.
func memberPath(path, k string) string {
	ident := k != ""
	for i, r := range k {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9') {
			ident = false
			break
		}
	}
	if ident {
		return path + "." + k
	}
	return path + "[" + strconv.Quote(k) + "]"
}
