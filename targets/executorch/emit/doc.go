// Package emit turns an IR program that the ExecuTorch pipeline lowered
// (out variants writing into memory.alloc tensors, a memory plan recorded
// by targets/executorch/plan) into a .pte program (pte.File) for the
// portable kernel library, following exir's emitter conventions
// (shared/reference/pte-format.md §4): values in placeholder and node order,
// one fresh scalar value per literal argument, boxed IntLists, out arguments
// followed by the return values, constants deduplicated by content in the
// constant segment, constant_segment {0, [0, …]} always present, constant
// (non-tensor) inputs as literal values in plan.inputs, higher_order.cond
// inline with JumpFalseCall/MoveCall (control_flow.go), and the export
// metadata as a constant method (ET-L04). Constants stay in their weights'
// sources: the constant and mutable-data segments and the .ptd tensors are
// lazy pieces that pte.Write / pte.WritePTD stream (constants.go,
// lazy_named.go).
package emit
