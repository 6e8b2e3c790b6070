package passes

import (
	"slices"

	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/pm"
)

// ToOutVariants converts functional ops to their out variants, each out
// tensor supplied by a memory.alloc node (ExecuTorch's ToOutVarPass; ET-P37
// invariant).
var ToOutVariants = etlLowering(&pm.Pass{
	Name: etlOutVariantsName,
	Doc: `convert functional ops to their .out variants writing into memory.alloc tensors

Every functional op with an out twin in the op table (OpInfo.Out) becomes
that twin. Each out argument is a new node

  %alloc = memory.alloc.default([sizes], dtype=…, dim_order=[…])

placed just before the op: the tensor the memory planner gives storage to.
Its size list is the result's shape (SymInts stay symbolic: a symbolic dim
is a value of the graph, and compound expressions become executorch_prim
arithmetic), its dtype and device are the result's, and its dim order is the
result's, size-one dims canonicalized (ET-P40). The out op's results are the
out tensors (same storage), so users keep reading the op's results. An op
with several results gets one allocation per result, bound to the out
arguments in order (native_layer_norm.out's out0..out2, the quantized
library's choose_qparams.Tensor_out: scale_out float64, zero_point_out
int64).

Arguments of the functional op the out variant lacks are dropped only when
the out tensor carries them (dtype, layout, device, pin_memory,
memory_format); otherwise the op is kept functional. Ops without an out
twin in the op table are kept functional and counted in the statistic
"no-out-variant" (the emitter reports them as missing kernels). In-place
ops, symbolic scalar ops, higher-order ops and memory.alloc are left alone.

Invariant (ET-P37): fxport never removes clones, so a clone feeding a graph
output keeps its own out tensor and never aliases its input.`,
	Run: runToOutVariants,
})

const etlOutVariantsName = "to-out-variants"

// OpMemoryAlloc is the allocation op the out-variant lowering inserts.
var OpMemoryAlloc = ir.OpMemoryAlloc

// etlCarriedByOut are functional arguments an out variant may drop because
// the out tensor's type carries them.
var etlCarriedByOut = map[string]bool{"dtype": true, "layout": true, "device": true, "pin_memory": true, "memory_format": true}

func runToOutVariants(p *ir.Program, c *pm.Ctx) (pm.Result, error) {
	changed := false
	err := etlEachNode(p, func(n *ir.Node) error {
		if n.Op == OpMemoryAlloc || !n.Op.Has(ir.PropFunctional) || n.Op.Has(ir.PropSymbolic) || n.Op.Has(ir.PropHigherOrder) {
			return nil
		}
		if len(n.Results) == 0 || n.Results[0].Tensor() == nil {
			return nil
		}
		out := n.Op.OutTwin()
		if !out.Valid() {
			c.Stat("no-out-variant", 1)
			c.Debugf(n, "no out variant in the op table")
			return nil
		}
		done, err := etlToOut(n, out, c)
		changed = changed || done
		return err
	})
	if err != nil {
		return pm.Result{}, err
	}
	// Symbolic sizes may have introduced Python-level arithmetic.
	err = etlEachNode(p, func(n *ir.Node) error {
		if !etlIsPySymOp(n) || !slices.Contains(n.Provenance(), etlOutVariantsName) {
			return nil
		}
		ok, why, err := etlLowerSymOp(n, c)
		if err == nil && !ok {
			err = n.Errorf("%s: size arithmetic without an executorch_prim kernel: %s", etlOutVariantsName, why)
		}
		return err
	})
	return pm.Result{Changed: changed}, err
}

// etlToOut rewrites n into out; false when an argument cannot be carried.
func etlToOut(n *ir.Node, out ir.Op, c *pm.Ctx) (bool, error) {
	os := &out.Info().Schema
	have := map[string]bool{}
	var outNames []string
	for _, a := range os.Args {
		have[a.Name] = true
		if a.Mutates() {
			outNames = append(outNames, a.Name)
		}
	}
	kw := etlNamedArgs(n)
	for _, name := range etlSortedKeys(kw) {
		a := kw[name]
		if have[name] {
			continue
		}
		if !etlCarriedByOut[name] && !n.IsDefault(etlArgIndex(n.Op, name)) {
			c.Stat("out-variant-lacks-argument", 1)
			c.Debugf(n, "out variant %s has no argument %s", out, name)
			return false, nil
		}
		if name == "device" && a.Kind == ir.ArgDevice && !etlIsCPUDevice(a.Str) {
			return false, n.Errorf("%s: %s on device %q: the portable out variant %s runs on the CPU only (device copies around a CUDA partition are not implemented)", etlOutVariantsName, n.Op, a.Str, out)
		}
		delete(kw, name)
	}
	if etlListOut(os, outNames) {
		return etlToListOut(n, out, outNames[0], kw, c)
	}
	if len(outNames) != len(n.Results) {
		c.Stat("out-variant-arity", 1)
		return false, nil
	}
	b := ir.NewBuilder(n.Graph)
	b.SetInsertBefore(n)
	b.Pass = etlOutVariantsName
	meta := n.Meta.Clone()
	b.Meta = &meta
	for i, r := range n.Results {
		t := r.Tensor()
		if t == nil {
			return false, nil
		}
		alloc, err := etlAlloc(b, n, t)
		if err != nil {
			return false, n.Errorf("%s: allocating result %d: %v", etlOutVariantsName, i, err)
		}
		kw[outNames[i]] = ir.ValueArg(alloc)
	}
	nn, err := b.CallKw(out, nil, kw)
	if err != nil {
		return false, n.Errorf("%s: building %s: %v", etlOutVariantsName, out, err)
	}
	from := n.Op.String()
	if err := etlTakeOver(n, nn); err != nil {
		return false, err
	}
	c.Fired(nn, from+" → "+out.String())
	return true, nil
}

// etlAlloc builds memory.alloc for a tensor of type t before the builder's
// insertion point.
func etlAlloc(b *ir.Builder, at *ir.Node, t *ir.TensorType) (*ir.Value, error) {
	size, err := etShapeArg(b, at, t.Shape)
	if err != nil {
		return nil, err
	}
	order := EtCanonicalDimOrder(t)
	ints := make([]int64, len(order))
	for i, d := range order {
		ints[i] = int64(d)
	}
	kw := map[string]ir.Arg{"dtype": ir.DTypeArg(t.DType), "dim_order": ir.IntsArg(ints...)}
	if t.Device != "" {
		kw["device"] = ir.DeviceArg(t.Device)
	}
	n, err := b.CallKw(OpMemoryAlloc, []ir.Arg{size}, kw)
	if err != nil {
		return nil, err
	}
	return n.Result(), nil
}

func etlArgIndex(op ir.Op, name string) int {
	for i, a := range op.Info().Schema.Args {
		if a.Name == name {
			return i
		}
	}
	return -1
}
