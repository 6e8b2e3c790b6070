package passes

import (
	"testing"

	"github.com/fxport/fxport/ir"
)

// mustParse parses and type-checks an IR text program.
func mustParse(t *testing.T, src string) *ir.Program {
	t.Helper()
	p, err := ir.Parse([]byte(src), "test.fxir")
	if err != nil {
		t.Fatal(err)
	}
	if err := ir.VerifyWith(p, ir.VerifyOptions{Types: true}); err != nil {
		t.Fatal(err)
	}
	return p
}
