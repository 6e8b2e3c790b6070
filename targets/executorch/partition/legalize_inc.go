package partition

import (
	"slices"

	"github.com/fxport/fxport/ir"
)

// labelShift spaces the labels of a freshly recorded entry sequence.
const labelShift = 32

// qent is one entry of the sequence the last run popped.
type qent struct {
	prev, next int32
	label      int64      // increases along the sequence
	r          int32      // the entry that released it; -1 for a seed
	res        int32      // kItem: the result's index; kInput: the input's index
	ln         *legalNode // kNode, kItem: the node; kAttr: its call
	kind       uint8
	seed       bool // queued before the sort starts
	front      bool // released to the front of the queue: a prioritized node
	inE        bool // in the sequence
	// Scratch of the incremental runs, stamped by run or window.
	dRun, failRun, popWin, cntWin, pushWin, userMark int32
	cnt, newR                                        int32
}

// incScratch holds the buffers of the incremental runs.
type incScratch struct {
	dlist, failing, cands, block []int32
	starts                       []int32
	fifo, front, out, users      []int32
	labels                       []int64
	oldNodes, newNodes           []*ir.Node
	movers                       []*legalNode
	jobs                         []relinkJob
	umark                        int32
}

// relinkJob is a re-sorted stretch of the sequence, first to last entry,
// whose nodes the graph must take in the sequence's order.
type relinkJob struct{ first, last int32 }

// suspect records that ln's place among the users of its operands changed:
// the next run checks it.
func (l *Legalizer) suspect(ln *legalNode) {
	if ln != nil && ln.suspect != l.run {
		ln.suspect = l.run
		l.suspects = append(l.suspects, ln)
	}
}

// entOf is ln's node entry, -1 when it has none in the sequence.
func (l *Legalizer) entOf(ln *legalNode) int32 {
	if ln == nil || ln.ent < 0 || int(ln.ent) >= len(l.ents) {
		return -1
	}
	if x := &l.ents[ln.ent]; !x.inE || x.ln != ln || x.kind != kNode {
		return -1
	}
	return ln.ent
}

func (l *Legalizer) newEnt(kind uint8, ln *legalNode, res int32) int32 {
	l.ents = append(l.ents, qent{kind: kind, ln: ln, res: res, r: -1, prev: -1, next: -1})
	return int32(len(l.ents) - 1)
}

// unlink takes e out of the sequence.
func (l *Legalizer) unlink(e int32) {
	x := &l.ents[e]
	if e == l.lastSeed {
		q := x.prev
		for q >= 0 && !l.ents[q].seed {
			q = l.ents[q].prev
		}
		l.lastSeed = q
	}
	if x.prev >= 0 {
		l.ents[x.prev].next = x.next
	} else {
		l.head = x.next
	}
	if x.next >= 0 {
		l.ents[x.next].prev = x.prev
	} else {
		l.tail = x.prev
	}
	x.prev, x.next, x.inE = -1, -1, false
}

// insertAfter links es, in order, after entry a (-1: first), with labels
// between a's and its successor's.
func (l *Legalizer) insertAfter(a int32, es []int32) {
	if len(es) == 0 {
		return
	}
	k := int64(len(es))
	gap := func() (lo, hi int64) {
		b := l.head
		if a >= 0 {
			b = l.ents[a].next
		}
		switch {
		case a >= 0 && b >= 0:
			return l.ents[a].label, l.ents[b].label
		case a >= 0:
			lo = l.ents[a].label
			return lo, lo + (k+1)<<labelShift
		case b >= 0:
			hi = l.ents[b].label
			return hi - (k+1)<<labelShift, hi
		}
		return 0, (k + 1) << labelShift
	}
	lo, hi := gap()
	if hi-lo <= k {
		l.relabel()
		lo, hi = gap()
	}
	// Close to a: what follows often gets more entries after these.
	step := min((hi-lo)/(k+1), 1<<16)
	b := l.head
	if a >= 0 {
		b = l.ents[a].next
	}
	p := a
	for i, e := range es {
		x := &l.ents[e]
		x.label = lo + step*int64(i+1)
		x.prev, x.inE = p, true
		if p >= 0 {
			l.ents[p].next = e
		} else {
			l.head = e
		}
		p = e
	}
	l.ents[p].next = b
	if b >= 0 {
		l.ents[b].prev = p
	} else {
		l.tail = p
	}
}

