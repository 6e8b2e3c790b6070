package pm

import (
	"fmt"
	"sort"
	"sync"
)

// Catalog holds one registry per kind of workaround plus the passes. The
// package-level Register functions fill Default at init time; tests and
// tools may build their own with NewCatalog. A catalog is read-only once
// exports use it; nothing an export does mutates it.
type Catalog struct {
	Passes       *Registry[*Pass]
	Captures     *Registry[*CaptureStep]
	Prepares     *Registry[*BackendPrepare]
	Patches      *Registry[*Patch]
	ProgramFixes *Registry[*ProgramFix]
	NodeFixes    *Registry[*NodeFix]
	Translations *Registry[*Translation]
	IRFixes      *Registry[*IRFix]
	Invariants   *Registry[*Invariant]
	Declined     *Registry[*Declined]

	// Tables are the default pipelines Build reads, Order the constraints
	// they must meet and PatchOrder the order the patch drivers apply
	// patches in: Tables, PassOrder and PatchOrder unless a test sets its
	// own, before registering entries.
	Tables     []Table
	Order      []Constraint
	PatchOrder []PatchRow

	mu    sync.Mutex
	names map[string]EntryKind // every entry name, across registries
}

// NewCatalog returns a catalog holding only pm's built-in passes (the
// drivers of the registries and dce).
func NewCatalog() *Catalog {
	c := &Catalog{
		Passes:       newRegistry[*Pass](EntryPass),
		Captures:     newRegistry[*CaptureStep](EntryCapture),
		Prepares:     newRegistry[*BackendPrepare](EntryPrepare),
		Patches:      newRegistry[*Patch](EntryPatch),
		ProgramFixes: newRegistry[*ProgramFix](EntryProgramFix),
		NodeFixes:    newRegistry[*NodeFix](EntryNodeFix),
		Translations: newRegistry[*Translation](EntryTranslation),
		IRFixes:      newRegistry[*IRFix](EntryIRFix),
		Invariants:   newRegistry[*Invariant](EntryInvariant),
		Declined:     newRegistry[*Declined](EntryDeclined),
		names:        map[string]EntryKind{},
		Tables:       cloneTables(Tables),
		Order:        append([]Constraint(nil), PassOrder...),
		PatchOrder:   append([]PatchRow(nil), PatchOrder...),
	}
	c.Passes.less = func(a, b EntryInfo) bool { return a.Name < b.Name }
	c.Patches.less = func(a, b EntryInfo) bool {
		i, j := c.patchRank(a.Name), c.patchRank(b.Name)
		if i != j {
			return i < j
		}
		return byIDThenName(a, b)
	}
	for _, p := range builtinPasses() {
		if err := c.AddPass(p); err != nil {
			panic("pm: built-in pass: " + err.Error())
		}
	}
	return c
}

// patchRank is a patch's position in PatchOrder (after every listed one
// when absent, which CheckTables reports).
func (c *Catalog) patchRank(name string) int {
	for i, r := range c.PatchOrder {
		if r.Patch == name {
			return i
		}
	}
	return len(c.PatchOrder)
}

// Default is the catalog the package-level Register functions fill.
var Default = NewCatalog()

// claim reserves a name across all registries.
func (c *Catalog) claim(kind EntryKind, name string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if k, taken := c.names[name]; taken {
		return fmt.Errorf("%s %q: name already used by a %s", kind, name, k)
	}
	c.names[name] = kind
	return nil
}

func (c *Catalog) release(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.names, name)
}

// register claims the entry's name, then adds it to r.
func register[T Entry](c *Catalog, r *Registry[T], e T, check func([]T) error) error {
	name := e.Info().Name
	if err := c.claim(r.kind, name); err != nil {
		return err
	}
	if err := r.add(e, check); err != nil {
		c.release(name)
		return err
	}
	return nil
}

// AddPass registers a generic pass.
func (c *Catalog) AddPass(p *Pass) error {
	if err := ValidatePass(p); err != nil {
		return err
	}
	return register(c, c.Passes, p, nil)
}

// AddPatch registers a patch, resolving its targets.
func (c *Catalog) AddPatch(p *Patch) error {
	m, err := checkPatch(p)
	if err != nil {
		return err
	}
	p.match = m
	return register(c, c.Patches, p, nil)
}

