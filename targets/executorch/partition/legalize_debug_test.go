package partition

import (
	"fmt"
	"strings"

	"github.com/fxport/fxport/ir"
)

func dumpE(l *Legalizer) string {
	var b strings.Builder
	for e := l.head; e >= 0; e = l.ents[e].next {
		x := &l.ents[e]
		name := "?"
		switch x.kind {
		case kInput:
			name = fmt.Sprintf("in%d", x.res)
		case kNode:
			name = legalName(x.ln.n)
		case kItem:
			name = fmt.Sprintf("gi(%s)[%d]", legalName(x.ln.n), x.res)
		case kAttr:
			name = fmt.Sprintf("attr(%s)", legalName(x.ln.n))
		}
		r := "-"
		if x.r >= 0 {
			r = fmt.Sprint(x.r)
		}
		fmt.Fprintf(&b, "  #%d %s r=%s seed=%v front=%v lab=%d\n", e, name, r, x.seed, x.front, x.label>>16)
	}
	return b.String()
}

func legalName(n *ir.Node) string {
	if n.Op == OpCallDelegate {
		return "^" + n.Args[0].Graph.Name
	}
	if len(n.Results) == 0 {
		return "!" + n.Args[1].Str
	}
	return n.Results[0].Name
}
