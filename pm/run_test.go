package pm_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/pm"
)

// runCatalog has passes in dynamo.state-cleanup that misbehave on purpose.
func runCatalog(t *testing.T) *pm.Catalog {
	c := testCatalog()
	add := func(p *pm.Pass) { addPass(t, c, p) }
	// break-order moves the last node to the front: its operand is then
	// defined after it, which only the verifier notices.
	add(testPass("break-order", pm.StageStateCleanup, func(p *ir.Program, c *pm.Ctx) (pm.Result, error) {
		p.Main.Last().MoveBefore(p.Main.First())
		return pm.Result{Changed: true}, nil
	}))
	add(testPass("explode", pm.StageStateCleanup, func(p *ir.Program, c *pm.Ctx) (pm.Result, error) {
		var m map[string]int
		m["boom"]++ // nil map write
		return pm.Result{}, nil
	}))
	add(testPass("reject-add", pm.StageStateCleanup, func(p *ir.Program, c *pm.Ctx) (pm.Result, error) {
		for _, n := range p.Main.Nodes() {
			if n.Op.String() == "aten.add.Tensor" {
				return pm.Result{}, n.Errorf("cannot handle alpha=%d", n.Arg("alpha").Int)
			}
		}
		return pm.Result{}, nil
	}))
	neg := testPass("neg-outputs", pm.StageStateCleanup, func(p *ir.Program, c *pm.Ctx) (pm.Result, error) {
		b := ir.NewBuilder(p.Main)
		outs := p.Main.Outputs()
		for i, o := range outs {
			v, err := b.Value(ir.MustLookupOp("aten.neg.default"), o)
			if err != nil {
				return pm.Result{}, err
			}
			p.Main.SetOutput(i, ir.ValueArg(v))
			c.Stat("negated", 1)
			c.Fired(v.Def, "output "+o.Value.Name)
			if c.BoolOption("loud") {
				c.Debugf(v.Def, "negated output %d", i)
			}
		}
		return pm.Result{Changed: len(outs) > 0}, nil
	})
	neg.ID = "DYN-S99"
	neg.Repeatable = true
	neg.Options = []pm.OptionSpec{pm.BoolOption("loud", false, "debug every output")}
	add(neg)
	nothing := testPass("nothing", pm.StageStateCleanup, noop)
	nothing.Repeatable = true
	add(nothing)
	req := testPass("must-stay", pm.StageStateCleanup, noop)
	req.Required = true
	add(req)
	needs := testPass("needs-nothing", pm.StageStateCleanup, noop)
	needs.Requires = []pm.Requirement{{After: "nothing", Why: "test edge"}}
	add(needs)
	return c
}

func pipeline(t *testing.T, c *pm.Catalog, passes string) *pm.Pipeline {
	t.Helper()
	pl, err := c.ParsePipeline("dynamo: dynamo.state-cleanup(" + passes + ")")
	require.NoError(t, err)
	return pl
}

func TestVerifyEachCatchesBrokenPass(t *testing.T) {
	c := runCatalog(t)
	pl := pipeline(t, c, "nothing, break-order, neg-outputs")
	// Without verification the damage goes unnoticed.
	_, err := pm.Run(parse(t, progText), pl, nil, pm.Config{})
	require.NoError(t, err)

	p := parse(t, progText)
	rep, err := pm.Run(p, pl, nil, pm.Config{VerifyEach: true})
	require.Error(t, err)
	var pe *pm.PassError
	require.True(t, errors.As(err, &pe))
	assert.Equal(t, "break-order", pe.Pass)
	assert.Equal(t, "forward", pe.Graph)
	assert.Equal(t, "%s (aten.relu.default)", pe.Node)
	assert.True(t, strings.HasPrefix(err.Error(), `pass "break-order": node %s (aten.relu.default) in graph forward: verifier after pass: `), err.Error())
	var ve *ir.VerifyError
	assert.True(t, errors.As(err, &ve), "the verifier's error stays reachable")
	require.Len(t, rep.Passes, 2, "the report covers the failing pass and stops")
	assert.True(t, rep.Passes[1].Changed)

	// A program that is broken before the first pass is refused up front.
	_, err = pm.Run(p, pl, nil, pm.Config{VerifyEach: true})
	require.ErrorContains(t, err, "pm: run: input program fails verification")
}

