package extcompile_test

import (
	"context"
	"crypto/sha256"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/targets/executorch/extcompile"
	"github.com/fxport/fxport/targets/executorch/openvino"
)

const src = `input p_w: parameter "w"
input x: user_input
output user_output
weight "w": f32[2, 3] = inline("0000803f000000400000404000008040000000000000803f")
graph forward(%p_w: f32[2, 3], %x: f32[2, 3]) {
  %add: f32[2, 3] = aten.add.Tensor(%x, %p_w)
  %relu: f32[2, 3] = aten.relu.default(%add)
  return %relu
}
`

// region partitions src for OpenVINO and returns the region program.
func region(t *testing.T) *ir.Program {
	t.Helper()
	p, err := ir.Parse([]byte(src), "test.fxir")
	if err != nil {
		t.Fatal(err)
	}
	res, err := openvino.Partition(p)
	if err != nil || len(res.Calls) != 1 {
		t.Fatalf("partition: %+v %v", res, err)
	}
	rp, err := extcompile.Region(p, res.Calls[0], extcompile.RegionSpec{Prefix: "test", Backend: openvino.BackendID, Packager: "the test packager", IsCall: openvino.IsCall})
	if err != nil {
		t.Fatal(err)
	}
	return rp
}

func TestRegionIsStandaloneProgram(t *testing.T) {
	rp := region(t)
	if len(rp.Signature.Inputs) != 2 || rp.Signature.Inputs[0].Kind != ir.Parameter || rp.Signature.Inputs[1].Kind != ir.UserInput {
		t.Errorf("inputs %+v", rp.Signature.Inputs)
	}
	if w := rp.Weight("w"); w == nil || w.Type.DType != ir.Float32 {
		t.Errorf("weight w = %+v", w)
	}
	if n := len(rp.Main.Nodes()); n != 2 {
		t.Errorf("%d nodes", n)
	}
	if !strings.HasPrefix(rp.Signature.InSpec, "[1, ") || !strings.Contains(rp.Signature.InSpec, "builtins.dict") {
		t.Errorf("in_spec %s", rp.Signature.InSpec)
	}
	if _, err := extcompile.Region(ir.NewProgram(), nil, extcompile.RegionSpec{Prefix: "test", Backend: "B", IsCall: openvino.IsCall}); err == nil || err.Error() != "test: no B delegate call" {
		t.Errorf("nil call: %v", err)
	}
}

func spec(t *testing.T, command string) extcompile.Spec {
	return extcompile.Spec{
		Prefix: "test", Command: command, Default: "fxport-no-default IN OUT", TempPattern: "fxport-test-",
		OutName: "out.bin", What: "thing", Hint: "HINT", Extras: []extcompile.Extra{{Suffix: ".side", What: "side file"}},
	}
}

func TestCompileReadsOutAndExtras(t *testing.T) {
	script, _ := filepath.Abs("testdata/fake_compile.sh")
	out, err := extcompile.Compile(context.Background(), region(t), spec(t, "sh "+script+" IN OUT extra"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(out.Out), "fake ") || string(out.Extras[".side"]) != "extra" {
		t.Errorf("out %q extras %q", out.Out, out.Extras)
	}
	out, err = extcompile.Compile(context.Background(), region(t), spec(t, "sh "+script+" IN OUT"))
	if err != nil || len(out.Extras) != 0 {
		t.Errorf("without the side file: %+v %v", out, err)
	}
}

// Every failure names the command, quotes its output and ends with the
// hint; the temporary directory is removed.
func TestCompileFailures(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	script, _ := filepath.Abs("testdata/fake_compile.sh")
	for cmd, want := range map[string]string{
		"sh " + script + " OUT IN":       "failed (exit status 5): ",
		"":                               `test: compile command "fxport-no-default IN OUT" could not run`,
		"fxport-no-such-compiler IN OUT": "could not run",
		"true IN OUT":                    "wrote no thing OUT",
		"touch OUT":                      "wrote an empty thing; HINT",
	} {
		_, err := extcompile.Compile(context.Background(), region(t), spec(t, cmd))
		if err == nil || !strings.Contains(err.Error(), want) || !strings.HasSuffix(err.Error(), "HINT") ||
			strings.Contains(want, "status 5") && !strings.Contains(err.Error(), "fake: not a pt2") {
			t.Errorf("%q: err = %v, want %q", cmd, err, want)
		}
	}
	if ents, _ := os.ReadDir(tmp); len(ents) != 0 {
		t.Errorf("temporary files left: %v", ents)
	}
}

func TestTail(t *testing.T) {
	if extcompile.Tail("") != "no output" {
		t.Error("empty output")
	}
	if got := extcompile.Tail(strings.Repeat("a", 2100) + "END"); len(got) != 2000+len("…") || !strings.HasSuffix(got, "END") {
		t.Errorf("tail of %d bytes", len(got))
	}
}

// CompileFiles leaves OUT and the side files in the temporary directory;
// FileLazy sizes and hashes them without keeping the bytes and reopens
// them on demand; Close removes the directory (once), after which the lazy
// source fails naming itself.
func TestCompileFilesStayUntilClose(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	script, _ := filepath.Abs("testdata/fake_compile.sh")
	f, err := extcompile.CompileFiles(context.Background(), region(t), spec(t, "sh "+script+" IN OUT extra"))
	if err != nil {
		t.Fatal(err)
	}
	side, ok := f.Extras[".side"]
	if !ok || !strings.HasPrefix(f.Out, f.Dir) || !strings.HasPrefix(f.Dir, tmp) {
		t.Fatalf("files %+v", f)
	}
	l, err := extcompile.FileLazy("side file", side)
	if err != nil {
		t.Fatal(err)
	}
	if want := sha256.Sum256([]byte("extra")); l.Size != 5 || l.Digest == nil || *l.Digest != want {
		t.Errorf("lazy %+v", l)
	}
	for i := 0; i < 2; i++ { // every Open reads the file afresh
		r, err := l.Open()
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(r)
		r.Close()
		if string(b) != "extra" {
			t.Errorf("open %d: %q", i, b)
		}
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if ents, _ := os.ReadDir(tmp); len(ents) != 0 {
		t.Errorf("Close left %v", ents)
	}
	if _, err := l.Open(); err == nil || !strings.Contains(err.Error(), "side file") {
		t.Errorf("open after Close: %v", err)
	}
	if _, err := extcompile.FileLazy("gone", side); err == nil || !strings.Contains(err.Error(), "gone") {
		t.Errorf("FileLazy of a missing file: %v", err)
	}
	// A failing command leaves no directory behind.
	if _, err := extcompile.CompileFiles(context.Background(), region(t), spec(t, "true IN OUT")); err == nil {
		t.Error("a command that writes nothing succeeded")
	}
	if ents, _ := os.ReadDir(tmp); len(ents) != 0 {
		t.Errorf("a failed compile left %v", ents)
	}
}
