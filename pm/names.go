package pm

import (
	"fmt"
	"regexp"
)

var (
	// kebabRE is the spelling of pass, patch, fix and option names:
	// lower-case words joined by single hyphens ("onnx-node-fixes").
	kebabRE = regexp.MustCompile(`^[a-z][a-z0-9]*(-[a-z0-9]+)*$`)
	// idRE is the spelling of catalog IDs: "ONNX-FX03", "ET-PF01", "DYN-S10".
	idRE = regexp.MustCompile(`^[A-Z]+-[A-Z]+[0-9]+$`)
)

// ValidName reports whether s is a valid pass or entry name: kebab-case,
// starting with a letter.
func ValidName(s string) bool { return kebabRE.MatchString(s) }

// ValidID reports whether s is a valid catalog ID such as "ONNX-FX03".
func ValidID(s string) bool { return idRE.MatchString(s) }

// checkHeader validates the fields every registry entry has.
func checkHeader(kind EntryKind, name, id, doc string) error {
	if !ValidName(name) {
		return fmt.Errorf("%s %q: name must be kebab-case (like %q)", kind, name, "fix-detach-inplace")
	}
	if id != "" && !ValidID(id) {
		return fmt.Errorf("%s %q: malformed catalog ID %q (want e.g. %q)", kind, name, id, "ONNX-FX03")
	}
	if doc == "" {
		return fmt.Errorf("%s %q: empty Doc", kind, name)
	}
	return nil
}