func TestPanicBecomesPassError(t *testing.T) {
	c := runCatalog(t)
	_, err := pm.Run(parse(t, progText), pipeline(t, c, "nothing, explode"), nil, pm.Config{})
	var pe *pm.PassError
	require.True(t, errors.As(err, &pe), "%T %v", err, err)
	assert.Equal(t, "explode", pe.Pass)
	assert.Equal(t, `pass "explode": panic: assignment to entry in nil map`, err.Error())
	assert.Contains(t, string(pe.Stack), "pm_test.runCatalog")
	var re interface{ RuntimeError() }
	assert.True(t, errors.As(err, &re), "the runtime error is wrapped")
}

func TestPanicInsideFixNamesFixAndNode(t *testing.T) {
	c := testCatalog()
	mustAdd(t, c.AddNodeFix(&pm.NodeFix{Name: "fix-boom", Doc: "d", Backend: pm.BackendONNX, Targets: []ir.Op{ir.OpAtenAddTensor},
		Fix: func(n *ir.Node, c *pm.Ctx) (bool, error) { panic("boom") }}))
	pl, err := c.Build(pm.TargetONNX, "")
	require.NoError(t, err)
	_, err = pm.Run(parse(t, progText), pl, nil, pm.Config{})
	assert.EqualError(t, err, `pass "onnx-node-fixes": node %a (aten.add.Tensor) in graph forward: node-fix "fix-boom": panic: boom`)
	var pe *pm.PassError
	require.True(t, errors.As(err, &pe))
	assert.Equal(t, "fix-boom", pe.Entry)
	assert.Equal(t, pm.EntryNodeFix, pe.EntryKind)
}

func TestReturnedNodeErrorIsLocated(t *testing.T) {
	c := runCatalog(t)
	_, err := pm.Run(parse(t, progText), pipeline(t, c, "reject-add"), nil, pm.Config{})
	assert.EqualError(t, err, `pass "reject-add": node %a (aten.add.Tensor) in graph forward: cannot handle alpha=1`)
	var ne *ir.NodeError
	assert.True(t, errors.As(err, &ne))
}

func TestReproducerWrittenAndLoadable(t *testing.T) {
	c := runCatalog(t)
	pl := pipeline(t, c, "neg-outputs, explode, nothing")
	path := filepath.Join(t.TempDir(), "repro.fxir")
	p := parse(t, progText)
	_, err := pm.Run(p, pl, nil, pm.Config{Reproducer: path})
	require.Error(t, err)
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(string(data), "# fxport reproducer\n# pipeline: dynamo: dynamo.state-cleanup(neg-outputs, explode, nothing)\n# failed-pass: explode\n# error: \"pass \\\"explode\\\": panic: assignment to entry in nil map\"\n"), string(data))

	gotPl, prog, failed, err := c.LoadReproducer(path)
	require.NoError(t, err)
	assert.Equal(t, "explode", failed)
	assert.Equal(t, pl.String(), gotPl.String())
	assert.Equal(t, ir.Print(p), ir.Print(prog), "the IR is the program just before the failed pass")
	assert.Contains(t, ir.Print(prog), "aten.neg.default", "neg-outputs had run")

	// Replaying the failed pass fails the same way.
	_, err = pm.Run(prog, gotPl.Only(failed), nil, pm.Config{})
	assert.EqualError(t, err, `pass "explode": panic: assignment to entry in nil map`)

	// Not a reproducer / a bad one.
	bad := filepath.Join(t.TempDir(), "bad")
	require.NoError(t, os.WriteFile(bad, []byte(progText), 0o644))
	_, _, _, err = c.LoadReproducer(bad)
	require.ErrorContains(t, err, "not a reproducer")
	_, _, _, err = pm.LoadReproducer(path) // Default lacks the test passes
	require.ErrorContains(t, err, `unknown pass "neg-outputs"`)
}

func TestDisable(t *testing.T) {
	c := runCatalog(t)
	pl := pipeline(t, c, "nothing, neg-outputs, must-stay, needs-nothing")
	_, err := pm.Run(parse(t, progText), pl, nil, pm.Config{Disable: []string{"must-stay"}})
	assert.EqualError(t, err, `pm: run: cannot disable required pass "must-stay"`)
	_, err = pm.Run(parse(t, progText), pl, nil, pm.Config{Disable: []string{"nothing"}})
	assert.EqualError(t, err, `pm: run: cannot disable pass "nothing": pass "needs-nothing" requires it (test edge)`)
	_, err = pm.Run(parse(t, progText), pl, nil, pm.Config{Disable: []string{"nope"}})
	assert.EqualError(t, err, `pm: run: cannot disable pass "nope": not in the pipeline`)

	p := parse(t, progText)
	rep, err := pm.Run(p, pl, nil, pm.Config{Disable: []string{"neg-outputs"}})
	require.NoError(t, err)
	assert.Equal(t, progText, ir.Print(p))
	assert.True(t, rep.Passes[1].Disabled)
	assert.Contains(t, rep.String(), "  2 neg-outputs [transform, dynamo.state-cleanup] disabled\n")

	// The patch and node-fix drivers are required too.
	pl2, err := patchCatalog(t).Build(pm.TargetONNX, "")
	require.NoError(t, err)
	_, err = pm.Run(parse(t, progText), pl2, nil, pm.Config{Disable: []string{"apply-torch-patches"}})
	assert.EqualError(t, err, `pm: run: cannot disable required pass "apply-torch-patches"`)
}

