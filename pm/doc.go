// Package pm is fxport's pass manager: it runs every export workaround of
// the Python exporters (workaround-catalog.md) as an explicit, named pass
// over the IR, in a pipeline whose order is written down and checked.
//
// # Passes
//
// A Pass is a value: a kebab-case Name, a Doc whose title ends at the first
// blank line, a Kind (patch, fix, transform, analysis, lowering), the
// Backends and Stage it belongs to, an optional catalog ID ("ONNX-FX03"),
// ordering Requirements (After / Before another pass, with a Why), Required
// (correctness fixes cannot be disabled), Repeatable, declared Options and
// a Run func. One Run may back several passes under different names (named
// instances such as onnx-node-fixes and onnx-node-fixes-after-decompose).
//
// # Targets, backends and stages
//
// Each target has an ordered list of stages (stages.go), taken from the
// catalog's stage lists (§5, §7):
//
//	dynamo:     dynamo.{signature, model-patches, pytree, dynamic-shapes, state-cleanup}
//	onnx:       the dynamo stages, then onnx.{torch-patches, fx-node-fixes,
//	            onnx-patches, onnx-translations, onnx-ir-fixes, emit}
//	executorch: executorch.backend-prepare, the dynamo stages, then
//	            executorch.{torch-patches, executorch-patches, fx-program-fixes,
//	            fx-node-fixes, lowering, emit}
//
// Stages are a coarse type-state: a pipeline never returns to an earlier
// stage. Backends are "all" (everywhere), "onnx", "executorch" (every
// "executorch.*") and the concrete ExecuTorch backends (xnnpack, cuda,
// portable, openvino, mlx). An export runs for one concrete backend.
//
// # Registries
//
// Workarounds are declared with one line in the file that defines them,
// in a Registry of their kind inside a Catalog (Default unless a test makes
// its own):
//
//	var FixDetachInplace = pm.RegisterNodeFix(&pm.NodeFix{ID: "ONNX-FX03", ...})
//
// The registries are:
//
//   - Patch: a revertible node rewrite on op overloads ("aten::where.self"),
//     torch API paths ("torch.where", "torch.Tensor.where", mapped to their
//     overloads by pm's API table) or model-method paths
//     ("<module>.<Class>.<method>", matched through node metadata). The
//     stage's patch driver (apply-<stage>) applies the export's patches.
//   - NodeFix: fixes on op targets, run by a node-fix driver (first fix that
//     returns true wins, then DCE); target sets of one backend are disjoint.
//   - ProgramFix: whole-program fixes; each is also a pass of its name.
//   - Translation, IRFix: the ONNX translation table and ONNX IR fixes,
//     implemented later by the ONNX target through Translator / ONNXRewriter.
//   - BackendPrepare: ExecuTorch backend preparation and partitioners.
//   - CaptureStep: capture-only workarounds, declared so they are listed.
//   - Invariant: a catalog row that is a property of fxport's own frontend,
//     lowering, optimizer or emitter rather than a rewrite ("the emitter
//     never writes empty value_ints"); it names the property, Where it is
//     implemented and the Go Test that fails when it breaks. Not run.
//   - Declined: a catalog row fxport deliberately does not implement, with
//     its Reason (a semantics change fxport does not make, a backend it
//     has no target for, a property not upheld yet). Not run.
//
// A target that does not resolve is a registration error naming the entry
// and the target, never a silent skip. Registries are filled at init and
// read-only afterwards; Catalog.List describes every entry, so every row of the
// catalog's central table appears in listings as some kind of entry.
//
// # Exports
//
// An Export (NewExport) is one export of one program: it owns the set of
// installed patches (all of the backend's by default; ExcludePatches and
// IncludePatches by name or ID), the record of every patch application and
// the log of what fired where. Export.Revert restores a patch's original
// nodes exactly. Exports share no mutable state and may run concurrently.
//
// # Pipelines and their text form
//
// A Pipeline lists pass instances grouped by stage for a target and
// backend. Build reads the default one from the target's table in
// pipelines.go, the single source of pass order: named pass instances,
// rows conditional on backends, each with its reason, order constraints
// (PassOrder) checked at init, and an error for a registered pass that no
// table names. Patch drivers apply patches in PatchOrder; every other
// registry is kept in catalog-ID order, so registration order (Go's init
// order, which follows file names) never matters. ParsePipeline reads the
// text form, which String prints back exactly:
//
//	pipeline := header ':' [ group { ',' group } ]
//	header   := "dynamo" | "onnx" | executorch-backend   (e.g. "executorch.xnnpack")
//	group    := stage '(' [ instance { ',' instance } ] ')'
//	stage    := owner '.' name                            (e.g. "onnx.fx-node-fixes")
//	instance := pass-name [ '{' { key '=' value } '}' ]  (options separated by spaces)
//	value    := [A-Za-z0-9_.:/+-]+ | Go-quoted string
//
// for example
//
//	onnx: dynamo.state-cleanup(drop-unused-weights), onnx.fx-node-fixes(onnx-node-fixes, dce{aggressive=true})
//
// Whitespace between tokens is free; the printed form uses ", " and ": ",
// qualified stage names and options sorted by key. Validation (on Parse,
// Build and Run) reports unknown passes, duplicates of non-Repeatable
// passes, unmet or violated requirements, requirement cycles (listing the
// members), stages out of order, passes outside their stage or backend and
// undeclared options, each naming the passes involved. Nothing is reordered
// automatically.
//
// # Running
//
// Run executes a pipeline for an export under a Config: verification
// before the first pass and after each (VerifyEach), IR dumps before/after
// selected passes or only on change (files named by DumpFileFormat),
// timing and allocation measurements, disabling non-required passes,
// seeded node shuffling, and a reproducer file written when a pass fails
// (LoadReproducer reads it back). Panics, returned errors and verifier
// failures become a *PassError naming the pass, the node when known, and
// the patch or fix at work. The Report lists each pass's kind, stage,
// change flag, statistics (Ctx.Stat) and measurements, and every firing;
// its text form without measurements is deterministic.
//
// # Ctx
//
// A pass sees its Export, its own declaration, its pipeline options
// (Option, BoolOption), statistics counters (Stat), the firing log (Fired)
// and debug output in the stable form "pass: node: message" (Debugf).
package pm
