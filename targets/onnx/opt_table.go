package onnx

import (
	_ "embed"
	"encoding/json"
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
	Scope   string   `json:"scope"`
	Classes []string `json:"classes"`
	Reason  string   `json:"reason"`
	// Upstream names the bug of the Python system's optimizer the entry
	// works around.
	Upstream string `json:"upstream"`
}

//go:embed disable_optimize.json
var disableOptimizeJSON []byte

// DisableOptimize is the catalog's optimizer-toggle table (workaround
// catalog §2.1, latest revision, scopes "all" and "dynamic"), read from the
// data file disable_optimize.json. The entries record bugs of the Python
// system's optimizer (onnxscript); fxport's optimizer has neither the
// reference-evaluator slowdown (it folds a fixed op set on small tensors)
// nor SplitToSequence folding, so the table is kept as policy — the same
// classes export unoptimized — until each entry is re-checked against this
// optimizer (the model sweep, docs/models.md), and is expected to shrink.
var DisableOptimize = mustDisableTable(disableOptimizeJSON)

func mustDisableTable(b []byte) []DisableEntry {
	var doc struct {
		Entries []DisableEntry `json:"entries"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		panic("targets/onnx/disable_optimize.json: " + err.Error())
	}
	return doc.Entries
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