func TestReportText(t *testing.T) {
	c := runCatalog(t)
	pl := pipeline(t, c, "nothing, neg-outputs{loud=true}, neg-outputs")
	var debug bytes.Buffer
	rep, err := pm.Run(parse(t, progText), pl, nil, pm.Config{Debug: &debug, Time: true, Mem: true})
	require.NoError(t, err)
	assert.Equal(t, `pipeline dynamo: dynamo.state-cleanup(nothing, neg-outputs{loud=true}, neg-outputs)
  1 nothing [transform, dynamo.state-cleanup] unchanged
  2 neg-outputs [transform, dynamo.state-cleanup] changed
      negated = 2
  3 neg-outputs [transform, dynamo.state-cleanup] changed
      negated = 2
fired neg-outputs pass "neg-outputs" [DYN-S99] on %neg (aten.neg.default) in graph forward: output s
fired neg-outputs pass "neg-outputs" [DYN-S99] on %neg_1 (aten.neg.default) in graph forward: output r
fired neg-outputs pass "neg-outputs" [DYN-S99] on %neg_2 (aten.neg.default) in graph forward: output neg
fired neg-outputs pass "neg-outputs" [DYN-S99] on %neg_3 (aten.neg.default) in graph forward: output neg_1
`, rep.String())
	assert.Equal(t, "neg-outputs: %neg (aten.neg.default): negated output 0\nneg-outputs: %neg_1 (aten.neg.default): negated output 1\n", debug.String())
	assert.Positive(t, rep.Passes[1].Alloc)
	assert.Positive(t, rep.Passes[1].Duration)
	assert.Contains(t, rep.Text(true), " time=")
	assert.Equal(t, int64(2), rep.Passes[2].Stat("negated"))
}

func TestDumps(t *testing.T) {
	c := runCatalog(t)
	pl := pipeline(t, c, "nothing, neg-outputs, nothing")
	dir := t.TempDir()
	var out bytes.Buffer
	_, err := pm.Run(parse(t, progText), pl, nil, pm.Config{PrintBefore: []string{"neg-outputs"}, PrintAfter: []string{"all"},
		PrintAfterChange: true, Out: &out, DumpDir: dir})
	require.NoError(t, err)
	// Before neg-outputs, and after it (the only pass that changed the IR).
	assert.Equal(t, 2, strings.Count(out.String(), "# IR dump"))
	assert.Contains(t, out.String(), "# IR dump before pass \"neg-outputs\" (stage dynamo.state-cleanup)\n"+progText)
	assert.Contains(t, out.String(), "# IR dump after pass \"neg-outputs\" (stage dynamo.state-cleanup)\n")
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	assert.Equal(t, []string{pm.DumpFileName("forward", 1, "neg-outputs"), pm.DumpFileName("forward", 2, "neg-outputs")}, names)
	assert.Equal(t, "forward_001__neg-outputs.ir", names[0])
	// Dump files parse back as IR.
	data, err := os.ReadFile(filepath.Join(dir, names[1]))
	require.NoError(t, err)
	_, err = ir.Parse(data, names[1])
	require.NoError(t, err)

	// Without PrintAfterChange every selected pass is dumped.
	out.Reset()
	_, err = pm.Run(parse(t, progText), pl, nil, pm.Config{PrintAfter: []string{"nothing"}, Out: &out})
	require.NoError(t, err)
	assert.Equal(t, 2, strings.Count(out.String(), "# IR dump after pass \"nothing\""))
	_, err = pm.Run(parse(t, progText), pl, nil, pm.Config{PrintAfter: []string{"nope"}, Out: &out})
	assert.EqualError(t, err, `pm: run: cannot print around pass "nope": not in the pipeline`)
}

