package pm

import (
	"fmt"
	"strings"
	"sync"

	"github.com/fxport/fxport/ir"
)

// Export is one export of one program for one backend. It owns the set of
// installed patches (chosen at creation), the record of every patch
// application, and the log of which patches and fixes fired on which
// nodes. Exports share nothing mutable: two exports with different patch
// sets can run concurrently on two programs.
type Export struct {
	target, backend string
	catalog         *Catalog
	patches         []*Patch

	mu    sync.Mutex
	apps  []*application
	fired []Firing
	// Reverts rebuild original nodes as new objects; these forward the
	// erased node and its results to them so older records stay usable.
	fwdNode  map[*ir.Node]*ir.Node
	fwdValue map[*ir.Value]*ir.Value
}

// ExportOption configures NewExport.
type ExportOption func(*exportConfig)

type exportConfig struct {
	catalog          *Catalog
	exclude, include []string
}

// WithCatalog makes the export use c instead of Default.
func WithCatalog(c *Catalog) ExportOption { return func(o *exportConfig) { o.catalog = c } }

// ExcludePatches leaves out the patches with these names or catalog IDs.
func ExcludePatches(namesOrIDs ...string) ExportOption {
	return func(o *exportConfig) { o.exclude = append(o.exclude, namesOrIDs...) }
}

// IncludePatches installs the patches with these names or catalog IDs even
// when they are opt-in; they must be patches of the export's backend.
func IncludePatches(namesOrIDs ...string) ExportOption {
	return func(o *exportConfig) { o.include = append(o.include, namesOrIDs...) }
}

// NewExport starts an export for target ("dynamo", "onnx", "executorch")
// and backend ("" picks the target's default: "all", "onnx",
// "executorch.xnnpack"). By default every registered patch of the backend
// that is not opt-in is installed.
func NewExport(target, backend string, opts ...ExportOption) (*Export, error) {
	cfg := exportConfig{catalog: Default}
	for _, o := range opts {
		o(&cfg)
	}
	b, err := resolveExport(target, backend)
	if err != nil {
		return nil, fmt.Errorf("pm: new export: %w", err)
	}
	e := &Export{target: target, backend: b, catalog: cfg.catalog}
	all := cfg.catalog.Patches.All()
	pick := func(key string) ([]*Patch, error) {
		var out []*Patch
		for _, p := range all {
			if p.Name == key || p.ID == key {
				out = append(out, p)
			}
		}
		if len(out) == 0 {
			return nil, fmt.Errorf("pm: new export: no patch named or tagged %q", key)
		}
		return out, nil
	}
	excluded, included := map[*Patch]bool{}, map[*Patch]bool{}
	for _, key := range cfg.exclude {
		ps, err := pick(key)
		if err != nil {
			return nil, err
		}
		for _, p := range ps {
			excluded[p] = true
		}
	}
	for _, key := range cfg.include {
		ps, err := pick(key)
		if err != nil {
			return nil, err
		}
		for _, p := range ps {
			if excluded[p] {
				return nil, fmt.Errorf("pm: new export: patch %q is both included and excluded", p.Name)
			}
			if !Applies(p.Backend, b) {
				return nil, fmt.Errorf("pm: new export: patch %q is for backend %s, not %s", p.Name, p.Backend, b)
			}
			included[p] = true
		}
	}
	for _, p := range all {
		if included[p] || Applies(p.Backend, b) && !p.OptIn && !excluded[p] {
			e.patches = append(e.patches, p)
		}
	}
	return e, nil
}

// Target is the export's target.
func (e *Export) Target() string { return e.target }

// Backend is the export's backend.
func (e *Export) Backend() string { return e.backend }

// Catalog is the catalog the export draws its workarounds from.
func (e *Export) Catalog() *Catalog { return e.catalog }

// Patches lists the installed patches in PatchOrder.
func (e *Export) Patches() []*Patch { return append([]*Patch(nil), e.patches...) }

// PatchNames lists the names of the installed patches.
func (e *Export) PatchNames() []string {
	out := make([]string, len(e.patches))
	for i, p := range e.patches {
		out[i] = p.Name
	}
	return out
}

// Installed reports whether the named patch is installed.
func (e *Export) Installed(name string) bool {
	for _, p := range e.patches {
		if p.Name == name {
			return true
		}
	}
	return false
}

// patchesFor lists the installed patches of one stage.
func (e *Export) patchesFor(stage string) []*Patch {
	var out []*Patch
	for _, p := range e.patches {
		if p.Stage == stage {
			out = append(out, p)
		}
	}
	return out
}

// Firing records that a pass, patch or fix acted on a node.
type Firing struct {
	// Pass is the pass instance that ran.
	Pass string
	// Entry is the patch, fix or pass that acted, and Kind its registry.
	Entry string
	Kind  EntryKind
	// ID is the entry's catalog ID, if any.
	ID string
	// Graph and Node locate the node ("%add (aten.add.Tensor)"); both are
	// empty for program-level actions.
	Graph, Node string
	Detail      string
}

func (f Firing) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s %q", f.Pass, f.Kind, f.Entry)
	if f.ID != "" {
		fmt.Fprintf(&b, " [%s]", f.ID)
	}
	if f.Node != "" {
		fmt.Fprintf(&b, " on %s in graph %s", f.Node, f.Graph)
	}
	if f.Detail != "" {
		b.WriteString(": " + f.Detail)
	}
	return b.String()
}

// Fired returns every firing of every run of the export, in order.
func (e *Export) Fired() []Firing {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]Firing(nil), e.fired...)
}

func (e *Export) addFired(fs []Firing) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.fired = append(e.fired, fs...)
}
