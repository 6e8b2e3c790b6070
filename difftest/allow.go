package difftest

import (
	"fmt"
	"sort"
	"sync"

	"github.com/fxport/fxport/interp"
)

// Allowance declares that a pass changes the meaning of programs on
// purpose (one of the catalog's documented approximations). The harness
// calls Check instead of comparing for equality, then compares later passes
// against the program after the pass.
type Allowance struct {
	// Pass is the pass's name.
	Pass string
	// Backend, when set, limits the allowance to exports of that backend
	// (a shared driver pass such as backend-prepare changes values for one
	// backend only).
	Backend string
	// Reason says what the pass changes and why that is acceptable.
	Reason string
	// Check verifies the declared difference between the user outputs
	// before and after the pass; nil accepts any difference.
	Check func(before, after []interp.Value) error
}

var (
	allowMu    sync.RWMutex
	allowances = map[string]Allowance{}
)

// Declare registers an allowance for a pass (at init, next to the pass).
// It panics on a second declaration for the same pass or a missing reason.
func Declare(a Allowance) {
	if a.Pass == "" || a.Reason == "" {
		panic("difftest: an allowance needs a pass name and a reason")
	}
	allowMu.Lock()
	defer allowMu.Unlock()
	if _, dup := allowances[a.Pass]; dup {
		panic(fmt.Sprintf("difftest: allowance for pass %q declared twice", a.Pass))
	}
	allowances[a.Pass] = a
}

// Declared returns the allowance of a pass, if any.
func Declared(pass string) (Allowance, bool) {
	allowMu.RLock()
	defer allowMu.RUnlock()
	a, ok := allowances[pass]
	return a, ok
}

// Allowances lists the declared allowances sorted by pass name.
func Allowances() []Allowance {
	allowMu.RLock()
	defer allowMu.RUnlock()
	out := make([]Allowance, 0, len(allowances))
	for _, a := range allowances {
		out = append(out, a)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Pass < out[j].Pass })
	return out
}
