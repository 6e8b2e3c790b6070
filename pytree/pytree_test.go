package pytree

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// The helpers below write TreeSpec strings byte for byte the way Python's
// json.dumps((1, schema)) does in torch's treespec_dumps: ", " and ": "
// separators, field order type, context, children_spec.

const leaf = `{"type": null, "context": null, "children_spec": []}`

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// node writes a spec node whose context is a JSON-encoded string (ctx is the
// Python json.dumps output of the context).
func node(typ, ctx string, kids ...string) string {
	return `{"type": ` + jsonString(typ) + `, "context": ` + jsonString(ctx) + `, "children_spec": [` + strings.Join(kids, ", ") + `]}`
}

// rawNode writes a node whose context is a JSON value, not a string.
func rawNode(typ, ctx string, kids ...string) string {
	return `{"type": ` + jsonString(typ) + `, "context": ` + ctx + `, "children_spec": [` + strings.Join(kids, ", ") + `]}`
}

func spec(root string) string { return "[1, " + root + "]" }

func leaves(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = leaf
	}
	return out
}

func mustDecode(t *testing.T, s string) *Spec {
	t.Helper()
	sp, err := Decode(s)
	if err != nil {
		t.Fatalf("Decode: %v\n%s", err, s)
	}
	return sp
}

func names(ls []Leaf) []string {
	var out []string
	for _, l := range ls {
		out = append(out, l.Name())
	}
	return out
}

func eqStrings(t *testing.T, what string, got, want []string) {
	t.Helper()
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("%s:\n got %q\nwant %q", what, got, want)
	}
}

// A module exported with args=(x,): the in_spec and out_spec torch writes
// (the same strings appear in AOTInductor configs).
func TestPositionalTensorArgument(t *testing.T) {
	in := `[1, {"type": "builtins.tuple", "context": "null", "children_spec": [{"type": "builtins.tuple", "context": "null", "children_spec": [{"type": null, "context": null, "children_spec": []}]}, {"type": "builtins.dict", "context": "[]", "children_spec": []}]}]`
	out := `[1, {"type": null, "context": null, "children_spec": []}]`
	s := mustDecode(t, in)
	if !s.IsArgsKwargs() || s.NumLeaves() != 1 {
		t.Fatalf("in_spec: args/kwargs %v, %d leaves", s.IsArgsKwargs(), s.NumLeaves())
	}
	got, err := InputNames(s, []string{"x"})
	if err != nil {
		t.Fatal(err)
	}
	eqStrings(t, "inputs", got, []string{"x"})
	o := mustDecode(t, out)
	if !o.IsLeaf() {
		t.Fatal("out_spec should be a leaf")
	}
	got, err = OutputNames(o)
	if err != nil {
		t.Fatal(err)
	}
	eqStrings(t, "outputs", got, []string{"output"})
}

// torch's own serialization test: an OrderedDict with int keys holding a
// tuple, a leaf and a dict.
func TestOrderedDictIntKeys(t *testing.T) {
	s := mustDecode(t, `[1, {"type": "collections.OrderedDict", "context": "[1, 2, 3]", `+
		`"children_spec": [{"type": "builtins.tuple", "context": "null", `+
		`"children_spec": [{"type": null, "context": null, `+
		`"children_spec": []}, {"type": null, "context": null, `+
		`"children_spec": []}]}, {"type": null, "context": null, `+
		`"children_spec": []}, {"type": "builtins.dict", "context": `+
		`"[4, 5, 6]", "children_spec": [{"type": null, "context": null, `+
		`"children_spec": []}, {"type": null, "context": null, "children_spec": `+
		`[]}, {"type": null, "context": null, "children_spec": []}]}]}]`)
	eqStrings(t, "leaves", names(s.Leaves()), []string{"1.0", "1.1", "2", "3.4", "3.5", "3.6"})
	if s.ChildPaths[0][0].Kind != MappingKey || s.Children[0].ChildPaths[1][0].Kind != SequenceKey {
		t.Errorf("key kinds: %+v %+v", s.ChildPaths[0], s.Children[0].ChildPaths[1])
	}
	if s.Context != "[1, 2, 3]" {
		t.Errorf("Context = %q", s.Context)
	}
}

