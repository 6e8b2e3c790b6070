package pm

import (
	"fmt"
	"strings"

	"github.com/fxport/fxport/ir"
)

// Pass is one transformation of a program, declared as a value:
//
//	var DropUnusedWeights = pm.RegisterPass(&pm.Pass{Name: "drop-unused-weights", ...})
//
// The same Run may back several passes under different names (named
// instances), e.g. "onnx-node-fixes" and "onnx-node-fixes-after-decompose".
type Pass struct {
	// Name is the pass's kebab-case name, used in pipeline text, flags and reports.
	Name string
	// Doc describes the pass; its title ends at the first "\n\n".
	Doc string
	// Kind says what the pass does.
	Kind Kind
	// Backends are the backends the pass runs for; empty means "all".
	Backends []string
	// Stage is the stage the pass belongs to, by name ("fx-node-fixes");
	// "" means the pass may run in any stage (generic utilities such as dce).
	Stage string
	// ID is the workaround-catalog ID the pass implements ("ONNX-FX03"), if any.
	ID string
	// Requires are ordering edges to other passes, checked (never used to
	// reorder) when a pipeline is validated.
	Requires []Requirement
	// Required passes are correctness fixes: disabling one is an error.
	Required bool
	// Repeatable passes may appear more than once in a pipeline.
	Repeatable bool
	// Options are the options the pipeline text may set on the pass.
	Options []OptionSpec
	// Run transforms p. It reports whether it changed p.
	Run func(p *ir.Program, c *Ctx) (Result, error)

	// driver marks pm's built-in registry drivers.
	driver bool
	// idle, when set, tells Build to leave the pass out of a default
	// pipeline because it has nothing to run for the backend.
	idle func(c *Catalog, backend string) bool
	// synthetic marks passes the catalog derives from another registry
	// (program fixes); listings show the original entry instead.
	synthetic bool
}

// Requirement is an ordering edge: exactly one of After and Before is set.
type Requirement struct {
	// After names a pass that must run earlier.
	After string
	// Before names a pass that must run later.
	Before string
	// Why says what breaks otherwise.
	Why string
}

func (r Requirement) String() string { return r.dir() + " " + r.After + r.Before }

func (r Requirement) dir() string {
	if r.After != "" {
		return "after"
	}
	return "before"
}

// Result is what a pass reports.
type Result struct {
	// Changed is set when the pass modified the program.
	Changed bool
}

// OptionSpec declares one option a pass accepts in pipeline text
// (name{key=value}).
type OptionSpec struct {
	Name    string
	Doc     string
	Default string
	// Check validates a value; nil accepts any value.
	Check func(value string) error
}

// BoolOption declares a boolean option.
func BoolOption(name string, def bool, doc string) OptionSpec {
	return OptionSpec{Name: name, Doc: doc, Default: fmt.Sprint(def), Check: func(v string) error {
		if v != "true" && v != "false" {
			return fmt.Errorf("want true or false, got %q", v)
		}
		return nil
	}}
}

// Title is the first paragraph of a documentation string, on one line.
func Title(doc string) string {
	if i := strings.Index(doc, "\n\n"); i >= 0 {
		doc = doc[:i]
	}
	return strings.Join(strings.Fields(doc), " ")
}

// Title is the first paragraph of the pass's Doc.
func (p *Pass) Title() string { return Title(p.Doc) }

// option looks up a declared option.
func (p *Pass) option(name string) (OptionSpec, bool) {
	for _, o := range p.Options {
		if o.Name == name {
			return o, true
		}
	}
	return OptionSpec{}, false
}

// RunsFor reports whether the pass runs for the export backend b.
func (p *Pass) RunsFor(b string) bool { return appliesAny(p.Backends, b) }

// Info describes the pass for listings.
func (p *Pass) Info() EntryInfo {
	return EntryInfo{Kind: EntryPass, PassKind: p.Kind, ID: p.ID, Name: p.Name, Title: p.Title(),
		Backend: strings.Join(backendsOrAll(p.Backends), ","), Stage: p.Stage}
}

func backendsOrAll(bs []string) []string {
	if len(bs) == 0 {
		return []string{BackendAll}
	}
	return bs
}

// ValidatePass checks a pass declaration without registering it: the name,
// doc, kind, backends, stage, requirements and options. Whether the passes
// a requirement names exist is checked when a pipeline is validated.
func ValidatePass(p *Pass) error {
	if err := checkHeader(EntryPass, p.Name, p.ID, p.Doc); err != nil {
		return err
	}
	errf := func(format string, args ...any) error {
		return fmt.Errorf("pass %q: %s", p.Name, fmt.Sprintf(format, args...))
	}
	if !p.Kind.Valid() {
		return errf("invalid Kind %v", p.Kind)
	}
	if p.Run == nil {
		return errf("nil Run")
	}
	for _, b := range p.Backends {
		if !ValidBackend(b) {
			return errf("unknown backend %q (backends: %s)", b, strings.Join(Backends, ", "))
		}
	}
	if p.Stage != "" {
		for _, b := range backendsOrAll(p.Backends) {
			if err := checkStage(b, p.Stage); err != nil {
				return errf("%v", err)
			}
		}
	}
	for _, r := range p.Requires {
		switch {
		case (r.After == "") == (r.Before == ""):
			return errf("requirement must set exactly one of After and Before: %+v", r)
		case r.After == p.Name || r.Before == p.Name:
			return errf("requirement names the pass itself")
		case r.Why == "":
			return errf("requirement %s has no Why", r)
		}
	}
	seen := map[string]bool{}
	for _, o := range p.Options {
		if !ValidName(o.Name) || seen[o.Name] {
			return errf("bad or duplicate option name %q", o.Name)
		}
		seen[o.Name] = true
		if o.Check != nil {
			if err := o.Check(o.Default); err != nil {
				return errf("option %s: default: %v", o.Name, err)
			}
		}
	}
	return nil
}
