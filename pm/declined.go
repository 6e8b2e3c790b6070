package pm

import "fmt"

// Declined declares a catalog row fxport deliberately does not implement,
// with the reason: a patch whose only effect is a semantics change fxport
// does not make, a backend fxport has no target for, a property not
// upheld yet. It is not run; declaring it makes the row and its reason
// appear in listings instead of silently missing.
type Declined struct {
	ID, Name string
	Backend  string
	Stage    string
	// Reason says why the row is not implemented; its first paragraph is
	// the listing title.
	Reason string
}

// Info describes the declaration for listings.
func (d *Declined) Info() EntryInfo {
	return EntryInfo{Kind: EntryDeclined, ID: d.ID, Name: d.Name, Title: Title(d.Reason),
		Backend: d.Backend, Stage: d.Stage}
}

// ValidateDeclined checks a declaration without registering it.
func ValidateDeclined(d *Declined) error {
	if err := checkHeader(EntryDeclined, d.Name, d.ID, "-"); err != nil {
		return err
	}
	if d.Reason == "" {
		return fmt.Errorf("declined %q: empty Reason", d.Name)
	}
	if d.ID == "" {
		return fmt.Errorf("declined %q: a declined row needs its catalog ID", d.Name)
	}
	if err := checkBackendStage(d.Backend, d.Stage); err != nil {
		return fmt.Errorf("declined %q: %w", d.Name, err)
	}
	return nil
}