// relabel spreads the labels out again.
func (l *Legalizer) relabel() {
	l.Stats.Relabels++
	i := int64(0)
	for e := l.head; e >= 0; e = l.ents[e].next {
		l.ents[e].label = i << labelShift
		i++
	}
}

// prevBack and nextBack are the nearest entries before and after e that
// are not released to the queue's front; -1 for none.
func (l *Legalizer) prevBack(e int32) int32 {
	for e = l.ents[e].prev; e >= 0 && l.ents[e].front; e = l.ents[e].prev {
	}
	return e
}

func (l *Legalizer) nextBack(e int32) int32 {
	for e = l.ents[e].next; e >= 0 && l.ents[e].front; e = l.ents[e].next {
	}
	return e
}

// tier places the previous and the fresh call last among users.
func (l *Legalizer) tier(n *ir.Node) int {
	switch n {
	case l.freshN:
		return 2
	case l.prevN:
		return 1
	}
	return 0
}

// userLess orders two node entries as FX's node.users does.
func (l *Legalizer) userLess(a, b int32) bool {
	ta, tb := l.tier(l.ents[a].ln.n), l.tier(l.ents[b].ln.n)
	if ta != tb {
		return ta < tb
	}
	return l.ents[a].label < l.ents[b].label
}

// keyLess reports whether back entry p is pushed before back entry x:
// its releaser pops first, or the same releaser pushes it first.
func (l *Legalizer) keyLess(p, x int32) bool {
	rp, rx := l.ents[p].r, l.ents[x].r
	if rp != rx {
		return l.ents[rp].label < l.ents[rx].label
	}
	if r := &l.ents[rp]; r.kind == kNode && r.ln.multi {
		return l.ents[p].res < l.ents[x].res // its getitems, in result order
	}
	return l.userLess(p, x)
}

// seedLess orders seeds: placeholders in input order, operand-less nodes
// in graph order, get_attrs in outline order.
func (l *Legalizer) seedLess(a, b int32) bool {
	ka, kb := l.seedClass(a), l.seedClass(b)
	if ka != kb {
		return ka < kb
	}
	switch ka {
	case 0:
		return l.ents[a].res < l.ents[b].res
	case 2:
		return l.ents[a].ln.callIdx < l.ents[b].ln.callIdx
	}
	return l.ents[a].label < l.ents[b].label
}

func (l *Legalizer) seedClass(e int32) int {
	switch l.ents[e].kind {
	case kInput:
		return 0
	case kAttr:
		return 2
	}
	return 1
}

// fields recomputes what e's place depends on: whether it is a seed, its
// releaser (the last of its operands' entries), whether it is released to
// the front. It fails when an operand has no entry.
func (l *Legalizer) fields(e int32) bool {
	x := &l.ents[e]
	switch x.kind {
	case kInput, kAttr:
		x.seed, x.front, x.r = true, false, -1
	case kItem:
		x.seed, x.front, x.r = false, false, x.ln.ent
	default:
		ln := x.ln
		best := int32(-1)
		see := func(p int32) bool {
			if p < 0 || !l.ents[p].inE {
				return false
			}
			if best < 0 || l.ents[p].label > l.ents[best].label {
				best = p
			}
			return true
		}
		for _, k := range ln.ops {
			if !see(l.prov[k]) {
				return false
			}
		}
		if ln.attr >= 0 && !see(ln.attr) {
			return false
		}
		x.seed, x.r = best < 0, best
		x.front = !x.seed && ln.prio
	}
	return true
}

