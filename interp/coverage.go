package interp

import (
	"fmt"
	"strings"

	"github.com/fxport/fxport/ir"
)

// unsupportedWhy says why an op has no kernel yet (shown in the docs).
var unsupportedWhy = map[ir.Op]string{
	ir.OpHigherOrderAutoFunctionalizedV2: "view-base bookkeeping of functionalization v2: not implemented yet",
	ir.OpHigherOrderFlexAttention:        "score_mod/block_mask regions: not implemented yet",
}

// CoverageMarkdown renders the op coverage section of docs/interpreter.md.
func CoverageMarkdown() string {
	var b strings.Builder
	all := ir.AllOps()
	un := Unsupported()
	fmt.Fprintf(&b, "%d of the %d ops of the op table run; %d do not.\n\n", len(all)-len(un), len(all), len(un))
	b.WriteString("| unsupported op | why |\n|---|---|\n")
	for _, op := range un {
		why := unsupportedWhy[op]
		if why == "" {
			why = "no kernel yet"
		}
		fmt.Fprintf(&b, "| `%s` | %s |\n", op, why)
	}
	b.WriteString("\nSupported, by namespace (in-place and out= variants run their functional twin):\n\n")
	byNS := map[string][]string{}
	var order []string
	for _, op := range all {
		if !Supported(op) {
			continue
		}
		ns := op.Info().Namespace
		if _, ok := byNS[ns]; !ok {
			order = append(order, ns)
		}
		byNS[ns] = append(byNS[ns], strings.TrimPrefix(op.String(), ns+"."))
	}
	for _, ns := range order {
		fmt.Fprintf(&b, "- **%s** (%d): %s\n", ns, len(byNS[ns]), strings.Join(byNS[ns], ", "))
	}
	return b.String()
}
