package plan

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/fxport/fxport/ir"
)

// Metadata keys of a recorded plan.
const (
	// MetaMem is the node metadata key: one "memid:offset:size" per result,
	// "-" for a result without planned storage, separated by ",".
	MetaMem = "mem"
	// MetaScanSlices is the scan node metadata key for the storage of its
	// combine_fn's xs slice inputs, in MetaMem's format (one per xs).
	MetaScanSlices = "mem.xs"
	// MetaInputs is the program metadata key for planned graph inputs:
	// "%name=memid:offset:size" entries separated by spaces.
	MetaInputs = "executorch.mem.inputs"
	// MetaArenas is non_const_buffer_sizes, comma separated ("0,4096").
	MetaArenas = "executorch.mem.arenas"
	// MetaLowerBound is the max-live lower bound in bytes.
	MetaLowerBound = "executorch.mem.lower_bound"
)

// Record writes pl into p's metadata, replacing any earlier plan, and
// reports whether any recorded value differs from what p held before.
func Record(p *ir.Program, pl *Plan) (changed bool) {
	type nodeMeta struct{ mem, slices string }
	before := map[*ir.Node]nodeMeta{}
	for _, g := range p.Graphs() {
		for _, n := range g.Nodes() {
			mem, _ := n.Meta.Get(MetaMem)
			slices, _ := n.Meta.Get(MetaScanSlices)
			if mem != "" || slices != "" {
				before[n] = nodeMeta{mem, slices}
			}
			n.Meta.Delete(MetaMem)
			n.Meta.Delete(MetaScanSlices)
		}
	}
	progBefore := [3]string{}
	for i, k := range []string{MetaInputs, MetaArenas, MetaLowerBound} {
		progBefore[i], _ = p.Meta.Get(k)
	}
	defer func() {
		for _, g := range p.Graphs() {
			for _, n := range g.Nodes() {
				mem, _ := n.Meta.Get(MetaMem)
				slices, _ := n.Meta.Get(MetaScanSlices)
				if before[n] != (nodeMeta{mem, slices}) {
					changed = true
				}
			}
		}
		for i, k := range []string{MetaInputs, MetaArenas, MetaLowerBound} {
			if v, _ := p.Meta.Get(k); v != progBefore[i] {
				changed = true
			}
		}
	}()
	for _, n := range allNodes(p) {
		var parts []string
		any := false
		for _, r := range n.Results {
			if a, ok := pl.Lookup(r); ok {
				parts = append(parts, a.String())
				any = true
			} else {
				parts = append(parts, "-")
			}
		}
		if any {
			n.Meta.Set(MetaMem, strings.Join(parts, ","))
		}
		if sl := ScanSlices(n); len(sl) > 0 {
			parts = parts[:0]
			any = false
			for _, v := range sl {
				if a, ok := pl.Lookup(v); ok {
					parts = append(parts, a.String())
					any = true
				} else {
					parts = append(parts, "-")
				}
			}
			if any {
				n.Meta.Set(MetaScanSlices, strings.Join(parts, ","))
			}
		}
	}
	var ins []string
	for _, v := range p.Main.Inputs {
		if a, ok := pl.Lookup(v); ok {
			ins = append(ins, v.String()+"="+a.String())
		}
	}
	if len(ins) > 0 {
		p.Meta.Set(MetaInputs, strings.Join(ins, " "))
	} else {
		p.Meta.Delete(MetaInputs)
	}
	ar := make([]string, len(pl.ArenaSize))
	for i, s := range pl.ArenaSize {
		ar[i] = strconv.FormatInt(s, 10)
	}
	p.Meta.Set(MetaArenas, strings.Join(ar, ","))
	p.Meta.Set(MetaLowerBound, strconv.FormatInt(pl.MaxLiveLowerBound, 10))
	return changed // set by the deferred comparison
}

