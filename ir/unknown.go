package ir

import "fmt"

// UnknownValues lists the values of p (inputs and results, regions
// included, in program order) whose type is still unknown.
func UnknownValues(p *Program) []*Value {
	var out []*Value
	var walk func(g *Graph)
	walk = func(g *Graph) {
		for _, in := range g.Inputs {
			if IsUnknown(in.Type) {
				out = append(out, in)
			}
		}
		for _, n := range g.Nodes() {
			for _, r := range n.Results {
				if IsUnknown(r.Type) {
					out = append(out, r)
				}
			}
			for _, region := range n.Regions() {
				walk(region)
			}
		}
	}
	if p != nil && p.Main != nil {
		walk(p.Main)
	}
	return out
}

// CheckKnownTypes fails when p still holds a value of unknown type, naming
// the first one and where it is: a program read without types must be given
// its input types before it can be lowered.
func CheckKnownTypes(p *Program) error {
	vs := UnknownValues(p)
	if len(vs) == 0 {
		return nil
	}
	v := vs[0]
	count := fmt.Sprintf("%d values have", len(vs))
	if len(vs) == 1 {
		count = "1 value has"
	}
	if v.Def == nil {
		return fmt.Errorf("%s an unknown type, first %s (input of graph %s): give the program's input types (fxport parse --input-types, --inputs, --types-from) so shape inference can type them", count, v, graphName(v.Graph))
	}
	if v.Def.Op == OpOpaqueCall && len(v.Def.Args) > 0 {
		why := "an op fxport does not know"
		if note, ok := v.Def.Meta.Get("fxtext.note"); ok {
			why = "kept opaque: " + note
		}
		return fmt.Errorf("%s an unknown type, first %s: node %s in graph %s is an opaque call of %s (%s); lowering cannot handle it", count, v, v.Def.Short(), graphName(v.Graph), v.Def.Args[0], why)
	}
	return fmt.Errorf("%s an unknown type, first %s (result of node %s in graph %s): give the program's input types (fxport parse --input-types, --inputs, --types-from) so shape inference can type them", count, v, v.Def.Short(), graphName(v.Graph))
}
