// Package fbs reads the subset of the FlatBuffers schema language that the
// ExecuTorch schemas use (namespace, include, enum, union, table, root_type,
// file_identifier) and verifies untrusted buffers against it before any
// generated accessor touches them: every table, vtable, string, vector and
// union member reachable from the root is bounds-checked, like the C++
// flatbuffers::Verifier. Generated Go accessors do no checks of their own and
// panic (or loop over garbage lengths) on malformed input.
package fbs
