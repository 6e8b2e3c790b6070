package plan

import (
	"fmt"
	"strings"

	"github.com/fxport/fxport/ir"
)

// ComputeArenas plans p like Compute, but spreads the storage classes over
// several arenas: arenaOf gives each planned value its memory id (1, 2, …;
// 0 leaves the value unplanned), every member of a storage class must get
// the same one, and each arena is placed on its own — only the classes in
// it compete for its bytes — so no arena keeps the holes another arena's
// values would leave in a joint plan. (The CUDA backend puts its device
// tensors in an arena of their own.) The plan's ArenaSize has one entry per
// id up to the largest used (index 0 the unused placeholder) and
// MaxLiveLowerBound is the sum of the arenas' bounds; lowerBounds[id] is
// arena id's own max-live lower bound.
func ComputeArenas(p *ir.Program, opt Options, arenaOf func(*ir.Value) int) (_ *Plan, lowerBounds []int64, _ error) {
	if opt.Alignment == 0 {
		opt.Alignment = 16
	}
	if opt.Alignment < 0 || opt.Alignment&(opt.Alignment-1) != 0 {
		return nil, nil, fmt.Errorf("memory plan: alignment %d is not a power of two", opt.Alignment)
	}
	classes, l, err := buildClasses(p, opt)
	if err != nil {
		return nil, nil, fmt.Errorf("memory plan of graph %s: %w", p.Main.Name, err)
	}
	arena := make([]int, len(classes))
	top := 1
	for _, c := range classes {
		if !c.planned {
			continue
		}
		id := -1
		for _, v := range c.members {
			a := arenaOf(v)
			if a < 0 {
				return nil, nil, fmt.Errorf("memory plan: value %s: arena %d", v, a)
			}
			if id >= 0 && a != id {
				return nil, nil, fmt.Errorf("memory plan: %s and %s share storage but are given arenas %d and %d", c.members[0], v, id, a)
			}
			id = a
		}
		arena[c.id] = id
		if id == 0 {
			c.planned = false
		}
		top = max(top, id)
	}
	planned := make([]bool, len(classes))
	for i, c := range classes {
		planned[i] = c.planned
	}
	out := &Plan{ArenaSize: make([]int64, top+1)}
	lowerBounds = make([]int64, top+1)
	offset := make([]int64, len(classes))
	var names []string
	for id := 1; id <= top; id++ {
		for i, c := range classes {
			c.planned = planned[i] && arena[i] == id
		}
		best := bestPlacement(classes, opt.Alignment)
		for i, c := range classes {
			if c.planned {
				offset[i] = best.offset[i]
			}
		}
		out.ArenaSize[id] = best.arena + arenaPadding(p, classes) // as Compute pads its arena
		lowerBounds[id] = maxLive(classes, opt.Alignment)
		out.MaxLiveLowerBound += lowerBounds[id]
		names = append(names, fmt.Sprintf("arena %d: %s", id, best.name))
	}
	for i, c := range classes {
		c.planned = planned[i]
	}
	out.Algorithm = strings.Join(names, "; ")
	for _, c := range classes {
		if !c.planned {
			continue
		}
		out.Classes++
		for _, v := range c.members {
			out.Values = append(out.Values, Entry{
				Value: v, Class: c.id, Start: c.start, End: c.end, Live: append([]Span(nil), c.segs...),
				Alloc: Alloc{MemID: arena[c.id], Offset: offset[c.id], Size: c.size},
			})
		}
	}
	sortEntries(out.Values, l.pos)
	out.buildIndex()
	return out, lowerBounds, nil
}

// bestPlacement places the planned classes (for Compute and the arenas):
// exir's order first (it wins ties), then every fixed order first fit and
// best fit, then the bounded search, stopping once a placement reaches the
// max-live lower bound.
func bestPlacement(classes []*class, align int64) placement {
	best := placeExir(classes, align)
	lb := maxLive(classes, align)
	for _, fit := range []bool{false, true} {
		for _, o := range orders {
			if best.arena <= lb {
				// Nothing places the classes in fewer bytes, and ties go to
				// the earlier placement: the rest could only lose.
				return best
			}
			name := o.name
			if fit {
				name += ", best fit"
			}
			if pl := place(classes, align, name, o.less, fit, best.arena); pl.arena < best.arena {
				best = pl
			}
		}
	}
	if best.arena > lb {
		if pl, ok, _ := search(classes, align, best.arena); ok {
			best = pl
		}
	}
	return best
}
