// Package fxtext reads the text torch prints for FX graphs into the IR.
//
// It reads the three printed forms and the ExportedProgram print around the
// last one (Detect tells them apart):
//
//	graph     print(gm.graph)          %add : [num_users=1] = call_function[target=torch.ops.aten.add.Tensor](args = (%x, %y), kwargs = {})
//	code      gm.code                  add = torch.ops.aten.add.Tensor(x, y);  x = y = None
//	readable  gm.print_readable()      add: "f32[s0, 4]" = torch.ops.aten.add.Tensor(x, y)
//	          print(exported_program)  ExportedProgram: + readable form + Graph signature: + Range constraints:
//
// Parse turns nodes into IR nodes through the op table (ir.LookupOp,
// ir.BindArgs), restores the values the graph form prints bare (strings,
// dtypes, devices) from the op schema, folds operator.getitem into the
// results of multi-result nodes, builds the regions of higher-order ops
// (cond, while_loop, map_impl, scan, wrappers) from the nested subgraph
// classes, and maps the graph signature and range constraints onto the
// program. Types come from the annotations, otherwise from the operands a
// higher-order op passes its subgraph or from shape inference; an error
// names the file, line, column and node, and says what is missing.
//
// The package has one job per file: lexer.go and expr.go (a Python-subset
// tokenizer and expression parser), pyform.go (classes, functions and
// statements of the code and readable forms), graphform.go (the graph
// form), document.go (form detection, ExportedProgram sections),
// signature.go and ranges.go (the trailer sections), annot.go (type
// annotations), build.go, convert.go, results.go and hop.go (the IR), and
// fxtext.go (Parse and the program's signature and weights). See
// docs/frontends.md for what each form keeps and loses.
package fxtext
