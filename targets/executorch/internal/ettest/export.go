package ettest

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/fxport/fxport/interp"
	"github.com/fxport/fxport/ir"
	_ "github.com/fxport/fxport/passes" // the executorch pipelines
	"github.com/fxport/fxport/pm"
	"github.com/fxport/fxport/targets/executorch/emit"
	"github.com/fxport/fxport/targets/executorch/pte"
)

// Parse parses IR text; name names it in errors.
func Parse(t testing.TB, src, name string) *ir.Program {
	t.Helper()
	p, err := ir.Parse([]byte(src), name)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// ParseFile reads and parses an IR file.
func ParseFile(t testing.TB, path string) *ir.Program {
	t.Helper()
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return Parse(t, string(src), path)
}

// Lower runs the named executorch backend pipeline on p
// ("executorch.xnnpack"), or the pipeline text when it is not empty, with
// every pass's output verified.
func Lower(t testing.TB, p *ir.Program, backend, text string) {
	t.Helper()
	var pl *pm.Pipeline
	var err error
	if text != "" {
		pl, err = pm.ParsePipeline(text)
	} else {
		pl, err = pm.Build(pm.TargetExecuTorch, backend)
	}
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pm.Run(p, pl, nil, pm.Config{VerifyEach: true}); err != nil {
		t.Fatalf("%s pipeline: %v", backend, err)
	}
}

// XNNPACKExclude is the text of the executorch.xnnpack pipeline with the
// xnnpack-partition option partition-exclude=cfg (the plain pipeline when
// cfg is empty).
func XNNPACKExclude(t testing.TB, cfg string) string {
	t.Helper()
	pl, err := pm.Build(pm.TargetExecuTorch, "executorch.xnnpack")
	if err != nil {
		t.Fatal(err)
	}
	s := pl.String()
	if cfg == "" {
		return s
	}
	const at = "xnnpack-partition"
	i := strings.Index(s, at)
	if i < 0 || strings.HasPrefix(s[i+len(at):], "{") {
		t.Fatalf("no option-free %s in %s", at, s)
	}
	return s[:i+len(at)] + "{partition-exclude=" + cfg + "}" + s[i+len(at):]
}

// Emit emits the lowered p with opts, encodes the .pte and decodes it
// again (name names it in errors); it returns the decoded file and the
// bytes.
func Emit(t testing.TB, p *ir.Program, name string, opts emit.Options) (*pte.File, []byte) {
	t.Helper()
	ef, err := emit.Program(p, opts)
	if err != nil {
		t.Fatalf("emit: %v\n%s", err, ir.Print(p))
	}
	return encode(t, ef, name)
}

// EmitWithData is Emit for a program with external data: it also encodes
// and decodes the .ptd (name + ".ptd"), and returns it and its bytes (nil
// when the program has no external data).
func EmitWithData(t testing.TB, p *ir.Program, name string, opts emit.Options) (*pte.File, *pte.DataFile, []byte) {
	t.Helper()
	ef, data, err := emit.ProgramWithData(p, opts)
	if err != nil {
		t.Fatalf("emit: %v\n%s", err, ir.Print(p))
	}
	f, _ := encode(t, ef, name)
	if len(data) == 0 {
		return f, nil, nil
	}
	db, err := pte.EncodePTDWith(data, emit.PTDOptions)
	if err != nil {
		t.Fatalf("encode %s.ptd: %v", name, err)
	}
	d, err := pte.DecodePTD(name+".ptd", db)
	if err != nil {
		t.Fatalf("decode %s.ptd: %v", name, err)
	}
	return f, d, db
}

func encode(t testing.TB, ef *pte.File, name string) (*pte.File, []byte) {
	t.Helper()
	b, err := pte.Encode(ef)
	if err != nil {
		t.Fatalf("encode %s: %v", name, err)
	}
	f, err := pte.Decode(name, b)
	if err != nil {
		t.Fatalf("decode %s: %v", name, err)
	}
	return f, b
}

// Same compares outputs with the interpreter's: as many, each a tensor of
// the same dtype and shape with every element equal (bit for bit after
// conversion to float64). An output of more than 4 elements with fewer
// than 4 distinct values fails too: it would compare nothing. what names
// the outputs in errors.
func Same(t testing.TB, what string, got, want []interp.Value) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d outputs, interpreter %d", what, len(got), len(want))
	}
	for i, w := range want {
		wt := w.(*interp.Tensor)
		g, ok := got[i].(*interp.Tensor)
		if !ok {
			t.Fatalf("%s: output %d: %s", what, i, interp.Describe(got[i]))
		}
		if g.DType != wt.DType || fmt.Sprint(g.Shape) != fmt.Sprint(wt.Shape) {
			t.Fatalf("%s: output %d: %s%v, interpreter %s%v", what, i, g.DType, g.Shape, wt.DType, wt.Shape)
		}
		gs, ws := g.Float64s(), wt.Float64s()
		distinct := map[float64]bool{}
		for j := range ws {
			distinct[ws[j]] = true
			if gs[j] != ws[j] {
				t.Errorf("%s: output %d [%d] = %g, interpreter %g", what, i, j, gs[j], ws[j])
			}
		}
		if len(ws) > 4 && len(distinct) < 4 {
			t.Errorf("%s: output %d: degenerate values %v", what, i, ws)
		}
	}
}
