package pm

import (
	"fmt"
	"regexp"
	"strings"
)

// Invariant declares a catalog row that fxport does not implement as a
// rewrite because the property the Python patch restored holds by
// construction in fxport's own frontend, lowering, optimizer or emitter
// (the catalog's "invariant" rows). It is not run; declaring it names the
// property, where it is implemented and the Go test that fails when it
// breaks, so listings show every row.
type Invariant struct {
	ID, Name, Doc string
	// Backend and Stage place the property where fxport upholds it.
	Backend string
	Stage   string
	// Test names the Go test (or tests, separated by ", ") that pins the
	// property, as "<package dir>.<TestFunc>[/<subtest>]" with the package
	// directory relative to the module root, e.g.
	// "targets/onnx.TestInvariantsCatchViolations".
	Test string
	// Where is the package or file that implements the property.
	Where string
}

// Info describes the invariant for listings.
func (v *Invariant) Info() EntryInfo {
	return EntryInfo{Kind: EntryInvariant, ID: v.ID, Name: v.Name, Title: Title(v.Doc),
		Backend: v.Backend, Stage: v.Stage, Test: v.Test, Where: v.Where}
}

// Tests splits Test into its test references.
func (v *Invariant) Tests() []string { return splitTestRefs(v.Test) }

// testRefRE is the spelling of one test reference.
var testRefRE = regexp.MustCompile(`^[a-z0-9_]+(/[a-z0-9_]+)*\.Test[A-Za-z0-9_]*(/\S+)?$`)

// splitTestRefs splits a ", "-separated list of test references.
func splitTestRefs(s string) []string {
	var out []string
	for _, r := range strings.Split(s, ",") {
		if r = strings.TrimSpace(r); r != "" {
			out = append(out, r)
		}
	}
	return out
}

// ValidTestRef reports whether s is one test reference such as
// "targets/onnx.TestIONamingDisambiguation" or
// "tests.TestGolden/testdata/lowering/et_lower_plan_memory".
func ValidTestRef(s string) bool { return testRefRE.MatchString(s) }

// ValidateInvariant checks a declaration without registering it.
func ValidateInvariant(v *Invariant) error {
	if err := checkHeader(EntryInvariant, v.Name, v.ID, v.Doc); err != nil {
		return err
	}
	if v.ID == "" {
		return fmt.Errorf("invariant %q: invariants need a catalog ID", v.Name)
	}
	if err := checkBackendStage(v.Backend, v.Stage); err != nil {
		return fmt.Errorf("invariant %q: %w", v.Name, err)
	}
	refs := v.Tests()
	if len(refs) == 0 {
		return fmt.Errorf("invariant %q: no Test names the Go test that pins it", v.Name)
	}
	for _, r := range refs {
		if !ValidTestRef(r) {
			return fmt.Errorf("invariant %q: malformed test reference %q (want e.g. %q)", v.Name, r, "targets/onnx.TestIONamingDisambiguation")
		}
	}
	if v.Where == "" {
		return fmt.Errorf("invariant %q: empty Where (the package or file implementing it)", v.Name)
	}
	return nil
}
