package pm

import (
	"errors"
	"fmt"
	"strings"

	"github.com/fxport/fxport/ir"
)

// PassError is a failure inside a pass: a returned error, a panic, or a
// verifier failure after the pass. Its message names the pass and, when
// known, the node and the patch or fix at work:
//
//	pass "onnx-node-fixes": node %add (aten.add.Tensor) in graph forward: node-fix "fix-x": …
type PassError struct {
	// Pass is the pass instance that failed.
	Pass string
	// Entry is the patch, fix or prepare the pass was running, and
	// EntryKind its registry ("" and 0 when none).
	Entry     string
	EntryKind EntryKind
	// Graph and Node locate the failure when known (Node is "%add (aten.add.Tensor)").
	Graph, Node string
	Err         error
	// Stack is the goroutine stack of a panic.
	Stack []byte
}

func (e *PassError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "pass %q: ", e.Pass)
	msg := e.Err.Error()
	if e.Node != "" {
		fmt.Fprintf(&b, "node %s in graph %s: ", e.Node, e.Graph)
		// Do not repeat the location the underlying error already gives.
		msg = strings.Replace(msg, "node "+e.Node+" in graph "+e.Graph+": ", "", 1)
		msg = strings.Replace(msg, "graph "+e.Graph+": "+e.Node+": ", "", 1)
	}
	if e.Entry != "" {
		fmt.Fprintf(&b, "%s %q: ", e.EntryKind, e.Entry)
	}
	b.WriteString(msg)
	return b.String()
}

func (e *PassError) Unwrap() error { return e.Err }

// newPassError locates err using the error itself (an *ir.NodeError or
// *ir.VerifyError in its chain) or else the node the context was at.
func newPassError(inst string, c *Ctx, err error, stack []byte) *PassError {
	pe := &PassError{Pass: inst, Err: err, Stack: stack}
	if c.entry != nil && c.entry.name != inst {
		pe.Entry, pe.EntryKind = c.entry.name, c.entry.kind
	}
	var ne *ir.NodeError
	var ve *ir.VerifyError
	switch {
	case errors.As(err, &ne):
		pe.Graph, pe.Node = ne.Graph, ne.Node
	case errors.As(err, &ve) && ve.Node != "":
		pe.Graph, pe.Node = ve.Graph, ve.Node
	case c.node != nil:
		pe.Node = c.node.Short()
		if c.node.Graph != nil {
			pe.Graph = c.node.Graph.Name
		}
	}
	return pe
}

// panicError is a recovered panic.
type panicError struct{ value any }

func (p panicError) Error() string { return fmt.Sprintf("panic: %v", p.value) }

// Unwrap exposes a panicked error value.
func (p panicError) Unwrap() error {
	if err, ok := p.value.(error); ok {
		return err
	}
	return nil
}
