package plan

import "sort"

// exirOrderName names the placement that reproduces exir's greedy planner.
const exirOrderName = "exir greedy"

// placeExir places classes the way exir's greedy memory planner does, so
// that programs exir would plan the same way get its offsets: classes are
// taken by unaligned size, largest first, classes of equal size in reverse
// collection order (exir inserts each spec after the equal ones in an
// ascending list, then reverses it; class ids follow exir's collection
// order: graph inputs, then node results in program order). Each class
// joins the first shared object none of whose members it overlaps, or
// opens a new one sized to it (aligned); shared objects are laid out one
// after another in the order they were opened.
func placeExir(classes []*class, align int64) placement {
	var todo []*class
	for _, c := range classes {
		if c.planned && c.size > 0 {
			todo = append(todo, c)
		}
	}
	sort.SliceStable(todo, func(i, j int) bool {
		if todo[i].size != todo[j].size {
			return todo[i].size > todo[j].size
		}
		return todo[i].id > todo[j].id
	})
	type object struct {
		size    int64
		members []*class
	}
	var objs []*object
	in := make([]int, len(classes))
	for _, c := range todo {
		k := -1
		for i, o := range objs {
			free := true
			for _, q := range o.members {
				if overlaps(c, q) {
					free = false
					break
				}
			}
			if free {
				k = i
				break
			}
		}
		if k < 0 {
			k = len(objs)
			objs = append(objs, &object{size: alignUp(c.size, align)})
		}
		objs[k].members = append(objs[k].members, c)
		in[c.id] = k
	}
	pl := placement{name: exirOrderName, offset: make([]int64, len(classes))}
	base := make([]int64, len(objs))
	for i, o := range objs {
		base[i] = pl.arena
		pl.arena += o.size
	}
	for _, c := range todo {
		pl.offset[c.id] = base[in[c.id]]
	}
	return pl
}
