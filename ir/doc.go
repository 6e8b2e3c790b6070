// Package ir is fxport's typed SSA intermediate representation of the
// programs torch.export produces.
//
// A Program holds the main graph, its signature (what each input and output
// is: user input, parameter, buffer, lifted constant, mutation), the symbols
// of its dynamic dims with their ranges (package ir/sym), its weights as lazy
// handles (a WeightSource is opened only when a consumer needs the bytes)
// and program metadata. A Graph is a straight-line list of Nodes in SSA
// form; control flow lives in region graphs owned by higher-order nodes
// (cond, while_loop, scan, map_impl, delegate calls), isolated from above.
// Every Value has one definition and an exact use list.
//
// Ops come from the generated table in opgen.go (gen/ops.spec, `go generate
// ./ir`): each carries its parsed schema and a shape/dtype rule (infer_*.go)
// that Infer and the verifier apply. Builder creates nodes with their types
// inferred; Print and Parse give a text form that round-trips; Verify checks
// structure, use lists and types and names the graph and node at fault;
// transform.go holds DCE and Clone.
package ir
