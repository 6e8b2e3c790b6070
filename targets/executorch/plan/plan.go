package plan

import (
	"fmt"
	"sort"
	"strings"

	"github.com/fxport/fxport/ir"
)

// Options are the memory-planning flags of exir's to_executorch config
// (ET-L03); DefaultOptions sets them all.
type Options struct {
	// AllocGraphInput plans user inputs; without it they are bound at run time.
	AllocGraphInput bool
	// AllocGraphOutput plans user outputs; without it the runner binds them
	// (e.g. with set_output).
	AllocGraphOutput bool
	// AllocMutableBuffers plans buffers the program mutates.
	AllocMutableBuffers bool
	// Alignment of every offset, in bytes (16 unless set).
	Alignment int64

	// wholeLoops plans every value inside a loop region for the loop's
	// whole span instead of one iteration (the former rule, kept so that
	// tests can measure what per-iteration lifetimes save).
	wholeLoops bool
}

// DefaultOptions returns exir's defaults: everything planned, 16-byte alignment.
func DefaultOptions() Options {
	return Options{AllocGraphInput: true, AllocGraphOutput: true, AllocMutableBuffers: true, Alignment: 16}
}

// ArenaID is the memory id of the planned arena (1-based; 0 is unused).
const ArenaID = 1

// Alloc is where one value lives.
type Alloc struct {
	MemID  int
	Offset int64
	// Size is the value's size in bytes at its upper bound (not rounded).
	Size int64
}

// String is the recorded form "memid:offset:size".
func (a Alloc) String() string { return fmt.Sprintf("%d:%d:%d", a.MemID, a.Offset, a.Size) }

// Entry is one planned value.
type Entry struct {
	Value *ir.Value
	Alloc
	// Class numbers the storage class (values sharing storage share it).
	Class int
	// Start and End are the class's lifetime in node positions (inputs
	// are defined at -1; values returned by the graph live to the end).
	// With cond regions, positions number the main graph's nodes and the
	// regions' nodes in emission order (see Compute) and the class may be
	// dead inside [Start, End]: Live lists the positions where it is live.
	Start, End int
	Live       []Span
}

// Plan is the memory plan of a program's main graph and its cond regions.
type Plan struct {
	// Values lists the planned values: graph inputs first, then node
	// results in program order.
	Values []Entry
	// ArenaSize is non_const_buffer_sizes: index 0 is the unused
	// placeholder, index 1 the planned arena's size in bytes.
	ArenaSize []int64
	// MaxLiveLowerBound is the largest total (aligned) size of the storage
	// classes live at one program point: no placement can use less.
	MaxLiveLowerBound int64
	// Algorithm names the placement order that won.
	Algorithm string
	// Classes is the number of storage classes placed.
	Classes int

	index map[*ir.Value]int
}

// Lookup returns v's allocation.
func (pl *Plan) Lookup(v *ir.Value) (Alloc, bool) {
	i, ok := pl.index[v]
	if !ok {
		return Alloc{}, false
	}
	return pl.Values[i].Alloc, true
}

// Planned is the arena size in bytes.
func (pl *Plan) Planned() int64 { return pl.ArenaSize[ArenaID] }

// Ratio is planned bytes over the lower bound (1 when both are 0).
func (pl *Plan) Ratio() float64 {
	if pl.MaxLiveLowerBound == 0 {
		if pl.Planned() == 0 {
			return 1
		}
		return float64(pl.Planned())
	}
	return float64(pl.Planned()) / float64(pl.MaxLiveLowerBound)
}

// Report is a one-paragraph human summary.
func (pl *Plan) Report() string {
	var b strings.Builder
	fmt.Fprintf(&b, "memory plan: %d values in %d storage classes; arena 1: %d bytes planned, max-live lower bound %d bytes (ratio %.3f, %s)",
		len(pl.Values), pl.Classes, pl.Planned(), pl.MaxLiveLowerBound, pl.Ratio(), pl.Algorithm)
	return b.String()
}

// Table lists every planned value, one per line: name, alloc, lifetime.
func (pl *Plan) Table() string {
	var b strings.Builder
	for _, e := range pl.Values {
		fmt.Fprintf(&b, "%s\t%s\tclass %d\t[%d, %d]", e.Value, e.Alloc, e.Class, e.Start, e.End)
		if len(e.Live) > 1 {
			fmt.Fprintf(&b, " live %v", e.Live)
		}
		b.WriteString("\n")
	}
	return b.String()
}

func (pl *Plan) buildIndex() {
	pl.index = make(map[*ir.Value]int, len(pl.Values))
	for i, e := range pl.Values {
		pl.index[e.Value] = i
	}
}

// sortEntries orders entries: inputs by index, then results by node order.
func sortEntries(es []Entry, pos map[*ir.Node]int) {
	key := func(v *ir.Value) (int, int) {
		if v.Def == nil {
			return -1, v.Index
		}
		return pos[v.Def], v.Index
	}
	sort.SliceStable(es, func(i, j int) bool {
		a1, a2 := key(es[i].Value)
		b1, b2 := key(es[j].Value)
		if a1 != b1 {
			return a1 < b1
		}
		return a2 < b2
	})
}
