package plan_test

import (
	"fmt"
	"sort"

	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/targets/executorch/plan"
)

// checkLoopTrace runs p's main graph symbolically in the order the emitter
// lays out its instructions, every while_loop, scan and map_impl taking
// trips iterations, and checks, independently of the planner's own
// lifetimes, that no two tensors live at one step share bytes.
//
// A value is live in instances: each write starts one, which lasts to the
// last read before the next write (so a body value is live once per
// iteration, and a value written in one trip and read in the next is live
// across the backward jump). A region input is the carried slot (the
// loop's result) or the outer operand it stands for; a scan's xs slice is
// written at the top of each iteration, its stacked outputs are written
// row by row (a write that keeps the earlier rows: the instance goes on)
// and its carry slots and a while_loop's slots by the copies at the end
// of each iteration, after the rows (the copies read the step's results).
func checkLoopTrace(p *ir.Program, pl *plan.Plan, trips int) error {
	type span struct{ from, to int }
	live := map[*ir.Value][]span{}
	bind := map[*ir.Value]*ir.Value{}
	res := func(v *ir.Value) *ir.Value {
		for bind[v] != nil {
			v = bind[v]
		}
		return v
	}
	step := 0
	readV := func(v *ir.Value) {
		if v == nil || v.Tensor() == nil {
			return
		}
		v = res(v)
		s := live[v]
		if len(s) == 0 {
			live[v] = []span{{step, step}} // read before any write: live from here
			return
		}
		s[len(s)-1].to = step
	}
	read := func(a ir.Arg) {
		vs := []ir.Arg{a}
		if a.Kind == ir.ArgList {
			vs = a.List
		}
		for _, e := range vs {
			if e.Kind == ir.ArgValue {
				readV(e.Value)
			}
		}
	}
	write := func(v *ir.Value) {
		if v.Tensor() != nil {
			live[v] = append(live[v], span{step, step})
		}
	}
	for _, v := range p.Main.Inputs {
		if v.Tensor() != nil {
			live[v] = []span{{-1, -1}}
		}
	}
	var run func(g *ir.Graph)
	run = func(g *ir.Graph) {
		for _, n := range g.Nodes() {
			switch {
			case n.Op.String() == "higher_order.while_loop":
				cg, bg := n.Args[0].Graph, n.Args[1].Graph
				carried, extra := n.Args[2].List, n.Args[3].List
				read(n.Args[2])
				read(n.Args[3])
				for _, r := range n.Results {
					write(r)
				}
				step++
				for _, rg := range []*ir.Graph{cg, bg} {
					for i, in := range rg.Inputs {
						if i < len(carried) {
							bind[in] = n.Results[i]
						} else if a := extra[i-len(carried)]; a.Kind == ir.ArgValue {
							bind[in] = a.Value
						}
					}
				}
				for it := 0; ; it++ {
					run(cg)
					read(cg.Outputs()[0])
					step++
					if it == trips {
						break
					}
					run(bg)
					for i, o := range bg.Outputs() {
						if o.Kind == ir.ArgValue && res(o.Value) == n.Results[i] {
							continue // returned unchanged: no copy
						}
						read(o)
						write(n.Results[i])
						step++
					}
				}
			case plan.ScanSlices(n) != nil:
				s, _ := plan.ScanParts(n)
				f := s.Body
				ninit, nxs := len(s.Init), len(s.Xs)
				for _, a := range s.Init {
					read(a)
				}
				for _, a := range s.Xs {
					read(a)
				}
				for _, a := range s.Extra {
					read(a)
				}
				for _, r := range n.Results {
					write(r) // carry slots copied in; stacked outputs sized
				}
				step++
				for i, in := range f.Inputs {
					switch {
					case i < ninit:
						bind[in] = n.Results[i]
					case i >= ninit+nxs:
						if a := s.Extra[i-ninit-nxs]; a.Kind == ir.ArgValue {
							bind[in] = a.Value
						}
					}
				}
				for it := 0; it < trips; it++ {
					for j, a := range s.Xs {
						read(a)
						write(f.Inputs[ninit+j])
						step++
					}
					run(f)
					outs := f.Outputs()
					for k := ninit; k < len(outs); k++ {
						read(outs[k])
						readV(n.Results[k]) // the row write keeps the others
						step++
					}
					for i := 0; i < ninit; i++ {
						if o := outs[i]; o.Kind == ir.ArgValue && res(o.Value) == n.Results[i] {
							continue
						}
						read(outs[i])
						write(n.Results[i])
						step++
					}
				}
				step++ // the exit
			case n.Op.String() == "executorch_prim.et_view.default":
				// An alias: its reads are its base's (the base lives on).
				read(n.Args[0])
				bind[n.Results[0]] = res(n.Args[0].Value)
				step++
			default:
				for _, a := range n.Args {
					read(a)
				}
				for _, r := range n.Results {
					write(r)
				}
				step++
			}
		}
	}
	run(p.Main)
	for _, o := range p.Main.Outputs() {
		read(o)
	}
	if err := checkViewsShareBase(p, pl, res); err != nil {
		return err
	}
	var vals []*ir.Value
	for v := range live {
		vals = append(vals, v)
	}
	sort.Slice(vals, func(i, j int) bool {
		return vals[i].ID < vals[j].ID || vals[i].ID == vals[j].ID && vals[i].Name < vals[j].Name
	})
	for i, a := range vals {
		pa, ok := pl.Lookup(a)
		if !ok {
			return fmt.Errorf("%s is not planned", a)
		}
		for _, b := range vals[i+1:] {
			pb, ok := pl.Lookup(b)
			if !ok {
				return fmt.Errorf("%s is not planned", b)
			}
			if pa.Size == 0 || pb.Size == 0 || pa.Offset >= pb.Offset+pb.Size || pb.Offset >= pa.Offset+pa.Size {
				continue
			}
			for _, sa := range live[a] {
				for _, sb := range live[b] {
					if sa.from <= sb.to && sb.from <= sa.to {
						return fmt.Errorf("%s %v live [%d, %d] overlaps %s %v live [%d, %d]", a, pa, sa.from, sa.to, b, pb, sb.from, sb.to)
					}
				}
			}
		}
	}
	return nil
}
