package passes

import (
	"fmt"
	"slices"

	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/ir/sym"
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

A result of data-dependent size (an unbacked symbol the op itself
defines, nonzero's u0) has no size value before the op: its allocation
takes the symbol's upper bound from the program's range constraints and
keeps the symbolic type, so plan-memory reserves the bound and the emitter
writes the tensor DYNAMIC_BOUND; the out kernel resizes it, as exir plans
such outputs. Without a finite bound the export is refused.

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
//
// A dim of a data-dependent size (an unbacked symbol that at itself
// defines, nonzero's u0) has no value before at: it is allocated at its
// upper bound (the program's range of the symbol), and the allocation keeps
// the symbolic type, so plan-memory gives it upper-bound storage and the
// emitter writes it DYNAMIC_BOUND; the out kernel resizes it (ExecuTorch's
// nonzero.out does), as exir plans such outputs.
func etlAlloc(b *ir.Builder, at *ir.Node, t *ir.TensorType) (*ir.Value, error) {
	shape, bounded, err := etlBoundedShape(at, t)
	if err != nil {
		return nil, err
	}
	size, err := etShapeArg(b, at, shape)
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
	if bounded {
		bt := *n.Result().Tensor()
		bt.Shape = append([]sym.Expr(nil), t.Shape...)
		n.Result().Type = &bt
	}
	return n.Result(), nil
}

// etlBoundedShape is t's shape with every dim that holds a symbol defined
// by at itself (no graph input, SymInt or tensor dim before at has it)
// replaced by the dim's upper bound; bounded reports whether any was. Such
// a symbol must be unbacked (a data-dependent size) with a finite bound.
func etlBoundedShape(at *ir.Node, t *ir.TensorType) (shape []sym.Expr, bounded bool, err error) {
	var fresh map[string]bool
	for _, d := range t.Shape {
		if _, ok := d.Const(); ok {
			continue
		}
		if fresh == nil {
			fresh = etlSymbolsDefinedBy(at)
		}
		break
	}
	if len(fresh) == 0 {
		return t.Shape, false, nil
	}
	env := at.Graph.Program.Env
	shape = append([]sym.Expr(nil), t.Shape...)
	for i, d := range shape {
		var own []string
		for _, s := range d.Symbols() {
			if fresh[s] {
				own = append(own, s)
			}
		}
		if len(own) == 0 {
			continue
		}
		for _, s := range own {
			if env == nil || !env.IsUnbacked(s) {
				return nil, false, fmt.Errorf("dim %d (%s): symbol %s first appears in this result and is not a data-dependent (unbacked) size", i, d, s)
			}
		}
		var ub sym.Bound
		if env != nil {
			ub = env.UpperBound(d)
		}
		if env == nil || !ub.IsFinite() {
			return nil, false, fmt.Errorf("dim %d (%s) is a data-dependent size without a finite upper bound in the program's range constraints, so it cannot be given planned memory", i, d)
		}
		shape[i] = sym.Const(ub.V)
		bounded = true
	}
	return shape, bounded, nil
}

// etlSymbolsDefinedBy are the symbols of at's result types that no graph
// input and no result of an earlier node of at's graph holds.
func etlSymbolsDefinedBy(at *ir.Node) map[string]bool {
	seen := map[string]bool{}
	note := func(v *ir.Value) {
		switch t := v.Type.(type) {
		case *ir.SymIntType:
			if t.Expr.IsValid() {
				for _, s := range t.Expr.Symbols() {
					seen[s] = true
				}
			}
		case *ir.TensorType:
			for _, d := range t.Shape {
				for _, s := range d.Symbols() {
					seen[s] = true
				}
			}
		}
	}
	g := at.Graph
	for _, in := range g.Inputs {
		note(in)
	}
	for n := g.First(); n != nil && n != at; n = n.Next() {
		for _, r := range n.Results {
			note(r)
		}
	}
	fresh := map[string]bool{}
	for _, r := range at.Results {
		if t := r.Tensor(); t != nil {
			for _, d := range t.Shape {
				for _, s := range d.Symbols() {
					if !seen[s] {
						fresh[s] = true
					}
				}
			}
		}
	}
	return fresh
}

func etlArgIndex(op ir.Op, name string) int {
	for i, a := range op.Info().Schema.Args {
		if a.Name == name {
			return i
		}
	}
	return -1
}
