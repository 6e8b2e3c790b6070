// Package pytree decodes the TreeSpec strings torch.export writes for a
// program's inputs and outputs (torch.utils._pytree.treespec_dumps, protocol
// 1) and names their leaves the way the Python exporters name a model's
// inputs and outputs.
//
// # The format
//
// A TreeSpec string is the JSON text
//
//	[1, {"type": T, "context": C, "children_spec": [ ...nodes... ]}]
//
// where 1 is the protocol version, T is a registered type name
// ("builtins.tuple", "builtins.list", "builtins.dict",
// "collections.OrderedDict", "collections.namedtuple",
// "collections.defaultdict", "collections.deque", "builtins.NoneType",
// "torch.fx.immutable_collections.immutable_list" / "immutable_dict", or a
// user-registered serialized_type_name) or null for a leaf, and C is the
// node's context: usually a string holding JSON text (the dict keys, "null"
// for tuples), a plain string for namedtuples (the namedtuple's registered
// type name), or a JSON value for types with a to_dumpable_context hook
// (defaultdict). A leaf is {"type": null, "context": null, "children_spec": []}.
//
// transformers registers its Cache classes (catalog DYN-S05) under the type
// name "<module>:<qualname>" with a JSON-native context: plain JSON values,
// lists and dicts, and tagged objects {"_t": tag, ...} with tag one of
// "tensor" and "sym" (a leaf: "i" is the index of the child it stands for),
// "size" ("v": ints), "device" ("s"), "dtype" and "layout" ("n"), "type"
// ("p": class path), "map" ("p", "v": an object), "seq" ("p", "v": an array)
// and "obj" ("p", "s": the instance attributes, in vars() order). Decode
// follows such a context to find where each child sits inside the object,
// so a cache leaf is named after the attribute path that holds it
// ("past_key_values.layers.0.keys"), not after its position.
//
// # Names
//
// Leaves are named by the dotted path of keys from the root, the way
// transformers' exporter names I/O (catalog ONNX-S01): dict keys, sequence
// indices, object attributes in vars() order; a bare tensor output is named
// "output". InputNames understands the root (args, kwargs) pair of an
// export's in_spec; OutputNames names an out_spec.
//
// Decode never panics: malformed input gives an *Error naming the JSON path
// of the problem ("$[1].children_spec[0].context").
package pytree
