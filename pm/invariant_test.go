package pm_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fxport/fxport/pm"
)

func goodInvariant() *pm.Invariant {
	return &pm.Invariant{ID: "ONNX-IR01", Name: "topk-always-sorted", Doc: "TopK is emitted with sorted=1\n\nLonger text.",
		Backend: pm.BackendONNX, Stage: pm.StageEmit,
		Test:  "targets/onnx.TestInvariantsCatchViolations, tests.TestGolden/testdata/lowering/et_lower_plan_memory",
		Where: "targets/onnx/invariants.go"}
}

func goodDeclined() *pm.Declined {
	return &pm.Declined{ID: "ONNX-P14", Name: "masked-mean-zero-rows", Backend: pm.BackendONNX,
		Stage: pm.StageTorchPatches, Reason: "torch semantics are kept\n\nDetails."}
}

func TestInvariantAndDeclinedListed(t *testing.T) {
	c := testCatalog()
	mustAdd(t, c.AddInvariant(goodInvariant()))
	mustAdd(t, c.AddDeclined(goodDeclined()))
	var got []string
	for _, e := range c.List() {
		if e.Kind == pm.EntryPass {
			continue
		}
		got = append(got, e.Kind.String()+" "+e.Backend+" "+e.Stage+" "+e.ID+" "+e.Name+" | "+e.Title+" | "+e.Test+" | "+e.Where)
	}
	assert.Equal(t, []string{
		"invariant onnx emit ONNX-IR01 topk-always-sorted | TopK is emitted with sorted=1 | " +
			"targets/onnx.TestInvariantsCatchViolations, tests.TestGolden/testdata/lowering/et_lower_plan_memory | targets/onnx/invariants.go",
		"declined onnx torch-patches ONNX-P14 masked-mean-zero-rows | torch semantics are kept |  | ",
	}, got)
	v, ok := c.Invariants.Lookup("topk-always-sorted")
	require.True(t, ok)
	assert.Equal(t, []string{"targets/onnx.TestInvariantsCatchViolations", "tests.TestGolden/testdata/lowering/et_lower_plan_memory"}, v.Tests())
	assert.Len(t, c.Declined.ByID("ONNX-P14"), 1)
	assert.Equal(t, "invariant", pm.EntryInvariant.String())
	assert.Equal(t, "declined", pm.EntryDeclined.String())
}

func TestInvariantDeclarationErrors(t *testing.T) {
	mod := func(f func(v *pm.Invariant)) *pm.Invariant { v := goodInvariant(); f(v); return v }
	for want, v := range map[string]*pm.Invariant{
		`name must be kebab-case`:             mod(func(v *pm.Invariant) { v.Name = "TopK_sorted" }),
		`malformed catalog ID "onnx-ir01"`:    mod(func(v *pm.Invariant) { v.ID = "onnx-ir01" }),
		`invariants need a catalog ID`:        mod(func(v *pm.Invariant) { v.ID = "" }),
		`empty Doc`:                           mod(func(v *pm.Invariant) { v.Doc = "" }),
		`unknown backend "tensorrt"`:          mod(func(v *pm.Invariant) { v.Backend = "tensorrt" }),
		`stage "lowering" is not a stage of`:  mod(func(v *pm.Invariant) { v.Stage = pm.StageLowering }),
		`no Stage`:                            mod(func(v *pm.Invariant) { v.Stage = "" }),
		`no Test names the Go test`:           mod(func(v *pm.Invariant) { v.Test = " , " }),
		`malformed test reference "TestFoo"`:  mod(func(v *pm.Invariant) { v.Test = "TestFoo" }),
		`malformed test reference "onnx.Foo"`: mod(func(v *pm.Invariant) { v.Test = "targets/onnx.TestX, onnx.Foo" }),
		`empty Where`:                         mod(func(v *pm.Invariant) { v.Where = "" }),
	} {
		err := testCatalog().AddInvariant(v)
		if assert.Error(t, err, want) {
			assert.Contains(t, err.Error(), want)
		}
	}
}

func TestDeclinedDeclarationErrors(t *testing.T) {
	mod := func(f func(d *pm.Declined)) *pm.Declined { d := goodDeclined(); f(d); return d }
	for want, d := range map[string]*pm.Declined{
		`name must be kebab-case`:                                mod(func(d *pm.Declined) { d.Name = "Masked mean" }),
		`declined "masked-mean-zero-rows": empty Reason`:         mod(func(d *pm.Declined) { d.Reason = "" }),
		`a declined row needs its catalog ID`:                    mod(func(d *pm.Declined) { d.ID = "" }),
		`malformed catalog ID "P14"`:                             mod(func(d *pm.Declined) { d.ID = "P14" }),
		`unknown backend "executorch.tpu"`:                       mod(func(d *pm.Declined) { d.Backend = "executorch.tpu" }),
		`stage "fx-program-fixes" is not a stage of target onnx`: mod(func(d *pm.Declined) { d.Stage = pm.StageFXProgramFixes }),
	} {
		err := testCatalog().AddDeclined(d)
		if assert.Error(t, err, want) {
			assert.Contains(t, err.Error(), want)
		}
	}
}

func TestInvariantNamesClaimedAcrossRegistries(t *testing.T) {
	c := testCatalog()
	mustAdd(t, c.AddInvariant(goodInvariant()))
	d := goodDeclined()
	d.Name = "topk-always-sorted"
	err := c.AddDeclined(d)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `name already used by a invariant`)
	v := goodInvariant()
	v.Name = "dce"
	err = c.AddInvariant(v)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `"dce": name already used by a pass`)
	err = c.AddInvariant(goodInvariant())
	require.Error(t, err)
}

func TestValidTestRef(t *testing.T) {
	for ref, want := range map[string]bool{
		"targets/onnx.TestIONamingDisambiguation":                   true,
		"pm.TestNodeFixDriverInstances":                             true,
		"tests.TestGolden/testdata/lowering/et_lower_dim_order_ops": true,
		"targets/executorch/plan.TestAllocFlags":                    true,
		"TestAllocFlags":                                            false,
		"plan.Allocflags":                                           false,
		"Plan.TestAllocFlags":                                       false,
		"":                                                          false,
	} {
		assert.Equal(t, want, pm.ValidTestRef(ref), ref)
	}
}

func TestRegisterInvariantAndDeclinedPanic(t *testing.T) {
	assert.Panics(t, func() { pm.RegisterInvariant(&pm.Invariant{Name: "x"}) })
	assert.Panics(t, func() { pm.RegisterDeclined(&pm.Declined{Name: "x"}) })
}
