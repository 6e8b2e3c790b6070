// Package pt2schema holds the torch.export serialization schema (major
// version 8) as Go types, shared by the .pt2 reader (frontends/pt2) and the
// .pt2 writer (targets/pt2), together with the JSON reading and writing they
// use.
//
// JSON is read by a small decoder of its own rather than encoding/json, for
// three reasons: every error carries the JSON path of the value at fault
// ("graph_module.graph.nodes[12].inputs[0].arg: unknown Argument tag
// \"as_foo\""); the reader can visit a large program node by node without
// materialising it; and torch's conventions (floats spelled "Infinity",
// enums spelled by name, union objects with exactly one non-null member,
// missing fields taking their defaults, unknown fields ignored) are applied
// in one place. The decoder never panics on malformed input and bounds its
// nesting depth.
//
// JSON is written the way Python's json.dumps writes it by default (", "
// and ": " separators, ASCII-only strings, floats in repr form, infinities
// as the strings torch uses), with struct fields in the declaration order of
// torch/_export/serde/schema.py, so equal inputs give equal bytes.
//
// The types are semantic rather than literal: the SymIntArgument,
// SymBoolArgument, SymFloatArgument and OptionalTensorArgument unions are
// folded into Argument (a {"as_name": …} member becomes a named reference,
// an {"as_int": …} member a literal), because the reader treats both
// spellings alike and the writer needs only one.
package pt2schema
