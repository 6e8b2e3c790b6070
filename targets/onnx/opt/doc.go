// Package opt is fxport's ONNX graph optimizer. It rewrites an emitted
// ModelProto in place, before serialization, with a fixed set of exact
// passes iterated to a capped fixpoint:
//
//   - constant folding of a conservative op set (Shape of static shapes,
//     Gather, Concat, Unsqueeze, Squeeze, Reshape, Slice, Size,
//     Cast from integers, and integer Add/Sub/Mul/Div/Min/Max) whose inputs
//     are all Constants or inline initializers and whose output has at most
//     Options.FoldLimit elements; Resize, fills, random and quantization ops
//     are never folded (catalog ONNX-P24);
//   - exact algebraic rewrites (x+0, x-0, x*1, x/1) where the pattern
//     constant is a rank-0 tensor whose bits equal the identity element:
//     no tolerance, so x + 1e-10 stays (ONNX-P24), and x + 0.0 stays for
//     floats because it turns -0.0 into +0.0 (only x + (-0.0) is exact);
//   - identity removal that keeps the Identity of a graph output reading a
//     graph input, an initializer, another output or a value with other
//     uses (the ONNX-S01 distinct-outputs property);
//   - common-subexpression elimination (same domain, op, attributes and
//     inputs; random ops excluded);
//   - dead-code elimination of nodes and of unused initializers.
//
// Initializers are never merged (ONNX-P25): see RemovedInitializers in Stats
// for the only change made to them. Every pass walks nodes in graph order
// and uses maps only for lookups, so the result is deterministic.
package opt
