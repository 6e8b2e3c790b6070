package ir

import "fmt"

// InsertInput inserts a graph input at position i (0 ≤ i ≤ len(Inputs));
// the inputs from i on move one place back. The name must be unused.
// Callers that insert into the main graph keep Program.Signature.Inputs in
// step (one spec per input, same order).
func (g *Graph) InsertInput(i int, name string, t Type) (*Value, error) {
	if i < 0 || i > len(g.Inputs) {
		return nil, fmt.Errorf("graph %s: input position %d out of range [0, %d]", g.Name, i, len(g.Inputs))
	}
	v, err := g.newValue(name, t, nil, i)
	if err != nil {
		return nil, err
	}
	g.Inputs = append(g.Inputs, nil)
	copy(g.Inputs[i+1:], g.Inputs[i:])
	g.Inputs[i] = v
	for j := i + 1; j < len(g.Inputs); j++ {
		g.Inputs[j].Index = j
	}
	return v, nil
}
