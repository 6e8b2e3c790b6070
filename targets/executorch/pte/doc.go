// Package pte reads ExecuTorch program files (.pte), their external data
// files (.ptd) and bundled programs (.bpte): the eh00 extended header, the
// program flatbuffer (verified against fxport's schema before it is decoded),
// its segments, constants, named data and delegate payloads, including the
// XNNPACK delegate's XH00-wrapped XN01 graph. Malformed input yields an error
// naming the file and the offending field, never a panic.
//
// Summary prints a deterministic, human-readable description of a decoded
// file (`fxport inspect`).
//
// Encode and EncodePTDWith write files in memory; Write and WritePTD stream
// the same bytes, taking segment and entry bytes from lazy sources (Piece,
// Lazy) one at a time, so that weights are never all held in memory.
package pte
