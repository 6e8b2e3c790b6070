package explorer

import (
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"strings"
	"time"
)

//go:embed page.html.tmpl
var pageText string

var pageTmpl = template.Must(template.New("page").Parse(pageText))

// diffContext is the number of unchanged lines shown around each change.
const diffContext = 3

// Render writes the page as one HTML document.
func Render(w io.Writer, p *Page) error {
	if err := pageTmpl.Execute(w, build(p)); err != nil {
		return fmt.Errorf("explorer: %w", err)
	}
	return nil
}

// view is what the template renders: the page with its diffs, anchors and
// drawings computed.
type view struct {
	*Page
	Input       []irLine
	Passes      []passView
	Changed     int // passes whose IR is shown
	Fired       int
	Workarounds []workaround
	Arenas      []arenaView
}

type passView struct {
	Pass
	Index          int
	Time           string
	Shown          bool
	Added, Removed int
	Hunks          []Hunk
	IR             []irLine
	Fired          []firingView
}

// irLine is one line of an IR listing: ID anchors a node's definition,
// Changed marks a line the pass added.
type irLine struct {
	Text    string
	ID      string
	Changed bool
}

type firingView struct {
	Firing
	Href      string // the node in the IR listing ("" for program-level firings)
	CatAnchor string // the catalog ID's row in the workarounds table
}

// workaround is one catalog entry that fired, with where it fired first.
type workaround struct {
	ID, Entry, Kind string
	Count           int
	First           string // the first firing's anchor
	Anchor          string // the row's element ID (first row of its catalog ID)
}

func build(p *Page) *view {
	v := &view{Page: p}
	prevText := p.Input
	prevPrefix := "p0"
	prevIDs := map[string]bool{}
	v.Input = listing(p.Input, "p0", nil, prevIDs)
	index := map[string]int{}
	catRows := map[string]bool{}
	for i, ps := range p.Passes {
		pv := passView{Pass: ps, Index: i + 1}
		if p.Times && !ps.Disabled {
			pv.Time = ps.Duration.Round(time.Microsecond).String()
		}
		prefix, ids := prevPrefix, prevIDs
		if ps.IR != "" {
			pv.Shown = true
			v.Changed++
			d := Diff(lines(prevText), lines(ps.IR))
			added := map[int]bool{}
			bi := 0
			for _, l := range d {
				switch l.Op {
				case Add:
					added[bi] = true
					bi++
					pv.Added++
				case Del:
					pv.Removed++
				default:
					bi++
				}
			}
			pv.Hunks = Hunks(d, diffContext)
			prefix, ids = fmt.Sprintf("p%d", i+1), map[string]bool{}
			pv.IR = listing(ps.IR, prefix, added, ids)
		}
		for _, f := range ps.Fired {
			fv := firingView{Firing: f}
			if f.Node != "" {
				// The node after the pass, or, when the pass removed it,
				// in the IR before the pass.
				id := anchor(prefix, f.Graph, nodeName(f.Node))
				if !ids[id] {
					id = anchor(prevPrefix, f.Graph, nodeName(f.Node))
					if !prevIDs[id] {
						id = ""
					}
				}
				if id != "" {
					fv.Href = "#" + id
				}
			}
			if f.ID != "" {
				fv.CatAnchor = catAnchor(f.ID)
			}
			pv.Fired = append(pv.Fired, fv)
			v.Fired++
			key := f.Kind + "\x00" + f.Entry + "\x00" + f.ID
			if j, ok := index[key]; ok {
				v.Workarounds[j].Count++
				continue
			}
			rowAnchor := ""
			if f.ID != "" && !catRows[f.ID] {
				rowAnchor, catRows[f.ID] = fv.CatAnchor, true
			}
			first := fv.Href
			if first == "" {
				first = fmt.Sprintf("#pass-%d", i+1)
			}
			index[key] = len(v.Workarounds)
			v.Workarounds = append(v.Workarounds, workaround{ID: f.ID, Entry: f.Entry, Kind: f.Kind, Count: 1, First: first, Anchor: rowAnchor})
		}
		if pv.Shown {
			prevText, prevPrefix, prevIDs = ps.IR, prefix, ids
		}
		v.Passes = append(v.Passes, pv)
	}
	for _, a := range p.Summary.Arenas {
		v.Arenas = append(v.Arenas, drawArena(a))
	}
	return v
}

// maxLine is the longest line shown; longer ones (inline weight data)
// are cut, marked with the number of bytes left out.
const maxLine = 400

func lines(s string) []string {
	out := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	for i, l := range out {
		if len(l) > maxLine {
			cut := maxLine
			for cut > 0 && l[cut]&0xc0 == 0x80 { // not inside a UTF-8 sequence
				cut--
			}
			out[i] = fmt.Sprintf("%s… (%d more bytes)", l[:cut], len(l)-cut)
		}
	}
	return out
}

// listing splits IR text into lines, anchoring node definitions
// ("%name: …" inside "graph NAME(…) {") and recording their IDs in ids.
func listing(text, prefix string, changed map[int]bool, ids map[string]bool) []irLine {
	var out []irLine
	graph := ""
	for i, l := range lines(text) {
		il := irLine{Text: l, Changed: changed[i]}
		t := strings.TrimSpace(l)
		switch {
		case strings.HasPrefix(t, "graph "):
			graph = t[len("graph "):]
			if j := strings.IndexAny(graph, "( "); j >= 0 {
				graph = graph[:j]
			}
		case strings.HasPrefix(t, "%") && graph != "":
			if id := anchor(prefix, graph, nodeName(t)); !ids[id] {
				il.ID, ids[id] = id, true
			}
		}
		out = append(out, il)
	}
	return out
}

// nodeName is the value name a node line or a firing's node starts with
// ("%add: f32[…] = …", "%add (aten.add.Tensor)" → "add").
func nodeName(s string) string {
	s = strings.TrimPrefix(strings.TrimSpace(s), "%")
	if j := strings.IndexAny(s, ":, ("); j >= 0 {
		s = s[:j]
	}
	return s
}

// anchor is the element ID of a node in the listing with prefix.
func anchor(prefix, graph, node string) string {
	return prefix + "-" + sanitize(graph) + "-" + sanitize(node)
}

// catAnchor is the element ID of a catalog ID's row.
func catAnchor(id string) string { return "cat-" + sanitize(id) }

// sanitize keeps letters, digits, '-' and '_' (other bytes become _XX).
func sanitize(s string) string {
	var b strings.Builder
	for _, c := range []byte(s) {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '_', c == '-':
			b.WriteByte(c)
		default:
			fmt.Fprintf(&b, "_%02x", c)
		}
	}
	return b.String()
}
