// Package pt2 reads what torch.export.save writes into fxport's IR.
//
// Three containers are read (see docs/frontends.md for the full matrix):
//
//   - the PT2 archive of torch ≥ 2.9: one root folder holding
//     archive_format ("pt2"), archive_version ("0"), byteorder,
//     models/<name>.json and the weights and constants as raw storage
//     records indexed by data/{weights,constants}/<name>_*_config.json;
//   - the PT2 archive of torch 2.8, whose weights and constants are
//     torch.save pickles (data/weights/<name>.pt), read by a small
//     interpreter of the tensor subset of torch's pickle format;
//   - the flat zip of torch 2.5–2.7 (serialized_exported_program.json with
//     serialized_state_dict.pt and serialized_constants.pt pickles),
//
// and a bare ExportedProgram JSON document. Programs must use schema major
// version 8 (torch 2.6 and later) or 7 (torch 2.5, the same fields for what
// is read); any minor version is read, unknown
// fields are ignored, and unknown union tags are errors naming the JSON
// path.
//
// Every node becomes an IR node of the op its target names, with its
// arguments bound to the op's schema (omitted defaults filled in); values
// keep the file's names and take their types from the graph's tensor and
// symbolic value tables (dim orders derived from the strides by
// ir.DimOrderFromStrides, ET-P13); symbolic sizes are parsed (sympy srepr or plain
// text) into ir/sym expressions, and range constraints and hints become the
// program's symbol environment; higher-order-op subgraphs become regions;
// node metadata becomes node metadata; the signature, the module call graph
// and the program-level fields are kept (program metadata keys pt2.*).
//
// Weights are never read: each becomes an ir.Weight whose Source (this
// package's Source, spelled pt2("file", "entry", offset=…, size=…) in IR
// text) is a byte range of the archive file, opened on demand.
//
// Archives are untrusted input: entry names, sizes, overlaps, compression
// ratios, JSON nesting and pickle opcodes are checked, and every failure is
// an *Error naming the file, the record and (for JSON) the path. Nothing
// panics on malformed input and nothing in a pickle is executed.
package pt2