// Recorded is a plan read back from the IR.
type Recorded struct {
	// Allocs maps each planned value (of the main graph and of its cond
	// regions) to its allocation.
	Allocs map[*ir.Value]Alloc
	// ArenaSize is non_const_buffer_sizes.
	ArenaSize []int64
	// LowerBound is the recorded max-live lower bound.
	LowerBound int64
}

// Read reads back a plan Record wrote; errors name the node or key.
func Read(p *ir.Program) (*Recorded, error) {
	r := &Recorded{Allocs: map[*ir.Value]Alloc{}}
	s, ok := p.Meta.Get(MetaArenas)
	if !ok {
		return nil, fmt.Errorf("program has no memory plan (meta %q missing); run plan-memory", MetaArenas)
	}
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.ParseInt(f, 10, 64)
		if err != nil || v < 0 {
			return nil, fmt.Errorf("meta %q: bad arena size %q", MetaArenas, f)
		}
		r.ArenaSize = append(r.ArenaSize, v)
	}
	if s, ok := p.Meta.Get(MetaLowerBound); ok {
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("meta %q: %v", MetaLowerBound, err)
		}
		r.LowerBound = v
	}
	if s, ok := p.Meta.Get(MetaInputs); ok {
		for _, f := range strings.Fields(s) {
			name, spec, ok := strings.Cut(f, "=")
			v := p.Main.Value(strings.TrimPrefix(name, "%"))
			if !ok || v == nil || !v.IsInput() {
				return nil, fmt.Errorf("meta %q: %q does not name a graph input", MetaInputs, f)
			}
			a, err := parseAlloc(spec, r.ArenaSize)
			if err != nil {
				return nil, fmt.Errorf("meta %q: %s: %w", MetaInputs, name, err)
			}
			r.Allocs[v] = a
		}
	}
	for _, n := range allNodes(p) {
		if s, ok := n.Meta.Get(MetaScanSlices); ok {
			if err := r.readAllocs(n, MetaScanSlices, s, ScanSlices(n)); err != nil {
				return nil, err
			}
		}
		s, ok := n.Meta.Get(MetaMem)
		if !ok {
			continue
		}
		if err := r.readAllocs(n, MetaMem, s, n.Results); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// readAllocs parses meta key's value s of node n: one allocation or "-"
// per value of vs.
func (r *Recorded) readAllocs(n *ir.Node, key, s string, vs []*ir.Value) error {
	parts := strings.Split(s, ",")
	if len(parts) != len(vs) {
		return n.Errorf("meta %s %q: %d entries for %d values", key, s, len(parts), len(vs))
	}
	for i, part := range parts {
		if part == "-" {
			continue
		}
		a, err := parseAlloc(part, r.ArenaSize)
		if err != nil {
			return n.Errorf("meta %s %q: %v", key, s, err)
		}
		r.Allocs[vs[i]] = a
	}
	return nil
}

func parseAlloc(s string, arenas []int64) (Alloc, error) {
	f := strings.Split(s, ":")
	if len(f) != 3 {
		return Alloc{}, fmt.Errorf("%q is not memid:offset:size", s)
	}
	var v [3]int64
	for i := range f {
		x, err := strconv.ParseInt(f[i], 10, 64)
		if err != nil || x < 0 {
			return Alloc{}, fmt.Errorf("%q is not memid:offset:size", s)
		}
		v[i] = x
	}
	a := Alloc{MemID: int(v[0]), Offset: v[1], Size: v[2]}
	if a.MemID < 1 || a.MemID >= len(arenas) {
		return Alloc{}, fmt.Errorf("%q: memory id %d has no arena", s, a.MemID)
	}
	if a.Offset+a.Size > arenas[a.MemID] {
		return Alloc{}, fmt.Errorf("%q: ends past arena %d of %d bytes", s, a.MemID, arenas[a.MemID])
	}
	return a, nil
}

// allNodes lists the nodes of every graph of p (the main graph, then the
// regions depth first): the planned ones carry mem metadata.
func allNodes(p *ir.Program) []*ir.Node {
	var out []*ir.Node
	p.ForEachGraph(func(g *ir.Graph) { out = append(out, g.Nodes()...) })
	return out
}
