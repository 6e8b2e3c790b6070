package pytree

import "strconv"

// Type names of the containers torch registers itself.
const (
	TypeTuple         = "builtins.tuple"
	TypeList          = "builtins.list"
	TypeDict          = "builtins.dict"
	TypeNone          = "builtins.NoneType"
	TypeOrderedDict   = "collections.OrderedDict"
	TypeDefaultDict   = "collections.defaultdict"
	TypeDeque         = "collections.deque"
	TypeNamedTuple    = "collections.namedtuple"
	TypeImmutableList = "torch.fx.immutable_collections.immutable_list"
	TypeImmutableDict = "torch.fx.immutable_collections.immutable_dict"
)

// nameChildren fills ChildPaths and ChildKeys from the node's type and
// context (at path).
func (s *Spec) nameChildren(ctx *jvalue, path string) error {
	n := len(s.Children)
	switch s.Type {
	case TypeTuple, TypeList, TypeImmutableList:
		if err := wantNullContext(ctx, path); err != nil {
			return err
		}
		s.indexChildren()
	case TypeDeque:
		// The context is maxlen: null or an int, JSON-encoded.
		if _, err := stringContext(ctx, path, true); err != nil {
			return err
		}
		s.indexChildren()
	case TypeNamedTuple:
		// The context is the namedtuple's registered type name (older
		// torch: an object {"class_name", "fields"}). The Python exporter
		// names the fields of a namedtuple by position, like any tuple;
		// torch's key path uses the field names when they are known.
		switch ctx.kind {
		case jString:
			s.indexChildren()
		case jObject:
			s.indexChildren()
			if f, ok := ctx.get("fields"); ok && f.kind == jArray && len(f.elems) == n && allStrings(f.elems) {
				for i := range f.elems {
					s.ChildKeys[i] = Key{Kind: AttrKey, Name: f.elems[i].text}
				}
			}
		default:
			return errorf(path, "want the namedtuple's type name, got %s", describe(ctx))
		}
	case TypeNone:
		if n != 0 {
			return errorf(path, "%s has %d children, want none", s.Type, n)
		}
	case TypeDict, TypeOrderedDict, TypeImmutableDict:
		keys, err := stringContext(ctx, path, false)
		if err != nil {
			return err
		}
		return s.keyChildren(keys, path+": $")
	case TypeDefaultDict:
		return s.defaultDictChildren(ctx, path)
	default:
		return s.customChildren(ctx, path)
	}
	return nil
}

// stringContext decodes a context that torch stored as JSON text inside a
// string. A null context is accepted when nullOK.
func stringContext(ctx *jvalue, path string, nullOK bool) (*jvalue, error) {
	switch {
	case ctx.kind == jNull && nullOK:
		return ctx, nil
	case ctx.kind != jString:
		return nil, errorf(path, "want a JSON-encoded string, got %s", describe(ctx))
	}
	v, err := parseJSON([]byte(ctx.text), path+": $")
	if err != nil {
		return nil, err
	}
	return &v, nil
}

func wantNullContext(ctx *jvalue, path string) error {
	v, err := stringContext(ctx, path, true)
	if err != nil {
		return err
	}
	if v.kind != jNull {
		return errorf(path, "want a null context, got %s", describe(v))
	}
	return nil
}

func (s *Spec) indexChildren() {
	for i := range s.Children {
		k := Key{Kind: SequenceKey, Index: i}
		s.ChildPaths = append(s.ChildPaths, []Key{k})
		s.ChildKeys = append(s.ChildKeys, k)
	}
}

// keyChildren names the children by a JSON array of dict keys.
func (s *Spec) keyChildren(keys *jvalue, path string) error {
	if keys.kind != jArray {
		return errorf(path, "want the array of dict keys, got %s", describe(keys))
	}
	if len(keys.elems) != len(s.Children) {
		return errorf(path, "%d keys for %d children", len(keys.elems), len(s.Children))
	}
	for i := range keys.elems {
		k := &keys.elems[i]
		if !k.isScalar() {
			return errorf(path+"["+strconv.Itoa(i)+"]", "unsupported dict key: %s", describe(k))
		}
		key := Key{Kind: MappingKey, Name: k.keyText()}
		s.ChildPaths = append(s.ChildPaths, []Key{key})
		s.ChildKeys = append(s.ChildKeys, key)
	}
	return nil
}

// defaultDictChildren reads torch's defaultdict context: an object whose
// "dict_context" holds the keys (older versions wrote it as a JSON string).
func (s *Spec) defaultDictChildren(ctx *jvalue, path string) error {
	obj, inner := ctx, path
	if ctx.kind == jString {
		v, err := stringContext(ctx, path, false)
		if err != nil {
			return err
		}
		obj, inner = v, path+": $"
	}
	if obj.kind != jObject {
		return errorf(inner, "want the defaultdict context object, got %s", describe(obj))
	}
	keys, ok := obj.get("dict_context")
	if !ok {
		return errorf(inner, "missing %q", "dict_context")
	}
	return s.keyChildren(keys, inner+".dict_context")
}

// customChildren names the children of a user-registered node. Its
// context is recognised, in order, as a JSON-native DYN-S05 context (an
// object tagged "_t"), a list of one key per child (ModelOutput), a
// dataclass's [field names, None fields] pair, or else taken as opaque, the
// children being named by position.
func (s *Spec) customChildren(ctx *jvalue, path string) error {
	v, inner := ctx, path
	if ctx.kind == jString {
		parsed, err := parseJSON([]byte(ctx.text), path+": $")
		if err != nil {
			// Opaque text: the type's own to_dumpable_context format.
			s.indexChildren()
			return nil
		}
		v, inner = &parsed, path+": $"
	}
	if v.kind == jObject {
		if _, tagged := v.get(tagKey); tagged {
			return s.nativeChildren(v, inner)
		}
	}
	if v.kind == jArray && len(v.elems) == len(s.Children) && len(v.elems) > 0 && allScalars(v.elems) {
		return s.keyChildren(v, inner)
	}
	if v.kind == jArray && len(v.elems) == 2 && v.elems[0].kind == jArray && v.elems[1].kind == jArray &&
		len(v.elems[0].elems) == len(s.Children) && allStrings(v.elems[0].elems) && allStrings(v.elems[1].elems) {
		for _, f := range v.elems[0].elems {
			k := Key{Kind: AttrKey, Name: f.text}
			s.ChildPaths = append(s.ChildPaths, []Key{k})
			s.ChildKeys = append(s.ChildKeys, k)
		}
		return nil
	}
	s.indexChildren()
	return nil
}

func allScalars(vs []jvalue) bool {
	for i := range vs {
		if !vs[i].isScalar() {
			return false
		}
	}
	return true
}

func allStrings(vs []jvalue) bool {
	for i := range vs {
		if vs[i].kind != jString {
			return false
		}
	}
	return true
}