// dynamicCache builds the JSON-native context transformers' generic
// flattener writes for a DynamicCache of n layers (DYN-S05), with the
// attributes of its DynamicLayer objects in vars() order.
func dynamicCache(layers int) (ctx string, kids []string) {
	var ls []string
	for i := 0; i < layers; i++ {
		k, v := 2*i, 2*i+1
		ls = append(ls, `{"_t": "obj", "p": "transformers.cache_utils:DynamicLayer", "s": {`+
			`"dtype": {"_t": "dtype", "n": "float32"}, "device": {"_t": "device", "s": "cpu"}, `+
			`"is_initialized": true, "keys": {"_t": "tensor", "i": `+itoa(k)+`}, `+
			`"values": {"_t": "tensor", "i": `+itoa(v)+`}}}`)
	}
	ctx = `{"_t": "obj", "p": "transformers.cache_utils:DynamicCache", "s": {"layers": [` + strings.Join(ls, ", ") +
		`], "layer_class_to_replicate": {"_t": "type", "p": "transformers.cache_utils:DynamicLayer"}, "offloading": false}}`
	return ctx, leaves(2 * layers)
}

func itoa(i int) string { b, _ := json.Marshal(i); return string(b) }

// A causal LM exported the way transformers' DynamoExporter does it:
// args=(), every input a keyword argument, a DynamicCache among them, and a
// CausalLMOutputWithPast (a ModelOutput: context = its keys) as output.
func TestTransformersCacheAndModelOutput(t *testing.T) {
	cacheCtx, cacheKids := dynamicCache(2)
	cache := node("transformers.cache_utils:DynamicCache", cacheCtx, cacheKids...)
	in := spec(node(TypeTuple, "null",
		node(TypeTuple, "null"),
		node(TypeDict, `["input_ids", "attention_mask", "past_key_values"]`, leaf, leaf, cache)))
	s := mustDecode(t, in)
	placeholders := []string{"input_ids", "attention_mask", "past_key_values_0", "past_key_values_1", "past_key_values_2", "past_key_values_3"}
	got, err := InputNames(s, placeholders)
	if err != nil {
		t.Fatal(err)
	}
	eqStrings(t, "inputs", got, []string{"input_ids", "attention_mask",
		"past_key_values.layers.0.keys", "past_key_values.layers.0.values",
		"past_key_values.layers.1.keys", "past_key_values.layers.1.values"})
	// torch's key path for a cache leaf is a SequenceKey per tensor.
	ls := s.Leaves()
	if tp := ls[3].TorchPath; len(tp) != 3 || tp[2].Kind != SequenceKey || tp[2].Index != 1 {
		t.Errorf("torch path of leaf 3: %+v", tp)
	}

	out := spec(node("transformers.modeling_outputs.CausalLMOutputWithPast", `["logits", "past_key_values"]`, leaf, cache))
	o := mustDecode(t, out)
	got, err = OutputNames(o)
	if err != nil {
		t.Fatal(err)
	}
	eqStrings(t, "outputs", got, []string{"logits",
		"past_key_values.layers.0.keys", "past_key_values.layers.0.values",
		"past_key_values.layers.1.keys", "past_key_values.layers.1.values"})
}

// Leaf indices need not follow the walk order: each child is named after
// where its marker sits. map, seq, plain dicts and lists, sizes and syms.
func TestNativeContextShapes(t *testing.T) {
	ctx := `{"_t": "obj", "p": "m:EncoderDecoderCache", "s": {` +
		`"self_attention_cache": {"_t": "map", "p": "collections:OrderedDict", "v": {"k": {"_t": "tensor", "i": 2}}}, ` +
		`"cross": {"_t": "seq", "p": "builtins:tuple", "v": [{"_t": "tensor", "i": 0}, {"_t": "size", "v": [1, 2]}]}, ` +
		`"plain": {"a b": [null, {"_t": "sym", "i": 1}]}, "layout": {"_t": "layout", "n": "strided"}}}`
	s := mustDecode(t, spec(node("m:EncoderDecoderCache", ctx, leaves(3)...)))
	eqStrings(t, "leaves", names(s.Leaves()), []string{"cross.0", "plain.a b.1", "self_attention_cache.k"})
	if k := s.ChildPaths[1]; k[0].Kind != AttrKey || k[1].Kind != MappingKey || k[2].Kind != SequenceKey {
		t.Errorf("key kinds of child 1: %+v", k)
	}
}

