package plan

import (
	"strings"

	"github.com/fxport/fxport/ir"
)

// xnnpackPadding is the extra space exir reserves at the end of every
// planned memory buffer of a graph that calls an XNNPACK delegate:
// exir/memory_planning.py's apply_algo sets extra_padding = 64 when
// _contains_xnnpack_delegate(graph_module) (an executorch_call_delegate
// whose lowered module's backend id contains "xnnpack", case-insensitive),
// and greedy adds it to each buffer that holds at least one planned tensor
// (a graph with nothing planned keeps [0, 0]). XNNPACK kernels may read a
// little past the end of a tensor (XNN_EXTRA_BYTES), so the last tensor of
// the arena must not end at the arena's end.
const xnnpackPadding = 64

// callsXNNPACK reports whether g's own nodes (not its regions': exir plans
// submodules separately) include an XNNPACK delegate call.
func callsXNNPACK(g *ir.Graph) bool {
	for _, n := range g.Nodes() {
		if n.Op != ir.OpHigherOrderExecutorchCallDelegate || len(n.Args) < 2 || n.Args[1].Kind != ir.ArgString {
			continue
		}
		if strings.Contains(strings.ToLower(n.Args[1].Str), "xnnpack") {
			return true
		}
	}
	return false
}

// arenaPadding is the padding added to the planned arena of p (0 when p's
// main graph calls no XNNPACK delegate or nothing is planned).
func arenaPadding(p *ir.Program, classes []*class) int64 {
	if !callsXNNPACK(p.Main) {
		return 0
	}
	for _, c := range classes {
		if c.planned {
			return xnnpackPadding
		}
	}
	return 0
}
