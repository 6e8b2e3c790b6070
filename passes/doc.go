// Package passes holds the ExecuTorch exporter's passes and workarounds:
// torch patches (ET-P*), program fixes (ET-PF*), node fixes (ET-NF*),
// backend prepares (ET-B*), edge lowering, the batch-norm fusion before
// XNNPACK partitioning and memory planning, one small file per workaround
// named after its catalog ID, each
// registering itself with one line into the pm registry of its kind. Their
// places in the pipelines are rows of pm/pipelines.go.
//
// The ExecuTorch pipelines begin with the Dynamo stages, so the package
// links passes/dynamo, and it links the delegates, which register their
// partitioning passes beside their support rules (et_delegates.go).
// Importing it (for its side effects) fills pm.Default with everything an
// ExecuTorch export needs; each workaround has a golden
// test in tests/testdata/passes/<id>.fxir; see docs/extending.md.
package passes

import _ "github.com/fxport/fxport/passes/dynamo" // the Dynamo stages of every ExecuTorch pipeline
