package passes

import (
	"fmt"
	"sort"

	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/pm"
	"github.com/fxport/fxport/targets/executorch/xnnpack"
)

// EtKeepWhole is what a delegate backend declares to decompose-to-core: the
// non-core ops its partitioner claims whole (exir's
// Partitioner.ops_to_not_decompose, asked by to_edge_transform_and_lower
// before it decomposes to core ATen).
type EtKeepWhole struct {
	// Ops are the ops the backend may keep whole (exir: the original ATen
	// op of each partitioner config, get_original_aten).
	Ops []ir.Op
	// Keep reports whether one node of Ops is kept whole; it applies the
	// partitioner's own per-node constraints (exir: the filter function,
	// the config's check_constraints), so a node kept whole is one the
	// partitioner claims unless a config is excluded.
	Keep func(n *ir.Node) bool
}

var etKeepWhole = map[string]EtKeepWhole{}

// RegisterEtKeepWhole declares backend's keep-whole ops; decompose-to-core
// leaves the nodes k.Keep accepts whole in that backend's pipeline, and
// decompose-unclaimed decomposes those the partitioner then left outside
// every delegate. Every op must be valid; registering a backend
// twice panics (a programming error, found at init).
func RegisterEtKeepWhole(backend string, k EtKeepWhole) {
	if _, dup := etKeepWhole[backend]; dup {
		panic(fmt.Sprintf("passes: keep-whole ops of %s registered twice", backend))
	}
	if k.Keep == nil {
		panic(fmt.Sprintf("passes: keep-whole ops of %s without a Keep function", backend))
	}
	for _, op := range k.Ops {
		if !op.Valid() {
			panic(fmt.Sprintf("passes: keep-whole ops of %s: invalid op %d", backend, int32(op)))
		}
	}
	k.Ops = append([]ir.Op(nil), k.Ops...)
	sort.Slice(k.Ops, func(i, j int) bool { return k.Ops[i].String() < k.Ops[j].String() })
	etKeepWhole[backend] = k
}

// EtKeepWholeOps lists the ops backend keeps whole, sorted (none for a
// backend that declared nothing).
func EtKeepWholeOps(backend string) []ir.Op {
	return append([]ir.Op(nil), etKeepWhole[backend].Ops...)
}

func init() {
	RegisterEtKeepWhole(xnnpackBackend, EtKeepWhole{Ops: xnnpack.OpsKeptWhole(), Keep: xnnpack.OpsToNotDecompose})
}

const xnnpackBackend = "executorch.xnnpack"

// etKeepWholeFor returns the keep-whole declaration of the running
// export's backend (the zero value when it has none).
func etKeepWholeFor(c *pm.Ctx) EtKeepWhole {
	if c == nil || c.Export() == nil {
		return EtKeepWhole{}
	}
	return etKeepWhole[c.Export().Backend()]
}
