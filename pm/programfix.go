package pm

import (
	"fmt"

	"github.com/fxport/fxport/ir"
)

// ProgramFix repairs a whole program (ET-PF*, DYN-S10). Each registered
// program fix becomes a pass of the same name in its Stage; the pipeline
// tables (pipelines.go) place it, and Requires checks its order against
// other passes.
type ProgramFix struct {
	ID       string
	Name     string
	Doc      string
	Backend  string
	Stage    string
	Requires []Requirement
	// Fix reports whether it changed the program.
	Fix func(p *ir.Program, c *Ctx) (bool, error)
}

// Info describes the fix for listings.
func (f *ProgramFix) Info() EntryInfo {
	return EntryInfo{Kind: EntryProgramFix, PassKind: KindFix, ID: f.ID, Name: f.Name, Title: Title(f.Doc),
		Backend: f.Backend, Stage: f.Stage}
}

// ValidateProgramFix checks a program-fix declaration without registering it.
func ValidateProgramFix(f *ProgramFix) error {
	if f.Fix == nil {
		return fmt.Errorf("program-fix %q: nil Fix", f.Name)
	}
	return ValidatePass(f.pass())
}

// pass is the pass that runs the fix.
func (f *ProgramFix) pass() *Pass {
	return &Pass{
		Name: f.Name, Doc: f.Doc, Kind: KindFix, Backends: []string{f.Backend}, Stage: f.Stage, ID: f.ID,
		Requires: f.Requires, Required: true, synthetic: true,
		Run: func(p *ir.Program, c *Ctx) (Result, error) {
			if f.Fix == nil {
				return Result{}, fmt.Errorf("nil Fix")
			}
			c.enter(EntryProgramFix, f.Name, f.ID, nil)
			changed, err := f.Fix(p, c)
			if err != nil {
				return Result{}, err
			}
			if changed {
				c.fireEntry(nil)
			}
			c.leave()
			return Result{Changed: changed}, nil
		},
	}
}