// AddNodeFix registers a node fix. Its targets must not overlap those of a
// fix already registered for the same backend.
func (c *Catalog) AddNodeFix(f *NodeFix) error {
	m, err := checkNodeFix(f)
	if err != nil {
		return err
	}
	f.match = m
	return register(c, c.NodeFixes, f, func(existing []*NodeFix) error {
		for _, g := range existing {
			if g.Backend != f.Backend {
				continue
			}
			if op, ok := f.overlap(g); ok {
				return fmt.Errorf("node-fix %q: target %s overlaps node-fix %q of backend %s", f.Name, op, g.Name, f.Backend)
			}
		}
		return nil
	})
}

// AddProgramFix registers a program fix and the pass that runs it.
func (c *Catalog) AddProgramFix(f *ProgramFix) error {
	if err := ValidateProgramFix(f); err != nil {
		return err
	}
	if err := register(c, c.ProgramFixes, f, nil); err != nil {
		return err
	}
	// The pass shares the fix's name, which the fix already claimed.
	if err := c.Passes.add(f.pass(), nil); err != nil {
		return fmt.Errorf("program-fix %q: %w", f.Name, err)
	}
	return nil
}

// AddTranslation registers an ONNX translation.
func (c *Catalog) AddTranslation(t *Translation) error {
	m, err := checkTranslation(t)
	if err != nil {
		return err
	}
	t.match = m
	return register(c, c.Translations, t, func(existing []*Translation) error {
		for _, u := range existing {
			for _, op := range m.sortedOps() {
				if u.match.ops[op] {
					return fmt.Errorf("onnx-translation %q: target %s is already translated by %q", t.Name, op, u.Name)
				}
			}
		}
		return nil
	})
}

// AddIRFix registers an ONNX IR fix.
func (c *Catalog) AddIRFix(f *IRFix) error {
	if err := ValidateIRFix(f); err != nil {
		return err
	}
	return register(c, c.IRFixes, f, nil)
}

// AddBackendPrepare registers a backend prepare.
func (c *Catalog) AddBackendPrepare(b *BackendPrepare) error {
	if err := ValidateBackendPrepare(b); err != nil {
		return err
	}
	return register(c, c.Prepares, b, nil)
}

// AddInvariant registers an invariant.
func (c *Catalog) AddInvariant(v *Invariant) error {
	if err := ValidateInvariant(v); err != nil {
		return err
	}
	return register(c, c.Invariants, v, nil)
}

// AddDeclined registers a declined catalog row.
func (c *Catalog) AddDeclined(d *Declined) error {
	if err := ValidateDeclined(d); err != nil {
		return err
	}
	return register(c, c.Declined, d, nil)
}

// AddCaptureStep registers a capture step.
func (c *Catalog) AddCaptureStep(s *CaptureStep) error {
	if err := ValidateCaptureStep(s); err != nil {
		return err
	}
	return register(c, c.Captures, s, nil)
}

// List describes every entry of every registry: registries in EntryKind
// order; passes in the order of their first table row (then those no
// table names, by name), other entries in their registry's canonical
// order. Passes derived from program fixes are listed once, as program
// fixes.
func (c *Catalog) List() []EntryInfo {
	var out []EntryInfo
	rank := map[string]int{}
	for _, t := range c.Tables {
		for _, r := range t.Rows {
			if _, ok := rank[r.Pass]; !ok {
				rank[r.Pass] = len(rank)
			}
		}
	}
	passes := c.Passes.All()
	sort.SliceStable(passes, func(i, j int) bool {
		ri, iok := rank[passes[i].Name]
		rj, jok := rank[passes[j].Name]
		if iok != jok {
			return iok
		}
		return iok && ri < rj
	})
	for _, p := range passes {
		if !p.synthetic {
			out = append(out, p.Info())
		}
	}
	out = append(out, c.Captures.List()...)
	out = append(out, c.Prepares.List()...)
	out = append(out, c.Patches.List()...)
	out = append(out, c.ProgramFixes.List()...)
	out = append(out, c.NodeFixes.List()...)
	out = append(out, c.Translations.List()...)
	out = append(out, c.IRFixes.List()...)
	out = append(out, c.Invariants.List()...)
	out = append(out, c.Declined.List()...)
	return out
}

