package pm

import (
	"fmt"
	"strings"

	"github.com/fxport/fxport/ir"
)

// BackendPrepare prepares a program for an ExecuTorch backend and names the
// partitioners lowering uses (ET-B*). The backend-prepare driver runs every
// prepare that applies to the export's backend, in catalog-ID order.
type BackendPrepare struct {
	ID, Name, Doc string
	// Backend is "executorch" or one of "executorch.*".
	Backend string
	// Prepare adjusts the program; nil when the entry only names partitioners.
	Prepare func(p *ir.Program, c *Ctx) error
	// Partitioners names the partitioner configurations lowering uses.
	Partitioners []string
}

// Info describes the entry for listings.
func (b *BackendPrepare) Info() EntryInfo {
	return EntryInfo{Kind: EntryPrepare, PassKind: KindTransform, ID: b.ID, Name: b.Name, Title: Title(b.Doc),
		Backend: b.Backend, Stage: StageBackendPrepare, Targets: b.Partitioners}
}

// ValidateBackendPrepare checks a declaration without registering it.
func ValidateBackendPrepare(b *BackendPrepare) error {
	if err := checkHeader(EntryPrepare, b.Name, b.ID, b.Doc); err != nil {
		return err
	}
	if !ValidBackend(b.Backend) || !strings.HasPrefix(b.Backend, BackendExecuTorch) {
		return fmt.Errorf("backend-prepare %q: backend %q is not an ExecuTorch backend", b.Name, b.Backend)
	}
	if b.Prepare == nil && len(b.Partitioners) == 0 {
		return fmt.Errorf("backend-prepare %q: neither Prepare nor Partitioners", b.Name)
	}
	return nil
}

// CaptureStep declares a workaround that must happen before tracing (a
// capture-only catalog row). It is not run: the capture shim applies it and
// reports it in export metadata; declaring it makes it appear in listings.
type CaptureStep struct {
	ID, Name string
	Backend  string
	Stage    string
	// Target is the Python path the step acts on.
	Target string
	// Reason says why it cannot happen after tracing.
	Reason string
}

// Info describes the step for listings.
func (s *CaptureStep) Info() EntryInfo {
	return EntryInfo{Kind: EntryCapture, ID: s.ID, Name: s.Name, Title: Title(s.Reason),
		Backend: s.Backend, Stage: s.Stage, Targets: []string{s.Target}}
}

// ValidateCaptureStep checks a declaration without registering it.
func ValidateCaptureStep(s *CaptureStep) error {
	if err := checkHeader(EntryCapture, s.Name, s.ID, s.Reason); err != nil {
		return err
	}
	if s.ID == "" {
		return fmt.Errorf("capture-step %q: capture steps need a catalog ID", s.Name)
	}
	if err := checkBackendStage(s.Backend, s.Stage); err != nil {
		return fmt.Errorf("capture-step %q: %w", s.Name, err)
	}
	for _, seg := range strings.Split(s.Target, ".") {
		if !isIdent(seg) {
			return fmt.Errorf("capture-step %q: malformed target path %q", s.Name, s.Target)
		}
	}
	return nil
}
