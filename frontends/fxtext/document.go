package fxtext

import (
	"strings"
)

// Form is one of the printed forms of an FX graph that fxtext reads.
type Form uint8

// The forms, as torch prints them.
const (
	// FormUnknown is text that starts like none of the forms.
	FormUnknown Form = iota
	// FormGraph is print(gm.graph): "graph():" and %node lines.
	FormGraph
	// FormCode is gm.code: a "def forward(self, ...)" function.
	FormCode
	// FormReadable is gm.print_readable(): "class GraphModule(torch.nn.Module):"
	// with type annotations and nested subgraph classes.
	FormReadable
	// FormExportedProgram is print(exported_program): "ExportedProgram:", the
	// readable form, "Graph signature:" and "Range constraints:".
	FormExportedProgram
)

var formNames = [...]string{"unknown", "graph", "code", "readable", "exported_program"}

func (f Form) String() string {
	if int(f) < len(formNames) {
		return formNames[f]
	}
	return "Form(?)"
}

// Detect tells which form src is in from its first significant line
// (blank lines and '#' comment lines are skipped).
func Detect(src []byte) Form {
	for _, line := range strings.Split(string(src), "\n") {
		t := strings.TrimSpace(line)
		switch {
		case t == "" || strings.HasPrefix(t, "#"):
			continue
		case strings.HasSuffix(t, "ExportedProgram:"):
			return FormExportedProgram
		case strings.HasPrefix(t, "graph(") || strings.HasPrefix(t, "%"):
			return FormGraph
		case strings.HasPrefix(t, "class "):
			return FormReadable
		case strings.HasPrefix(t, "def ") || strings.HasPrefix(t, "import ") || strings.HasPrefix(t, "from "):
			return FormCode
		}
		return FormUnknown
	}
	return FormUnknown
}

// section is the text of a trailer section of an ExportedProgram print.
type section struct {
	text string
	pos  pos // where text starts
}

// document is a dump split into its graph code and its trailer sections.
// code keeps the dump's line numbering: the lines that are not code are blanked.
type document struct {
	form      Form
	code      string
	signature *section
	ranges    *section
}

// sectionHeaders start the trailer sections of an ExportedProgram print,
// across torch versions.
var sectionHeaders = []struct{ prefix, kind string }{
	{"Graph signature:", "signature"},
	{"Graph Signature:", "signature"},
	{"Range constraints:", "ranges"},
	{"Symbol to range:", "ranges"},
	{"Equality constraints:", "other"},
	{"Module call graph:", "other"},
	{"Module Call Graph:", "other"},
}

// splitDocument separates the code of a dump from its trailer sections.
func splitDocument(src string, form Form) *document {
	doc := &document{form: form}
	lines := strings.Split(src, "\n")
	var cur *section
	var curKind string
	var curLines []string
	flush := func() {
		if cur == nil {
			return
		}
		cur.text = strings.Join(curLines, "\n")
		switch curKind {
		case "signature":
			if doc.signature == nil {
				doc.signature = cur
			}
		case "ranges":
			if doc.ranges == nil {
				doc.ranges = cur
			}
		}
		cur, curLines = nil, nil
	}
	headerDone := form != FormExportedProgram
	for i, line := range lines {
		t := strings.TrimSpace(line)
		if !headerDone && strings.HasSuffix(t, "ExportedProgram:") {
			headerDone = true
			lines[i] = ""
			continue
		}
		started := false
		for _, h := range sectionHeaders {
			if strings.HasPrefix(t, h.prefix) {
				flush()
				indent := len(line) - len(strings.TrimLeft(line, " \t"))
				cur = &section{pos: pos{i + 1, indent + len(h.prefix) + 1}}
				curKind = h.kind
				// The header line's remainder is the first line of the section,
				// padded so columns stay right.
				curLines = []string{strings.Repeat(" ", indent+len(h.prefix)) + line[indent+len(h.prefix):]}
				started = true
				break
			}
		}
		if started {
			lines[i] = ""
			continue
		}
		if cur != nil {
			curLines = append(curLines, line)
			lines[i] = ""
		}
	}
	flush()
	doc.code = strings.Join(lines, "\n")
	return doc
}