// legalizeIncremental does the run after one outline (l.pendCall made from
// l.pendGroup) without sorting the whole graph; false (before the graph
// changed) when it cannot, and the whole graph must be sorted.
func (l *Legalizer) legalizeIncremental(calls []*ir.Node) bool {
	call, group := l.pendCall, l.pendGroup
	nc := len(calls)
	if nc >= 2 && calls[nc-2] != l.freshN || nc >= 3 && calls[nc-3] != l.prevN || l.lookup(call) != nil {
		return false
	}
	l.run++
	run := l.run
	sc := &l.incScratch
	sc.dlist, sc.cands, sc.failing, sc.jobs = sc.dlist[:0], sc.cands[:0], sc.failing[:0], sc.jobs[:0]
	addD := func(e int32) {
		if e >= 0 && l.ents[e].inE && l.ents[e].dRun != run {
			l.ents[e].dRun = run
			sc.dlist = append(sc.dlist, e)
		}
	}
	// The group's last member: the call took its place.
	lastEnt := int32(-1)
	for _, m := range group {
		ln := l.lookup(m)
		e := l.entOf(ln)
		if e < 0 || ln.attr >= 0 {
			return false
		}
		if lastEnt < 0 || l.ents[e].label > l.ents[lastEnt].label {
			lastEnt = e
		}
	}
	if lastEnt < 0 {
		return false
	}
	L := l.ents[lastEnt].label
	// The movers: the nodes Outline put right after the call, which were
	// before the group's last member.
	movers := sc.movers[:0]
	for n := call.Next(); n != nil; n = n.Next() {
		ln := l.lookup(n)
		e := l.entOf(ln)
		if e < 0 {
			return false
		}
		if l.ents[e].label >= L {
			break
		}
		movers = append(movers, ln)
	}
	sc.movers = movers
	var pv *legalNode
	if nc >= 2 {
		pv = l.lookup(calls[nc-2])
		if l.entOf(pv) < 0 || pv.attr >= 0 {
			return false
		}
	}
	// From here on the sequence changes; a failure sorts the whole graph,
	// which rebuilds it.
	cl := l.node(call)
	cl.callIdx, cl.attr = int32(nc-1), -1
	ce := l.newEnt(kNode, cl, 0)
	cl.ent = ce
	l.ents[ce].seed = len(cl.ops) == 0
	block := append(sc.block[:0], ce)
	cl.items = cl.items[:0]
	for j, r := range call.Results {
		it := int32(-1)
		if r.NumUses() > 0 {
			it = l.newEnt(kItem, cl, int32(j))
			block = append(block, it)
			l.prov[cl.res[j]] = it
		}
		cl.items = append(cl.items, it)
	}
	take := func(e int32) {
		if e >= 0 && l.ents[e].inE {
			sc.cands = append(sc.cands, l.ents[e].next)
			l.unlink(e)
			block = append(block, e)
		}
	}
	for _, m := range movers {
		take(m.ent)
		if m.multi {
			for _, it := range m.items {
				take(it)
			}
		}
	}
	l.insertAfter(lastEnt, block)
	sc.block = block
	for _, e := range block {
		addD(e)
	}
	sc.cands = append(sc.cands, l.ents[block[len(block)-1]].next)
	for _, m := range group {
		ln := l.lookup(m)
		drop := func(e int32) {
			if e >= 0 && l.ents[e].inE {
				sc.cands = append(sc.cands, l.ents[e].next)
				l.unlink(e)
			}
		}
		drop(ln.ent)
		if ln.multi {
			for _, it := range ln.items {
				drop(it)
			}
		}
		for _, k := range ln.res {
			l.prov[k] = -1
		}
		ln.ent = -1
	}
	if ls := l.lastSeed; l.ents[ce].seed && (ls < 0 || l.ents[ls].label < l.ents[ce].label) {
		l.lastSeed = ce
	}
	l.nodeEnts += 1 - len(group)
	if l.nodeEnts != l.g.Len() {
		return false
	}
	usersToD := func(n *ir.Node) bool {
		for _, r := range n.Results {
			for _, u := range r.Uses() {
				if u.IsReturn() {
					continue
				}
				e := l.entOf(l.lookup(u))
				if e < 0 {
					return false
				}
				addD(e)
			}
		}
		return true
	}
	if !usersToD(call) {
		return false
	}
	for _, m := range movers {
		if !usersToD(m.n) {
			return false
		}
	}
	// The previous call's lowered module gets its get_attr, seeded after
	// every other seed.
	if pv != nil {
		a := l.newEnt(kAttr, pv, 0)
		pv.attr = a
		s := l.lastSeed
		if s < 0 || !l.ents[s].inE || !l.ents[s].seed {
			s = -1
			for e := l.head; e >= 0 && (l.ents[e].seed || l.ents[e].front); e = l.ents[e].next {
				if l.ents[e].seed {
					s = e
				}
			}
		}
		p := s
		if p >= 0 {
			for q := l.ents[p].next; q >= 0 && l.ents[q].front; q = l.ents[q].next {
				p = q
			}
		}
		l.insertAfter(p, []int32{a})
		l.lastSeed = a
		addD(a)
		addD(pv.ent)
		sc.cands = append(sc.cands, l.ents[a].next)
	}
	// calls[nc-3] is no longer last among its operands' users.
	if nc >= 3 {
		addD(l.entOf(l.lookup(calls[nc-3])))
	}
	for _, ln := range l.suspects {
		addD(l.entOf(ln))
	}
	l.suspects = l.suspects[:0]
	for _, e := range sc.cands {
		addD(e)
	}
	l.prevN, l.freshN = nil, call
	if nc >= 2 {
		l.prevN = calls[nc-2]
	}
	for _, e := range sc.dlist {
		if x := &l.ents[e]; x.kind == kNode {
			l.node(x.ln.n)
		}
	}
	for _, e := range sc.dlist {
		if !l.fields(e) {
			return false
		}
	}
	// Check the condition at every entry whose place may have changed.
	fail := func(e int32) {
		if l.ents[e].failRun != run {
			l.ents[e].failRun = run
			sc.failing = append(sc.failing, e)
		}
	}
	for _, e := range sc.dlist {
		x := &l.ents[e]
		if x.front {
			fail(e)
			continue
		}
		p, n := l.prevBack(e), l.nextBack(e)
		if x.seed {
			// In seed order after the previous seed: the few entries
			// released after it that sit before e are out of place.
			q, k := p, 0
			for ; q >= 0 && !l.ents[q].seed && k < 8; q, k = l.prevBack(q), k+1 {
			}
			if q >= 0 && (!l.ents[q].seed || !l.seedLess(q, e)) || n >= 0 && l.ents[n].seed && !l.seedLess(e, n) {
				return false
			}
			for ; p != q; p = l.prevBack(p) {
				fail(p)
			}
			continue
		}
		if l.ents[x.r].label >= l.ents[e].label {
			fail(e)
		}
		if p >= 0 && !l.ents[p].seed && !l.keyLess(p, e) {
			fail(p)
			fail(e)
		}
		if n >= 0 {
			if l.ents[n].seed {
				// Released, yet before a seed: so are the entries since
				// the previous seed.
				q, k := e, 0
				for ; q >= 0 && !l.ents[q].seed && k < 8; q, k = l.prevBack(q), k+1 {
					fail(q)
				}
				if q >= 0 && !l.ents[q].seed {
					return false
				}
				continue
			}
			if !l.keyLess(e, n) {
				fail(e)
				fail(n)
			}
		}
	}
	if len(sc.failing) == 0 {
		l.Stats.Unchanged++
		return true
	}
	// Re-sort from before each violation until the queue is the
	// sequence's again.
	start := func(f int32) int32 {
		s := f
		if x := &l.ents[f]; !x.seed && x.r >= 0 && l.ents[x.r].label < x.label {
			s = x.r
		}
		for l.ents[s].front && l.ents[s].r >= 0 {
			s = l.ents[s].r
		}
		return s
	}
	sc.starts = sc.starts[:0]
	for _, f := range sc.failing {
		sc.starts = append(sc.starts, start(f))
	}
	idx := make([]int, len(sc.failing))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int {
		la, lb := l.ents[sc.starts[a]].label, l.ents[sc.starts[b]].label
		switch {
		case la < lb:
			return -1
		case la > lb:
			return 1
		}
		return 0
	})
	synced := int64(-1 << 63) // the label the last stretch ended before
	end := false
	for _, i := range idx {
		f, s := sc.failing[i], sc.starts[i]
		if l.ents[f].failRun != run {
			continue // re-sorted already
		}
		if end || l.ents[s].label < synced {
			return false
		}
		pc, ok := l.window(s)
		if !ok {
			return false
		}
		if pc < 0 {
			end = true
		} else {
			synced = l.ents[pc].label
		}
	}
	// The graph takes each re-sorted stretch's order, the last first: the
	// node after a stretch is then in its final place.
	for i := len(sc.jobs) - 1; i >= 0; i-- {
		j := sc.jobs[i]
		var at *ir.Node
		for e := l.ents[j.last].next; e >= 0; e = l.ents[e].next {
			if l.ents[e].kind == kNode {
				at = l.ents[e].ln.n
				break
			}
		}
		for e := j.first; ; e = l.ents[e].next {
			if l.ents[e].kind == kNode {
				l.ents[e].ln.n.MoveBefore(at)
			}
			if e == j.last {
				break
			}
		}
	}
	return true
}