func TestNamedTupleDefaultDictDataclass(t *testing.T) {
	// Current torch: the context is the namedtuple's registered name.
	s := mustDecode(t, spec(rawNode(TypeNamedTuple, `"torch.return_types.topk"`, leaf, leaf)))
	eqStrings(t, "namedtuple", names(s.Leaves()), []string{"0", "1"})
	// Older torch: {"class_name", "fields"}; torch keys use the fields.
	s = mustDecode(t, spec(rawNode(TypeNamedTuple, `{"class_name": "Pair", "fields": ["a", "b"]}`, leaf, leaf)))
	eqStrings(t, "old namedtuple", names(s.Leaves()), []string{"0", "1"})
	if s.ChildKeys[1].Name != "b" {
		t.Errorf("torch key of field 1 = %+v", s.ChildKeys[1])
	}
	s = mustDecode(t, spec(rawNode(TypeDefaultDict, `{"default_factory_module": "builtins", "default_factory_name": "list", "dict_context": ["x", "y"]}`, leaf, leaf)))
	eqStrings(t, "defaultdict", names(s.Leaves()), []string{"x", "y"})
	s = mustDecode(t, spec(node("my.pkg.Box", `[["lo", "hi"], ["unused"]]`, leaf, leaf)))
	eqStrings(t, "dataclass", names(s.Leaves()), []string{"lo", "hi"})
	s = mustDecode(t, spec(node("my.pkg.Opaque", `not json at all`, leaf, leaf)))
	eqStrings(t, "opaque", names(s.Leaves()), []string{"0", "1"})
	s = mustDecode(t, spec(node(TypeList, "null", node(TypeNone, "null"), leaf)))
	eqStrings(t, "None child", names(s.Leaves()), []string{"1"})
	s = mustDecode(t, spec(node(TypeDeque, "4", leaf)))
	eqStrings(t, "deque", names(s.Leaves()), []string{"0"})
	s = mustDecode(t, spec(node(TypeImmutableDict, `["w"]`, node(TypeImmutableList, "null", leaf))))
	eqStrings(t, "immutable", names(s.Leaves()), []string{"w.0"})
}

func TestInputNamesPositionalContainers(t *testing.T) {
	in := spec(node(TypeTuple, "null",
		node(TypeTuple, "null", node(TypeList, "null", leaf, leaf), node(TypeDict, `["Mask-A"]`, leaf), leaf),
		node(TypeDict, `["scale"]`, leaf)))
	s := mustDecode(t, in)
	got, err := InputNames(s, []string{"xs_0", "xs_1", "extra_mask_a", "y", "scale"})
	if err != nil {
		t.Fatal(err)
	}
	eqStrings(t, "inputs", got, []string{"xs.0", "xs.1", "extra.Mask-A", "y", "scale"})
	// Placeholders that do not follow torch's naming: each leaf keeps its own.
	got, err = InputNames(s, []string{"a", "b", "c", "y", "scale"})
	if err != nil {
		t.Fatal(err)
	}
	eqStrings(t, "fallback", got, []string{"a", "b", "c", "y", "scale"})
	if _, err := InputNames(s, []string{"a"}); err == nil || !strings.Contains(err.Error(), "5 leaves for 1 user inputs") {
		t.Errorf("count mismatch: %v", err)
	}
}

func TestDuplicateNames(t *testing.T) {
	s := mustDecode(t, spec(node(TypeDict, `[1, "1"]`, leaf, leaf)))
	if _, err := OutputNames(s); err == nil || !strings.Contains(err.Error(), `both named "1"`) {
		t.Errorf("duplicate names: %v", err)
	}
}