func must[T any](v T, err error) T {
	if err != nil {
		panic("pm: " + err.Error())
	}
	return v
}

// RegisterPass adds a generic pass to Default; it panics on an invalid
// declaration (registration happens at init, like Go's passOrder check).
func RegisterPass(p *Pass) *Pass { return must(p, Default.AddPass(p)) }

// RegisterPatch adds a patch to Default, panicking with a message naming
// the patch and the target when a target does not resolve.
func RegisterPatch(p *Patch) *Patch { return must(p, Default.AddPatch(p)) }

// RegisterNodeFix adds a node fix to Default; overlapping targets panic.
func RegisterNodeFix(f *NodeFix) *NodeFix { return must(f, Default.AddNodeFix(f)) }

// RegisterProgramFix adds a program fix to Default.
func RegisterProgramFix(f *ProgramFix) *ProgramFix { return must(f, Default.AddProgramFix(f)) }

// RegisterTranslation adds an ONNX translation to Default.
func RegisterTranslation(t *Translation) *Translation { return must(t, Default.AddTranslation(t)) }

// RegisterIRFix adds an ONNX IR fix to Default.
func RegisterIRFix(f *IRFix) *IRFix { return must(f, Default.AddIRFix(f)) }

// RegisterBackendPrepare adds a backend prepare to Default.
func RegisterBackendPrepare(b *BackendPrepare) *BackendPrepare {
	return must(b, Default.AddBackendPrepare(b))
}

// RegisterCaptureStep adds a capture step to Default.
func RegisterCaptureStep(s *CaptureStep) *CaptureStep { return must(s, Default.AddCaptureStep(s)) }

// RegisterInvariant adds an invariant to Default.
func RegisterInvariant(v *Invariant) *Invariant { return must(v, Default.AddInvariant(v)) }

// RegisterDeclined adds a declined catalog row to Default.
func RegisterDeclined(d *Declined) *Declined { return must(d, Default.AddDeclined(d)) }

// Entries returns every entry registered into c, registries in EntryKind
// order, each in canonical order; pm's built-in passes and the passes
// derived from program fixes are left out (Add re-creates the latter).
// With Add it copies a catalog, e.g. to register its entries in another
// order.
func (c *Catalog) Entries() []Entry {
	var out []Entry
	for _, p := range c.Passes.All() {
		if !p.synthetic && !p.driver && !builtinName(p.Name) {
			out = append(out, p)
		}
	}
	out = appendEntries(out, c.Captures)
	out = appendEntries(out, c.Prepares)
	out = appendEntries(out, c.Patches)
	out = appendEntries(out, c.ProgramFixes)
	out = appendEntries(out, c.NodeFixes)
	out = appendEntries(out, c.Translations)
	out = appendEntries(out, c.IRFixes)
	out = appendEntries(out, c.Invariants)
	out = appendEntries(out, c.Declined)
	return out
}

func appendEntries[T Entry](out []Entry, r *Registry[T]) []Entry {
	for _, e := range r.All() {
		out = append(out, e)
	}
	return out
}

// builtinName reports whether name is one of the passes every catalog starts with.
func builtinName(name string) bool { return name == PassDCE }

// Add registers e in the registry of its kind.
func (c *Catalog) Add(e Entry) error {
	switch e := e.(type) {
	case *Pass:
		return c.AddPass(e)
	case *CaptureStep:
		return c.AddCaptureStep(e)
	case *BackendPrepare:
		return c.AddBackendPrepare(e)
	case *Patch:
		return c.AddPatch(e)
	case *ProgramFix:
		return c.AddProgramFix(e)
	case *NodeFix:
		return c.AddNodeFix(e)
	case *Translation:
		return c.AddTranslation(e)
	case *IRFix:
		return c.AddIRFix(e)
	case *Invariant:
		return c.AddInvariant(e)
	case *Declined:
		return c.AddDeclined(e)
	}
	return fmt.Errorf("pm: add: unknown entry type %T", e)
}
