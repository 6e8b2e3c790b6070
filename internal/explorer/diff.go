package explorer

// Op is a diff line's operation.
type Op byte

// The diff operations.
const (
	Same Op = ' '
	Del  Op = '-'
	Add  Op = '+'
)

// Line is one line of a diff.
type Line struct {
	Op   Op
	Text string
}

// maxEdits bounds the search of Diff: beyond it the differing middle is
// reported as deleted and re-added whole, which keeps Diff's time and
// memory bounded on passes that rewrite most of a large program.
const maxEdits = 2000

// Diff returns a shortest line diff of a and b (Myers' O(ND) algorithm on
// what is left after the common prefix and suffix), as the lines of a and
// b in order, each marked Same, Del or Add.
func Diff(a, b []string) []Line {
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	var out []Line
	for _, s := range a[:pre] {
		out = append(out, Line{Same, s})
	}
	out = append(out, middle(a[pre:len(a)-suf], b[pre:len(b)-suf])...)
	for _, s := range a[len(a)-suf:] {
		out = append(out, Line{Same, s})
	}
	return out
}

// middle diffs a and b with Myers' greedy search, keeping the frontier of
// every step to walk the path back.
func middle(a, b []string) []Line {
	n, m := len(a), len(b)
	whole := func() []Line {
		out := make([]Line, 0, n+m)
		for _, s := range a {
			out = append(out, Line{Del, s})
		}
		for _, s := range b {
			out = append(out, Line{Add, s})
		}
		return out
	}
	if n == 0 || m == 0 {
		return whole()
	}
	limit := n + m
	if limit > maxEdits {
		limit = maxEdits
	}
	off := limit + 1
	v := make([]int, 2*limit+3)
	var trace [][]int
	end := -1
	for d := 0; d <= limit && end < 0; d++ {
		trace = append(trace, append([]int(nil), v[off-d-1:off+d+2]...))
		for k := -d; k <= d; k += 2 {
			var x int
			if k == -d || k != d && v[off+k-1] < v[off+k+1] {
				x = v[off+k+1]
			} else {
				x = v[off+k-1] + 1
			}
			y := x - k
			for x < n && y < m && a[x] == b[y] {
				x, y = x+1, y+1
			}
			v[off+k] = x
			if x >= n && y >= m {
				end = d
				break
			}
		}
	}
	if end < 0 {
		return whole()
	}
	// Walk back: trace[d] is the frontier before step d, centred on k=0
	// at index d+1.
	var rev []Line
	x, y := n, m
	for d := end; d > 0; d-- {
		prev := trace[d]
		at := func(k int) int { return prev[k+d+1] }
		k := x - y
		var pk int
		if k == -d || k != d && at(k-1) < at(k+1) {
			pk = k + 1
		} else {
			pk = k - 1
		}
		px := at(pk)
		py := px - pk
		for x > px && y > py {
			x, y = x-1, y-1
			rev = append(rev, Line{Same, a[x]})
		}
		if pk == k+1 {
			y--
			rev = append(rev, Line{Add, b[y]})
		} else {
			x--
			rev = append(rev, Line{Del, a[x]})
		}
	}
	for x > 0 && y > 0 {
		x, y = x-1, y-1
		rev = append(rev, Line{Same, a[x]})
	}
	out := make([]Line, len(rev))
	for i, l := range rev {
		out[len(rev)-1-i] = l
	}
	return out
}

// Hunk is a run of diff lines with their context; A and B are the 1-based
// first line numbers in the old and new text.
type Hunk struct {
	A, B  int
	Lines []Line
}

// Hunks groups a diff's changes with context lines of unchanged text
// around each (as `diff -u` does).
func Hunks(lines []Line, context int) []Hunk {
	var hunks []Hunk
	ai, bi := 1, 1
	last := -1 // index of the last line already in a hunk
	for i := 0; i < len(lines); i++ {
		if lines[i].Op == Same {
			ai, bi = ai+1, bi+1
			continue
		}
		start := i - context
		if start <= last {
			start = last + 1
		}
		if start < 0 {
			start = 0
		}
		// Line numbers at start: step back over the context lines (all Same).
		sa, sb := ai-(i-start), bi-(i-start)
		// Changes closer than 2*context were merged into the hunk before.
		hunks = append(hunks, Hunk{A: sa, B: sb})
		h := &hunks[len(hunks)-1]
		h.Lines = append(h.Lines, lines[start:i]...)
		// The change run and the context after it, extended while further
		// changes come within 2*context lines.
		j := i
		for j < len(lines) {
			if lines[j].Op != Same {
				j++
				continue
			}
			k := j
			for k < len(lines) && lines[k].Op == Same && k-j < 2*context+1 {
				k++
			}
			if k < len(lines) && lines[k].Op != Same && k-j <= 2*context {
				j = k
				continue
			}
			break
		}
		stop := j + context
		if stop > len(lines) {
			stop = len(lines)
		}
		h.Lines = append(h.Lines, lines[i:stop]...)
		for _, l := range lines[i:stop] {
			if l.Op != Add {
				ai++
			}
			if l.Op != Del {
				bi++
			}
		}
		last = stop - 1
		i = stop - 1
	}
	return hunks
}
