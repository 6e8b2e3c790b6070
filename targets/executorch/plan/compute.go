package plan

import (
	"fmt"

	"github.com/fxport/fxport/ir"
)

// Compute plans the memory of p's main graph and of its cond and while_loop
// regions.
// Positions (Entry.Start, End, Live) number the main graph's nodes in
// order, each cond preceded by its true region's nodes, the true region's
// move point, the false region's nodes and its move point.
func Compute(p *ir.Program, opt Options) (*Plan, error) {
	if opt.Alignment == 0 {
		opt.Alignment = 16
	}
	if opt.Alignment < 0 || opt.Alignment&(opt.Alignment-1) != 0 {
		return nil, fmt.Errorf("memory plan: alignment %d is not a power of two", opt.Alignment)
	}
	classes, l, err := buildClasses(p, opt)
	if err != nil {
		return nil, fmt.Errorf("memory plan of graph %s: %w", p.Main.Name, err)
	}
	// exir's own placement comes first, so it wins every tie: where it is
	// as small as the other orders, the offsets are exir's.
	best := placeExir(classes, opt.Alignment)
	for _, fit := range []bool{false, true} {
		for _, o := range orders {
			name := o.name
			if fit {
				name += ", best fit"
			}
			if pl := place(classes, opt.Alignment, name, o.less, fit); pl.arena < best.arena {
				best = pl
			}
		}
	}
	if lb := maxLive(classes, opt.Alignment); best.arena > lb {
		if pl, ok := search(classes, opt.Alignment, best.arena); ok {
			best = pl
		}
	}
	out := &Plan{ArenaSize: []int64{0, best.arena + arenaPadding(p, classes)}, MaxLiveLowerBound: maxLive(classes, opt.Alignment), Algorithm: best.name}
	for _, c := range classes {
		if !c.planned {
			continue
		}
		out.Classes++
		for _, v := range c.members {
			out.Values = append(out.Values, Entry{
				Value: v, Class: c.id, Start: c.start, End: c.end, Live: append([]Span(nil), c.segs...),
				Alloc: Alloc{MemID: ArenaID, Offset: best.offset[c.id], Size: c.size},
			})
		}
	}
	sortEntries(out.Values, l.pos)
	out.buildIndex()
	return out, nil
}