// OnDump receives the dumps as values, in order, and alone writes nothing
// to stderr (Out stays nil).
func TestOnDump(t *testing.T) {
	c := runCatalog(t)
	pl := pipeline(t, c, "nothing, neg-outputs, nothing")
	var got []pm.Dump
	_, err := pm.Run(parse(t, progText), pl, nil, pm.Config{PrintBefore: []string{"neg-outputs"}, PrintAfterChange: true,
		OnDump: func(d pm.Dump) { got = append(got, d) }})
	require.NoError(t, err)
	require.Len(t, got, 2)
	assert.Equal(t, pm.Dump{Seq: 1, When: "before", Pass: "neg-outputs", Stage: "dynamo.state-cleanup", IR: progText}, got[0])
	assert.Equal(t, 2, got[1].Seq)
	assert.Equal(t, "after", got[1].When)
	assert.NotEqual(t, progText, got[1].IR)
	_, err = ir.Parse([]byte(got[1].IR), "after")
	require.NoError(t, err)

	// OnPass: every enabled instance as it starts.
	var started []string
	_, err = pm.Run(parse(t, progText), pl, nil, pm.Config{
		OnPass: func(i, n int, name string) { started = append(started, strconv.Itoa(i)+"/"+strconv.Itoa(n)+" "+name) }})
	require.NoError(t, err)
	assert.Equal(t, []string{"1/3 nothing", "2/3 neg-outputs", "3/3 nothing"}, started)
}

func TestRunChecksExportAndPipeline(t *testing.T) {
	c := runCatalog(t)
	pl := pipeline(t, c, "nothing")
	exp, err := pm.NewExport(pm.TargetONNX, "", pm.WithCatalog(c))
	require.NoError(t, err)
	_, err = pm.Run(parse(t, progText), pl, exp, pm.Config{})
	assert.EqualError(t, err, "pm: run: export is for onnx/onnx, pipeline for dynamo/all")
	exp, err = pm.NewExport(pm.TargetDynamo, "")
	require.NoError(t, err)
	_, err = pm.Run(parse(t, progText), pl, exp, pm.Config{})
	assert.EqualError(t, err, "pm: run: export and pipeline use different catalogs")
	bad := &pm.Pipeline{Target: pm.TargetDynamo, Backend: pm.BackendAll, Catalog: c,
		Groups: []pm.Group{{Stage: "state-cleanup", Instances: []pm.Instance{{Name: "nope"}}}}}
	_, err = pm.Run(parse(t, progText), bad, nil, pm.Config{})
	assert.EqualError(t, err, `pm: invalid pipeline: unknown pass "nope" in stage dynamo.state-cleanup`)
}

// Shuffling reorders independent nodes reproducibly and keeps the program valid.
func TestShuffle(t *testing.T) {
	const wide = `graph forward(%x: f32[4]) {
  %a: f32[4] = aten.neg.default(%x)
  %b: f32[4] = aten.sin.default(%x)
  %c: f32[4] = aten.relu.default(%x)
  %d: f32[4] = aten.neg.default(%a)
  %e: f32[4] = aten.sin.default(%b)
  %f: f32[4] = aten.relu.default(%c)
  %g: f32[4] = aten.detach_.default(%x)
  %h: f32[4] = aten.add.Tensor(%d, %e)
  %i: f32[4] = aten.add.Tensor(%h, %f)
  return %i
}
`
	c := runCatalog(t)
	pl := pipeline(t, c, "nothing")
	texts := map[string]bool{}
	for seed := uint64(1); seed <= 8; seed++ {
		p1, p2 := parse(t, wide), parse(t, wide)
		_, err := pm.Run(p1, pl, nil, pm.Config{VerifyEach: true, Shuffle: seed})
		require.NoError(t, err)
		_, err = pm.Run(p2, pl, nil, pm.Config{VerifyEach: true, Shuffle: seed})
		require.NoError(t, err)
		assert.Equal(t, ir.Print(p1), ir.Print(p2), "seed %d reproduces", seed)
		// The in-place detach_ is a barrier: nothing crosses it.
		before, after, _ := strings.Cut(ir.Print(p1), "aten.detach_.default")
		for _, n := range []string{"%a:", "%b:", "%c:", "%d:", "%e:", "%f:"} {
			assert.Contains(t, before, n)
		}
		assert.Contains(t, after, "%h:")
		texts[ir.Print(p1)] = true
	}
	assert.Greater(t, len(texts), 1, "some seed changes the order")
}
