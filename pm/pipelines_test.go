package pm_test

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/pm"
)

// A registered pass that no table names fails Build, naming the pass; so
// does a patch missing from PatchOrder.
func TestRegisteredButNotInATable(t *testing.T) {
	c := testCatalog()
	mustAdd(t, c.AddPass(testPass("stray", pm.StageStateCleanup, noop)))
	_, err := c.Build(pm.TargetDynamo, "")
	require.ErrorContains(t, err, `pass "stray" (stage state-cleanup) is registered but in no pipeline table`)

	c = testCatalog()
	mustAdd(t, c.AddPatch(detachPatch("stray-patch", pm.BackendONNX)))
	_, err = c.Build(pm.TargetONNX, "")
	require.ErrorContains(t, err, `patch "stray-patch" is registered but not in PatchOrder`)

	// A stageless utility (dce, test-only passes) needs no row.
	c = testCatalog()
	mustAdd(t, c.AddPass(testPass("utility", "", noop)))
	_, err = c.Build(pm.TargetDynamo, "")
	require.NoError(t, err)
}

// A row whose pass is not registered fails the pipelines holding it only.
func TestRowOfUnlinkedPass(t *testing.T) {
	c := testCatalog()
	c.Tables[2].Rows = append(c.Tables[2].Rows, pm.Row{Stage: pm.StageLowering, Pass: "not-linked", Why: "w"})
	_, err := c.Build(pm.TargetExecuTorch, "executorch.portable")
	require.ErrorContains(t, err, `pass "not-linked" of the executorch pipeline table is not registered`)
	_, err = c.Build(pm.TargetONNX, "")
	require.NoError(t, err)
}

// The table check catches what Go's passOrder check catches: a constraint
// broken by the order of the rows, unknown stages, stages out of order,
// rows without a reason.
func TestTableCheck(t *testing.T) {
	c := testCatalog()
	addPass(t, c, testPass("a", pm.StageStateCleanup, noop))
	addPass(t, c, testPass("b", pm.StageStateCleanup, noop))
	c.Order = []pm.Constraint{{Before: "b", After: "a", Why: "a reads what b writes"}}
	_, err := c.Build(pm.TargetDynamo, "")
	require.ErrorContains(t, err, "dynamo table, backend all: b must run before a (a reads what b writes)")

	c.Order = nil
	c.Tables[0].Rows = append(c.Tables[0].Rows, pm.Row{Stage: pm.StageSignature, Pass: "late", Why: ""})
	_, err = c.Build(pm.TargetDynamo, "")
	require.ErrorContains(t, err, "dynamo table row 4 (late): no Why")
	require.ErrorContains(t, err, "dynamo table row 4 (late): stage signature comes after stage state-cleanup")
}

// Backend-conditional rows: a row for one backend is in that backend's
// pipeline only; idle drivers are left out.
func TestBackendRows(t *testing.T) {
	c := testCatalog()
	p := testPass("xnn-only", pm.StageLowering, noop)
	p.Backends = []string{pm.BackendExecuTorch}
	mustAdd(t, c.AddPass(p))
	c.Tables[2].Rows = append(c.Tables[2].Rows, pm.Row{Stage: pm.StageLowering, Pass: "xnn-only", Backends: []string{"executorch.xnnpack"}, Why: "w"})
	pl, err := c.Build(pm.TargetExecuTorch, "executorch.xnnpack")
	require.NoError(t, err)
	assert.Equal(t, "executorch.xnnpack: executorch.lowering(xnn-only)", pl.String())
	pl, err = c.Build(pm.TargetExecuTorch, "executorch.cuda")
	require.NoError(t, err)
	assert.Equal(t, "executorch.cuda:", pl.String())
}

// Registration order does not matter: the same entries registered in any
// order give the same pipelines, listings and patch order.
func TestRegistrationOrderIrrelevant(t *testing.T) {
	fix := func(name, backend string, id string) *pm.NodeFix {
		return &pm.NodeFix{ID: id, Name: name, Doc: "d", Backend: backend, Targets: []ir.Op{ir.OpAtenRelu},
			Fix: func(*ir.Node, *pm.Ctx) (bool, error) { return false, nil }}
	}
	build := func(perm []int) (string, string) {
		c := testCatalog()
		c.PatchOrder = []pm.PatchRow{{Patch: "p-second"}, {Patch: "p-first"}}
		for _, n := range []string{"one", "two", "three"} {
			addRow(c, pm.StageStateCleanup, n)
		}
		entries := []pm.Entry{
			testPass("one", pm.StageStateCleanup, noop), testPass("two", pm.StageStateCleanup, noop),
			testPass("three", pm.StageStateCleanup, noop),
			detachPatch("p-first", pm.BackendONNX), reluPatch("p-second", pm.BackendONNX),
			fix("fx-b", pm.BackendONNX, "ONNX-FX02"), fix("fx-a", pm.BackendExecuTorch, "ET-NF01"),
		}
		for _, i := range perm {
			mustAdd(t, c.Add(entries[i]))
		}
		pls, err := c.BuildAll()
		require.NoError(t, err)
		var out []string
		for _, pl := range pls {
			out = append(out, pl.String())
		}
		exp, err := pm.NewExport(pm.TargetONNX, "", pm.WithCatalog(c))
		require.NoError(t, err)
		out = append(out, strings.Join(exp.PatchNames(), ","))
		var list []string
		for _, e := range c.List() {
			list = append(list, e.Name)
		}
		return strings.Join(out, "\n"), strings.Join(list, ",")
	}
	want, wantList := build([]int{0, 1, 2, 3, 4, 5, 6})
	assert.Contains(t, want, "dynamo: dynamo.state-cleanup(one, two, three)")
	assert.Contains(t, want, "\np-second,p-first")
	r := rand.New(rand.NewPCG(1, 2))
	for range 20 {
		perm := r.Perm(7)
		got, gotList := build(perm)
		assert.Equal(t, want, got, "registration order %v", perm)
		assert.Equal(t, wantList, gotList, "registration order %v", perm)
	}
}

// A catalog's tables are its own: editing them leaves pm.Tables alone.
func TestCatalogTablesAreCopies(t *testing.T) {
	before := len(pm.Tables[0].Rows)
	c := pm.NewCatalog()
	c.Tables[0].Rows = append(c.Tables[0].Rows[:0], pm.Row{Stage: pm.StageSignature, Pass: "x", Why: "w"})
	c.PatchOrder[0].Patch = "changed"
	assert.Len(t, pm.Tables[0].Rows, before)
	assert.Equal(t, "check-capture-steps", pm.Tables[0].Rows[0].Pass)
	assert.NotEqual(t, "changed", pm.PatchOrder[0].Patch)
}
