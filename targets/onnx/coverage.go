package onnx

import (
	"fmt"
	"sort"
	"strings"

	"github.com/fxport/fxport/ir"
)

// CoreCoverage counts the Core ATen ops and those with a lowering.
func CoreCoverage() (lowered, core int) {
	for _, op := range ir.AllOps() {
		if op.Has(ir.PropCore) {
			core++
			if Covered(op) {
				lowered++
			}
		}
	}
	return lowered, core
}

// CoverageMarkdown renders the translation table as Markdown: the Core ATen
// count, every lowered op with its opset versions and the one-op torch
// programs that judge it (torchCases: op → case names), then every
// deliberately unsupported op with its reason (docs/targets/onnx.md embeds
// it; a test keeps it fresh).
func CoverageMarkdown(torchCases map[ir.Op][]string) string {
	var b strings.Builder
	lowered, core := CoreCoverage()
	fmt.Fprintf(&b, "Core ATen ops lowered: **%d of %d**; the other %d are listed under \"Not lowered\" with their reason.\n\n", lowered, core, core-lowered)
	ops := CoveredOps()
	fmt.Fprintf(&b, "### Lowered ops (%d)\n\n| op | opsets (from) | core | judged against torch (`testdata/opcases`) |\n|---|---|---|---|\n", len(ops))
	for _, op := range ops {
		var vs []string
		for _, v := range versions(op) {
			vs = append(vs, fmt.Sprint(v.MinOpset))
		}
		core := ""
		if op.Has(ir.PropCore) {
			core = "yes"
		}
		cases := strings.Join(torchCases[op], ", ")
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", op, strings.Join(vs, ", "), core, cases)
	}
	un := unsupported.Ops()
	sort.Slice(un, func(i, j int) bool { return un[i].String() < un[j].String() })
	fmt.Fprintf(&b, "\n### Not lowered (%d)\n\n| op | reason |\n|---|---|\n", len(un))
	for _, op := range un {
		fmt.Fprintf(&b, "| `%s` | %s |\n", op, unsupportedWhy(op))
	}
	return b.String()
}
