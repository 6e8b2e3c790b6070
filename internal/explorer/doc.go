// Package explorer renders the pipeline explorer of `fxport explore`: one
// self-contained HTML file (inline CSS and JavaScript, nothing fetched) of
// one export — the passes with their times and changes, the IR after each
// pass that changed it with the changed nodes highlighted and a diff against
// the previous IR, the workarounds that fired linked to their nodes and
// catalog IDs, and the artifact's summary with its memory plan drawn as an
// SVG picture of each arena over the instructions.
//
// The package only renders: callers fill a Page from the pass manager's
// report and dumps (pm.Report, pm.Config.OnDump) and the written artifact.
// The output is deterministic; Page.Times says whether pass durations, the
// only varying part, are shown.
package explorer
