package onnx

import (
	"sort"

	"github.com/fxport/fxport/ir"
)

// MetaModelClass is the program-metadata key naming the exported model's
// class (e.g. "YolosForObjectDetection"). The .pt2 frontend copies the
// archive's graph_module.metadata into the program metadata verbatim, so an
// archive that records "export.model_class" there carries it; IR text sets it
// with `meta "export.model_class" = "…"`, and `fxport export --model-class`
// overrides it.
const MetaModelClass = "export.model_class"

// Scopes of DisableOptimize entries.
const (
	ScopeAll     = "all"     // every export of the class
	ScopeDynamic = "dynamic" // only exports with a symbolic input dimension
)

// DisableEntry turns the optimizer off for some model classes.
type DisableEntry struct {
	Scope   string
	Classes []string
	Reason  string
}

// DisableOptimize is the catalog's optimizer-toggle table (workaround
// catalog §2.1, latest revision, scopes "all" and "dynamic"). The entries
// record bugs of the Python system's optimizer (onnxscript); fxport's
// optimizer has neither the reference-evaluator slowdown (it folds a fixed
// op set on small tensors) nor SplitToSequence folding, so the table is kept
// as policy — the same classes export unoptimized — until each entry is
// re-checked against this optimizer, and is expected to shrink.
var DisableOptimize = []DisableEntry{
	{ScopeAll, []string{"LayoutLMv2Model", "LayoutLMv2ForSequenceClassification", "LayoutLMv2ForTokenClassification", "LayoutLMv2ForQuestionAnswering"},
		"detectron2 FPN backbone: the optimizer dropped initializers that nodes still reference; ORT got an invalid graph"},
	{ScopeAll, []string{"YolosModel", "YolosForObjectDetection"},
		"optimizer ran past 6 min on many small Concat/Slice nodes (Resize folding); unoptimized export takes 2 s"},
	{ScopeAll, []string{"PixioModel"},
		"same small-node optimizer slowdown (≈ 100–290 s)"},
	{ScopeAll, []string{"SegGptModel", "SegGptForImageSegmentation"},
		"same small-node optimizer slowdown (≈ 100–290 s)"},
	{ScopeDynamic, []string{"ProphetNetModel", "ProphetNetForConditionalGeneration", "ProphetNetDecoder", "ProphetNetForCausalLM", "ZoeDepthForDepthEstimation"},
		"SplitToSequence constant folding fails under dynamic shapes ('NoneType' object has no attribute 'ndim')"},
	{ScopeDynamic, []string{"LlavaNextVideoModel", "LlavaNextVideoForConditionalGeneration"},
		"SplitToSequence folding crash from a per-image torch.split under dynamic shapes"},
}

// OptimizeDisabled looks a model class up in DisableOptimize; dynamic says
// whether the export has a symbolic input dimension. It returns the entry's
// scope and reason when the optimizer must stay off.
func OptimizeDisabled(modelClass string, dynamic bool) (disabled bool, why string) {
	if modelClass == "" {
		return false, ""
	}
	for _, e := range DisableOptimize {
		if e.Scope == ScopeDynamic && !dynamic {
			continue
		}
		for _, c := range e.Classes {
			if c == modelClass {
				return true, "model class " + modelClass + " (scope " + e.Scope + "): " + e.Reason
			}
		}
	}
	return false, ""
}

// ModelClass is the program's model class (MetaModelClass), or "".
func ModelClass(p *ir.Program) string {
	v, _ := p.Meta.Get(MetaModelClass)
	return v
}

// DynamicExport reports whether a user input has a symbolic dimension.
func DynamicExport(p *ir.Program) bool {
	for i, v := range p.Main.Inputs {
		if i < len(p.Signature.Inputs) && p.Signature.Inputs[i].Kind != ir.UserInput {
			continue
		}
		if t := v.Tensor(); t != nil {
			for _, d := range t.Shape {
				if _, ok := d.Const(); !ok {
					return true
				}
			}
		}
	}
	return false
}

// DisabledClasses lists every class in the table with its scope, sorted.
func DisabledClasses() []string {
	var out []string
	for _, e := range DisableOptimize {
		for _, c := range e.Classes {
			out = append(out, c+" ("+e.Scope+")")
		}
	}
	sort.Strings(out)
	return out
}
