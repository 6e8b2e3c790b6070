package pm

import (
	"fmt"
	"strings"
)

// Target names.
const (
	TargetDynamo     = "dynamo"
	TargetONNX       = "onnx"
	TargetExecuTorch = "executorch"
)

// Stage is one step of an exporter, as the Python system numbers them
// (workaround-catalog §5, §7). Stages are a coarse type-state: within a
// pipeline, passes never go back to an earlier stage.
type Stage struct {
	// Owner is the target that defines the stage; the dynamo stages are
	// owned by "dynamo" and run inside the ONNX and ExecuTorch targets too.
	Owner string
	// Name is the stage's name, unique within each target that has it.
	Name string
	// Doc is a one-line description.
	Doc string
	// Patches marks a stage that holds patches; a patch driver named
	// "apply-<Name>" runs the export's patches of that stage.
	Patches bool
}

// Qualified is the stage's pipeline-text spelling, "<owner>.<name>".
func (s Stage) Qualified() string { return s.Owner + "." + s.Name }

// Stage names.
const (
	StageSignature         = "signature"
	StageModelPatches      = "model-patches"
	StagePytree            = "pytree"
	StageDynamicShapes     = "dynamic-shapes"
	StageStateCleanup      = "state-cleanup"
	StageTorchPatches      = "torch-patches"
	StageONNXPatches       = "onnx-patches"
	StageFXNodeFixes       = "fx-node-fixes"
	StageONNXTranslations  = "onnx-translations"
	StageONNXIRFixes       = "onnx-ir-fixes"
	StageEmit              = "emit"
	StageBackendPrepare    = "backend-prepare"
	StageExecuTorchPatches = "executorch-patches"
	StageFXProgramFixes    = "fx-program-fixes"
	StageLowering          = "lowering"
)

// The dynamo stages in the order of the Python module docstring
// (§5.1: signature = 1, model patches = 2, pytree = 3, dynamic shapes = 4,
// state cleanup = 5). On a traced program the first four only hold
// declared capture steps and checks of what capture left behind.
var dynamoStages = []Stage{
	{TargetDynamo, StageSignature, "forward-signature patch: one named parameter per input (DYN-S08)", false},
	{TargetDynamo, StageModelPatches, "patches on model code that make tracing possible (DYN-P*)", true},
	{TargetDynamo, StagePytree, "pytree registration of caches and output containers (DYN-S05)", false},
	{TargetDynamo, StageDynamicShapes, "dynamic-shape specification of the inputs (DYN-S04)", false},
	{TargetDynamo, StageStateCleanup, "model-state reset and post-trace cleanup such as dropping unused weights (DYN-S06, DYN-S10)", false},
}

// The ONNX stages follow the execution order of §5.2, which differs from the
// order of the "# ── Stage N ──" banners (they name registries): node fixes
// run once before decomposition (step 6) and again after it (step 7, ONNX-P18).
var onnxStages = []Stage{
	{TargetONNX, StageTorchPatches, "legalizations of the torch ops the ONNX exporter patches (ONNX-P*)", true},
	{TargetONNX, StageFXNodeFixes, "FX node fixes, first pass, before decomposition (ONNX-FX*)", false},
	{TargetONNX, StageONNXPatches, "ONNX patches: decomposition to the ONNX table, then the node fixes again (ONNX-P18)", true},
	{TargetONNX, StageONNXTranslations, "custom translations of ATen ops into ONNX (ONNX-TR*)", false},
	{TargetONNX, StageONNXIRFixes, "rewrites of the translated ONNX graph, before serialization (ONNX-IR*, ONNX-S02)", false},
	{TargetONNX, StageEmit, "serialization of the ONNX model and its export metadata (ONNX-S03)", false},
}

// The ExecuTorch stages of §5.3: backend prepare runs first, outside any patch scope.
var executorchPrepare = []Stage{
	{TargetExecuTorch, StageBackendPrepare, "backend preparation and partitioner selection (ET-B*)", false},
}

var executorchStages = []Stage{
	{TargetExecuTorch, StageTorchPatches, "legalizations of the torch ops the ExecuTorch exporter patches (ET-P01–P09, ET-P17–P33)", true},
	{TargetExecuTorch, StageExecuTorchPatches, "workarounds for ExecuTorch-internal passes (ET-P10–P16, ET-P34–P42)", true},
	{TargetExecuTorch, StageFXProgramFixes, "program fixes in declared order: range constraints, placeholder values (ET-PF*)", false},
	{TargetExecuTorch, StageFXNodeFixes, "FX node fixes, first match wins, then DCE (ET-NF*)", false},
	{TargetExecuTorch, StageLowering, "edge lowering and partitioning (ET-L01, ET-L02)", false},
	{TargetExecuTorch, StageEmit, "memory planning and .pte serialization (ET-L03, ET-L04)", false},
}

func concatStages(parts ...[]Stage) []Stage {
	var out []Stage
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// stageTable maps each target to its ordered stages.
var stageTable = []struct {
	target string
	stages []Stage
}{
	{TargetDynamo, dynamoStages},
	{TargetONNX, concatStages(dynamoStages, onnxStages)},
	{TargetExecuTorch, concatStages(executorchPrepare, dynamoStages, executorchStages)},
}

func init() {
	// Stage names must be unique within a target, kebab-case and documented.
	for _, t := range stageTable {
		seen := map[string]bool{}
		for _, s := range t.stages {
			if seen[s.Name] || !ValidName(s.Name) || s.Doc == "" {
				panic(fmt.Sprintf("pm: stage table: bad or duplicate stage %q in target %s", s.Name, t.target))
			}
			seen[s.Name] = true
		}
	}
}

// Targets lists the target names in table order.
func Targets() []string {
	out := make([]string, len(stageTable))
	for i, t := range stageTable {
		out[i] = t.target
	}
	return out
}

func targetStages(target string) []Stage {
	for _, t := range stageTable {
		if t.target == target {
			return t.stages
		}
	}
	return nil
}

// Stages returns the ordered stages of target.
func Stages(target string) ([]Stage, error) {
	s := targetStages(target)
	if s == nil {
		return nil, fmt.Errorf("unknown target %q (targets: %s)", target, strings.Join(Targets(), ", "))
	}
	return append([]Stage(nil), s...), nil
}

// StageIndex finds stage in target's table, by name ("fx-node-fixes") or
// qualified name ("onnx.fx-node-fixes"); it returns -1 when absent.
func StageIndex(target, stage string) int {
	for i, s := range targetStages(target) {
		if s.Name == stage || s.Qualified() == stage {
			return i
		}
	}
	return -1
}

// checkStage verifies that stage exists in every target where entries of
// backend b run (an entry for "all" must name a dynamo stage).
func checkStage(b, stage string) error {
	if stage == "" {
		return fmt.Errorf("no Stage")
	}
	var missing []string
	for _, t := range targetsOf(b) {
		if StageIndex(t, stage) < 0 {
			missing = append(missing, t)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("stage %q is not a stage of target %s, where backend %q runs", stage, strings.Join(missing, ", "), b)
	}
	return nil
}

// localStage strips the owner from a qualified stage name.
func localStage(stage string) string {
	if i := strings.LastIndexByte(stage, '.'); i >= 0 {
		return stage[i+1:]
	}
	return stage
}
