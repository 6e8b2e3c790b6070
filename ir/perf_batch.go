package ir

import (
	"fmt"
	"sort"
)

// Batch forms of input and weight edits, for passes that add or drop many
// constants at once (one graph input and one weight per constant): each
// costs one sweep instead of one sweep per element, which made those passes
// quadratic in the number of constants (docs/performance.md).

// RemoveInputs removes several inputs of g at once, as RemoveInput does one
// by one: none may have uses. The remaining inputs keep their order.
func (g *Graph) RemoveInputs(vs []*Value) error {
	drop := make(map[*Value]bool, len(vs))
	for _, v := range vs {
		if v.Graph != g || v.Def != nil || v.Index < 0 || v.Index >= len(g.Inputs) || g.Inputs[v.Index] != v {
			return fmt.Errorf("graph %s: %s is not one of its inputs", g.Name, v)
		}
		if len(v.uses) > 0 {
			return fmt.Errorf("graph %s: input %s still has %d uses", g.Name, v, len(v.uses))
		}
		drop[v] = true
	}
	kept := g.Inputs[:0]
	for _, v := range g.Inputs {
		if drop[v] {
			delete(g.names, v.Name)
			continue
		}
		v.Index = len(kept)
		kept = append(kept, v)
	}
	clear(g.Inputs[len(kept):])
	g.Inputs = kept
	return nil
}

// AddWeights adds several weights at once, as AddWeight does one by one
// (a weight replaces an earlier one of its name; among ws, the last of a
// name wins).
func (p *Program) AddWeights(ws []*Weight) {
	if len(ws) == 0 {
		return
	}
	add := make([]*Weight, len(ws))
	copy(add, ws)
	sort.SliceStable(add, func(i, j int) bool { return add[i].Name < add[j].Name })
	out := make([]*Weight, 0, len(p.Weights)+len(add))
	i := 0
	for k, w := range add {
		if k+1 < len(add) && add[k+1].Name == w.Name {
			continue // a later one of this name wins
		}
		for i < len(p.Weights) && p.Weights[i].Name < w.Name {
			out = append(out, p.Weights[i])
			i++
		}
		if i < len(p.Weights) && p.Weights[i].Name == w.Name {
			i++ // replaced
		}
		out = append(out, w)
	}
	p.Weights = append(out, p.Weights[i:]...)
}

// RemoveWeights deletes the named weights that are present, as RemoveWeight
// does one by one.
func (p *Program) RemoveWeights(names []string) {
	if len(names) == 0 {
		return
	}
	drop := make(map[string]bool, len(names))
	for _, n := range names {
		drop[n] = true
	}
	kept := p.Weights[:0]
	for _, w := range p.Weights {
		if !drop[w.Name] {
			kept = append(kept, w)
		}
	}
	clear(p.Weights[len(kept):])
	p.Weights = kept
}
