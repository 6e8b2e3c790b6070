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
	best := bestPlacement(classes, opt.Alignment)
	out := &Plan{ArenaSize: []int64{0, best.arena + arenaPadding(p, classes)}, MaxLiveLowerBound: maxLive(classes, opt.Alignment), Algorithm: best.name}
	for _, c := range classes {
		if !c.planned {
			continue
		}
		out.Classes++
		// One copy of the segments per class, shared (read-only) by its
		// members' entries: a class of one value per level of nested conds
		// has a segment per level too.
		live := append([]Span(nil), c.segs...)
		for _, v := range c.members {
			out.Values = append(out.Values, Entry{
				Value: v, Class: c.id, Start: c.start, End: c.end, Live: live,
				Alloc: Alloc{MemID: ArenaID, Offset: best.offset[c.id], Size: c.size},
			})
		}
	}
	sortEntries(out.Values, l.pos)
	out.buildIndex()
	return out, nil
}
