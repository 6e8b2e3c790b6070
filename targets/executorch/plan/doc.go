// Package plan is fxport's ExecuTorch memory planner: it gives every tensor
// of a lowered program that needs run-time memory (activations, and graph
// inputs, outputs and mutable buffers as Options say) an offset in a planned
// arena, the way exir's MemoryPlanningPass does.
//
// Sizes are element size × the product of each dim's upper bound under the
// program's range constraints (sym.Env.UpperBound); a dim without a finite
// upper bound is an error naming the value and the symbol — widening is the
// job of the widen-symbol-ranges pass (ET-PF01), and the planner never
// invents a bound (ET-P10). Values that share storage (an out variant's
// result and its memory.alloc out tensor, in-place results, et_view results
// and their base — exir's memory.view, made by replace-view-copy-with-view,
// whose base's lifetime thereby extends over the view's uses — and
// remaining aliasing views) form one storage class whose lifetime runs from
// the first definition of a member to the last use of any member; the
// max-live lower bound counts each class once, so an alias never inflates
// it. Classes are placed
// greedily (several orders are tried, the smallest arena wins; exir's own
// greedy order is tried first and wins ties, so small programs get exir's
// offsets — exir.go), offsets aligned to 16 bytes, all in memory id 1 (ids are 1-based; id 0 is the
// unused placeholder of non_const_buffer_sizes). Constants are not planned.
// Values inside higher_order.cond regions are planned in the same arena:
// positions follow the emitted instruction order (true region, its moves,
// false region, its moves, the cond), so the exclusive branches share
// bytes and nothing inside a branch overlaps a value live across the cond
// (cond.go, layout.go). Values inside higher_order.while_loop, scan and
// map_impl regions are planned too: the loop's results are its carried
// slots (and stacked outputs), live across the whole loop, values the loop
// reads from outside live to its exit, and values defined inside the loop
// live within one iteration (from their definition to their last use in
// the emitted order of one trip), so body temporaries share bytes with
// each other but never with a slot or a value live across the loop.
//
// The result is recorded in the IR (Record) so goldens show it and the
// emitter reads it back (Read): node metadata mem = "1:<offset>:<size>"
// (one entry per result, "-" for a result without planned storage,
// separated by ","), and program metadata for graph inputs and the arenas.
package plan