func TestDecodeErrors(t *testing.T) {
	cacheCtx := func(body string) string {
		return spec(node("m:C", `{"_t": "obj", "p": "m:C", "s": {"layers": [`+body+`]}}`, leaf, leaf))
	}
	cases := []struct{ in, path, msg string }{
		{`[1, {`, "$", "unexpected end"},
		{`[1, {"type": null}] x`, "$", "after the JSON value"},
		{`{"type": null}`, "$", "want [protocol, spec]"},
		{`[2, ` + leaf + `]`, "$[0]", "unsupported TreeSpec protocol 2"},
		{`[1, {"type": null, "context": null}]`, "$[1]", `missing "children_spec"`},
		{`[1, {"type": null, "context": "x", "children_spec": []}]`, "$[1].type", "a leaf (type null)"},
		{`[1, {"type": 3, "context": null, "children_spec": []}]`, "$[1].type", "want a type name or null"},
		{spec(node(TypeTuple, "null", `[]`)), "$[1].children_spec[0]", "want a spec object"},
		{spec(node(TypeDict, `["a"]`, leaf, leaf)), "$[1].context: $", "1 keys for 2 children"},
		{spec(node(TypeDict, `{"a": 1}`, leaf)), "$[1].context: $", "want the array of dict keys"},
		{spec(node(TypeDict, `[["a"]]`, leaf)), "$[1].context: $[0]", "unsupported dict key"},
		{spec(node(TypeDict, `[`, leaf)), "$[1].context: $", "unexpected end"},
		{spec(rawNode(TypeDict, `["a"]`, leaf)), "$[1].context", "want a JSON-encoded string"},
		{spec(node(TypeTuple, `["a"]`, leaf)), "$[1].context", "want a null context"},
		{spec(node(TypeNone, "null", leaf)), "$[1].context", "has 1 children"},
		{spec(rawNode(TypeDefaultDict, `{"x": 1}`, leaf)), "$[1].context", `missing "dict_context"`},
		{spec(rawNode(TypeNamedTuple, `3`, leaf)), "$[1].context", "namedtuple's type name"},
		{cacheCtx(`{"_t": "tensor", "i": 2}, {"_t": "tensor", "i": 0}`), "$[1].context: $.s.layers[0].i", "leaf index 2 out of range"},
		{cacheCtx(`{"_t": "tensor", "i": 0}, {"_t": "tensor", "i": 0}`), "$[1].context: $.s.layers[1].i", "referenced twice"},
		{cacheCtx(`{"_t": "tensor", "i": 1}`), "$[1].context: $", "child 0 of 2 is referenced by no"},
		{cacheCtx(`{"_t": "tensor", "i": -1}`), "$[1].context: $.s.layers[0].i", "out of range"},
		{cacheCtx(`{"_t": "tensor"}`), "$[1].context: $.s.layers[0]", `without "i"`},
		{cacheCtx(`{"_t": "blob"}`), "$[1].context: $.s.layers[0]._t", `unknown tag "blob"`},
		{cacheCtx(`{"_t": 7}`), "$[1].context: $.s.layers[0]._t", "want a tag string"},
		{cacheCtx(`{"_t": "obj", "p": "NoColon", "s": {}}`), "$[1].context: $.s.layers[0].p", `not "<module>:<qualname>"`},
		{cacheCtx(`{"_t": "obj", "s": {}}`), "$[1].context: $.s.layers[0]", `class path "p"`},
		{cacheCtx(`{"_t": "seq", "p": "a:b", "v": {}}`), "$[1].context: $.s.layers[0].v", "want an array"},
		{cacheCtx(`{"_t": "size", "v": ["x"]}`), "$[1].context: $.s.layers[0].v[0]", "want an int"},
		{spec(node("m:C", `{"_t": "obj", "p": "m:C", "s": {"odd key": {"_t": "device"}}}`)), `$[1].context: $.s["odd key"]`, `without "s"`},
		{spec(node(TypeDict, `{"a": 1, "a": 2}`)), "$[1].context: $", `duplicate object key "a"`},
	}
	for _, c := range cases {
		_, err := Decode(c.in)
		var pe *Error
		if !errors.As(err, &pe) {
			t.Errorf("%s: want a *pytree.Error, got %v", c.in, err)
			continue
		}
		if pe.Path != c.path || !strings.Contains(pe.Msg, c.msg) {
			t.Errorf("%s:\n got %v\nwant %s: …%s…", c.in, err, c.path, c.msg)
		}
	}
}

func TestDeepNestingIsAnError(t *testing.T) {
	deep := strings.Repeat(`[`, 5000) + strings.Repeat(`]`, 5000)
	if _, err := Decode(deep); err == nil || !strings.Contains(err.Error(), "nested deeper") {
		t.Errorf("deep JSON: %v", err)
	}
	s := leaf
	for i := 0; i < maxDepth+5; i++ {
		s = node(TypeTuple, "null", s)
	}
	if _, err := Decode(spec(s)); err == nil || !strings.Contains(err.Error(), "nested deeper") {
		t.Errorf("deep spec: %v", err)
	}
}

func TestContextText(t *testing.T) {
	s := mustDecode(t, spec(rawNode(TypeDefaultDict, `{"z": 1, "dict_context": ["k"], "a": [true, null, "q"]}`, leaf)))
	if want := `{"z":1,"dict_context":["k"],"a":[true,null,"q"]}`; s.Context != want {
		t.Errorf("Context = %s, want %s", s.Context, want)
	}
}
