// Package pt2 writes an IR program as a PT2 archive, the file torch ≥ 2.9's
// torch.export.save writes and torch.export.load reads: the Dynamo target's
// output.
//
// The archive has one root folder (the file's base name) holding
// archive_format, archive_version, byteorder, models/<model>.json (the
// ExportedProgram in schema 8.20's JSON form, fields in schema.py order),
// the weights and constants as raw storage records
// (data/weights/weight_<i>, data/constants/tensor_<i>) indexed by their
// payload configs, and .data/version and .data/serialization_id. Weights
// that share a source share a record, so aliasing views keep their storage.
//
// The writer emits every argument kind the reader (frontends/pt2) accepts,
// so reading what it wrote gives back the same IR text (weight sources
// aside, which name the new file). See docs/frontends.md.
package pt2
