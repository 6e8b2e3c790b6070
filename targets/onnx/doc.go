// Package onnx is fxport's ONNX target: it lowers an ir.Program that went
// through the ONNX pipeline (pm.Build("onnx", "")) into an ONNX ModelProto
// (package onnxpb) and writes it, with large weights as external data
// streamed straight from their source.
//
// The translation table (table.go) maps each ATen overload to lowerings keyed
// by the minimum default-domain opset they need; Emit resolves each node to
// the newest lowering the chosen opset allows (18 by default, 17–23
// selectable). Lowerings build nodes through a Builder, which materializes
// constants in the dtype an op binds, deduplicates them, and turns symbolic
// dimensions into Shape/Gather/arithmetic subgraphs. Programs with ops the
// table lacks fail with the full list of missing ops at once.
//
// The catalog's invariant rows are properties of this emitter, each checked
// by CheckInvariants before a file is written (see invariants.go and
// docs/targets/onnx.md): TopK is always sorted=1 (ONNX-IR01), no Constant
// has an empty value_ints (ONNX-P08), fills carry an explicit dtype
// (ONNX-P13), graph inputs and outputs are named from the signature and made
// distinct (ONNX-S01, ONNX-S02), and the export metadata is stored in
// metadata_props (ONNX-S03).
package onnx