// window runs the Kahn sort from entry a, before which the sequence is
// what the sort pops, until the popped entries are the sequence up to
// some entry pc and the queue holds the entries the sequence has next; it
// puts the popped ones in the sort's order and returns pc (-1: the end).
// The queue at a is the entries from a on that an entry before a released
// (the sequence's order), then what the stretch releases.
func (l *Legalizer) window(a int32) (pc int32, ok bool) {
	l.win++
	w, run := l.win, l.run
	sc := &l.incScratch
	ents := l.ents
	lA := ents[a].label
	popped := func(e int32) bool { return ents[e].label < lA || ents[e].popWin == w }
	fifo, front, out := sc.fifo[:0], sc.front[:0], sc.out[:0]
	defer func() { sc.fifo, sc.front, sc.out = fifo[:0], front[:0], out[:0] }()
	fh := 0
	cur, implicitDone := a, false
	// nextImplicit is the next entry released before a, in the sequence's
	// order, or -1 once there is none: failing entries and prioritized
	// ones are released in the stretch; the first other entry released
	// after a ends them.
	nextImplicit := func() int32 {
		for cur >= 0 {
			e := cur
			x := &ents[e]
			if popped(e) || x.front {
				cur = x.next
				continue
			}
			if x.seed || ents[x.r].label < lA {
				cur = x.next
				return e
			}
			if x.failRun != run {
				return -1
			}
			cur = x.next
		}
		return -1
	}
	bad := false
	var popE int32
	dec := func(u int32) {
		x := &ents[u]
		if x.cntWin != w {
			x.cntWin = w
			c := int32(0)
			for _, k := range x.ln.ops {
				if p := l.prov[k]; p < 0 {
					bad = true
				} else if !popped(p) {
					c++
				}
			}
			if x.ln.attr >= 0 && !popped(x.ln.attr) {
				c++
			}
			x.cnt = c
		} else {
			x.cnt--
		}
		if x.cnt == 0 {
			x.newR, x.pushWin = popE, w
			if x.ln.prio {
				front = append(front, u)
			} else {
				fifo = append(fifo, u)
			}
		}
	}
	releaseUsers := func(k int32) {
		sc.umark++
		users := sc.users[:0]
		for _, u := range l.vals[k].Uses() {
			if u.IsReturn() {
				continue
			}
			e := l.entOf(l.lookup(u))
			if e < 0 || popped(e) {
				bad = true
				continue
			}
			if ents[e].userMark != sc.umark {
				ents[e].userMark = sc.umark
				users = append(users, e)
			}
		}
		if len(users) > 1 {
			slices.SortFunc(users, func(x, y int32) int {
				if l.userLess(x, y) {
					return -1
				}
				return 1
			})
		}
		for _, u := range users {
			dec(u)
		}
		sc.users = users[:0]
	}
	pc = a
	nPassed := 0
	for {
		if len(front) == 0 && len(out) > 0 && len(out) == nPassed {
			if fh == len(fifo) || implicitDone && len(fifo)-fh <= 64 && l.matches(fifo[fh:], pc) {
				break
			}
		}
		e := int32(-1)
		if n := len(front); n > 0 {
			e = front[n-1]
			front = front[:n-1]
		} else if !implicitDone {
			if e = nextImplicit(); e < 0 {
				implicitDone = true
			}
		}
		if e < 0 {
			if fh == len(fifo) {
				break
			}
			e = fifo[fh]
			fh++
		}
		ents[e].popWin = w
		out = append(out, e)
		for pc >= 0 && popped(pc) {
			pc = ents[pc].next
			nPassed++
		}
		popE = e
		switch x := &ents[e]; x.kind {
		case kNode:
			if ln := x.ln; ln.multi {
				for _, it := range ln.items {
					if it >= 0 {
						ents[it].newR, ents[it].pushWin = e, w
						fifo = append(fifo, it)
					}
				}
			} else if len(ln.res) == 1 {
				releaseUsers(ln.res[0])
			}
		case kInput:
			releaseUsers(l.inputNums[x.res])
		case kItem:
			releaseUsers(x.ln.res[x.res])
		case kAttr:
			dec(x.ln.ent)
		}
		if bad {
			return -1, false
		}
	}
	if len(out) == 0 || len(out) != nPassed {
		return -1, false // a cycle, or the sequence was not what the sort pops
	}
	l.Stats.Windows++
	l.Stats.Popped += len(out)
	// The stretch [a, pc) holds out's entries: give them its labels in
	// out's order.
	labels, oldNodes, newNodes := sc.labels[:0], sc.oldNodes[:0], sc.newNodes[:0]
	for e := a; e != pc; e = ents[e].next {
		labels = append(labels, ents[e].label)
		if ents[e].kind == kNode {
			oldNodes = append(oldNodes, ents[e].ln.n)
		}
	}
	before := ents[a].prev
	p := before
	for i, e := range out {
		x := &ents[e]
		x.label, x.prev = labels[i], p
		if p >= 0 {
			ents[p].next = e
		} else {
			l.head = e
		}
		p = e
		if x.pushWin == w {
			x.r, x.seed, x.front = x.newR, false, x.kind == kNode && x.ln.prio
		}
		x.failRun = 0
		if x.kind == kNode {
			newNodes = append(newNodes, x.ln.n)
		}
	}
	ents[p].next = pc
	if pc >= 0 {
		ents[pc].prev = p
	} else {
		l.tail = p
	}
	for _, e := range fifo[fh:] {
		x := &ents[e]
		x.r, x.seed, x.front, x.failRun = x.newR, false, false, 0
	}
	// The nodes that changed places change their rank among users.
	first, last := 0, len(newNodes)
	for first < last && newNodes[first] == oldNodes[first] {
		first++
	}
	for last > first && newNodes[last-1] == oldNodes[last-1] {
		last--
	}
	if first < last {
		for _, n := range newNodes[first:last] {
			l.suspect(l.lookup(n))
		}
		sc.jobs = append(sc.jobs, relinkJob{out[0], out[len(out)-1]})
	}
	sc.labels, sc.oldNodes, sc.newNodes = labels[:0], oldNodes[:0], newNodes[:0]
	return pc, true
}

// matches reports whether q is, in order, the sequence's back entries from
// pc on (prioritized entries in between are released later).
func (l *Legalizer) matches(q []int32, pc int32) bool {
	e := pc
	for _, want := range q {
		for e >= 0 && l.ents[e].front {
			if l.ents[e].failRun == l.run {
				return false
			}
			e = l.ents[e].next
		}
		if e != want {
			return false
		}
		e = l.ents[e].next
	}
	return true
}
