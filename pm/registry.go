package pm

import (
	"fmt"
	"sort"
	"sync"
)

// Entry is anything a Registry holds: passes, patches, fixes, translations,
// IR fixes, backend prepares, capture steps, invariants and declined rows.
type Entry interface {
	Info() EntryInfo
}

// EntryInfo is the listing row of a registry entry (for docs and the CLI).
type EntryInfo struct {
	Kind EntryKind
	// PassKind is set for passes.
	PassKind Kind
	ID       string
	Name     string
	// Title is the first paragraph of the entry's documentation.
	Title   string
	Backend string
	Stage   string
	Targets []string
	// Test and Where are set for invariants: the Go test that pins the
	// property and the package or file implementing it.
	Test  string
	Where string
}

// Registry is an ordered, name-indexed set of entries of one kind. It is
// filled at init time and read-only afterwards; lookups and listings are
// safe for concurrent use. Entries are kept in a canonical order that does
// not depend on registration order (hence not on Go's init order, which
// follows file names): by catalog ID, then name, unless the catalog orders
// the kind itself (patches follow PatchOrder).
type Registry[T Entry] struct {
	kind    EntryKind
	mu      sync.RWMutex
	entries []T
	byName  map[string]int
	less    func(a, b EntryInfo) bool
}

func newRegistry[T Entry](kind EntryKind) *Registry[T] {
	return &Registry[T]{kind: kind, byName: map[string]int{}, less: byIDThenName}
}

// byIDThenName is the canonical entry order.
func byIDThenName(a, b EntryInfo) bool {
	if a.ID != b.ID {
		return a.ID < b.ID
	}
	return a.Name < b.Name
}

// Kind is the kind of the registry's entries.
func (r *Registry[T]) Kind() EntryKind { return r.kind }

// add appends e after check accepted it; check runs under the lock and sees
// the entries registered so far.
func (r *Registry[T]) add(e T, check func(existing []T) error) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	name := e.Info().Name
	if _, dup := r.byName[name]; dup {
		return fmt.Errorf("%s %q registered twice", r.kind, name)
	}
	if check != nil {
		if err := check(r.entries); err != nil {
			return err
		}
	}
	// Insert at the entry's place in the canonical order.
	info := e.Info()
	i := sort.Search(len(r.entries), func(i int) bool { return r.less(info, r.entries[i].Info()) })
	var zero T
	r.entries = append(r.entries, zero)
	copy(r.entries[i+1:], r.entries[i:])
	r.entries[i] = e
	for j := i; j < len(r.entries); j++ {
		r.byName[r.entries[j].Info().Name] = j
	}
	return nil
}

// All returns the entries in the registry's canonical order.
func (r *Registry[T]) All() []T {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return append([]T(nil), r.entries...)
}

// Len is the number of entries.
func (r *Registry[T]) Len() int {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return len(r.entries)
}

// Lookup finds an entry by name.
func (r *Registry[T]) Lookup(name string) (T, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	i, ok := r.byName[name]
	if !ok {
		var zero T
		return zero, false
	}
	return r.entries[i], true
}

// ByID returns the entries tagged with a catalog ID, in canonical order.
func (r *Registry[T]) ByID(id string) []T {
	var out []T
	for _, e := range r.All() {
		if e.Info().ID == id {
			out = append(out, e)
		}
	}
	return out
}

// List describes every entry, in canonical order.
func (r *Registry[T]) List() []EntryInfo {
	all := r.All()
	out := make([]EntryInfo, 0, len(all))
	for _, e := range all {
		out = append(out, e.Info())
	}
	return out
}
