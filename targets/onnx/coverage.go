package onnx

import (
	"fmt"
	"sort"
	"strings"

	"github.com/fxport/fxport/ir"
)

// CoverageMarkdown renders the translation table as Markdown: every lowered
// op with its opset versions, then every deliberately unsupported op with its
// reason (docs/targets/onnx.md embeds it; a test keeps it fresh).
func CoverageMarkdown() string {
	var b strings.Builder
	ops := CoveredOps()
	fmt.Fprintf(&b, "### Lowered ops (%d)\n\n| op | opsets (from) | core |\n|---|---|---|\n", len(ops))
	for _, op := range ops {
		var vs []string
		for _, v := range table[op] {
			vs = append(vs, fmt.Sprint(v.MinOpset))
		}
		core := ""
		if op.Has(ir.PropCore) {
			core = "yes"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s |\n", op, strings.Join(vs, ", "), core)
	}
	var un []ir.Op
	for op := range unsupported {
		un = append(un, op)
	}
	sort.Slice(un, func(i, j int) bool { return un[i].String() < un[j].String() })
	fmt.Fprintf(&b, "\n### Not lowered (%d)\n\n| op | reason |\n|---|---|\n", len(un))
	for _, op := range un {
		fmt.Fprintf(&b, "| `%s` | %s |\n", op, unsupported[op])
	}
	return b.String()
}
