package run

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/fxport/fxport/internal/testenv"
	"github.com/fxport/fxport/interp"
	"github.com/fxport/fxport/targets/executorch/pte"
)

// hostileOptions bound what one hostile case may allocate and run: far
// below the defaults, so that 15,000 cases stay fast, and above what the
// genuine files need (except djl_portable_expand_512mib_output.pte, which
// is then refused by the limit, as it must be).
var hostileOptions = Options{MaxArenaBytes: 16 << 20, MaxTensorBytes: 4 << 20, MaxInstructions: 10_000}

// boundInterp lowers interp.MaxElements (the reference kernels' bound on
// one intermediate tensor) for a hostile test and returns its restore.
func boundInterp() func() {
	old := interp.MaxElements
	interp.MaxElements = 1 << 20
	return func() { interp.MaxElements = old }
}

// outcome is what one hostile case did.
type outcome struct {
	stage string // "decode", "summary", "load", "inputs", "execute", "ok"
	err   error
	panic string // a runner panic (with the top of its stack)
}

// tryPTE runs the code path of `fxport inspect` and `fxport run` on data:
// decode, print the summary, load the method, build the default inputs and
// execute. A panic anywhere is caught and reported in the outcome (a test
// fails on it); a "panic" inside an error is one a recover turned into an
// error, also a failure: hostile input must be refused by a check.
func tryPTE(name string, data []byte, opts Options) (o outcome) {
	defer func() {
		if r := recover(); r != nil {
			o.panic = fmt.Sprintf("%v\n%s", r, stackTop(debug.Stack()))
		}
	}()
	f, err := pte.Decode(name, data)
	if err != nil {
		return outcome{stage: "decode", err: err}
	}
	if err := f.Summary(discard{}); err != nil {
		return outcome{stage: "summary", err: err}
	}
	if f.Bundled != nil {
		if _, err := RunBundled(f, BundledOptions{Options: opts, RTol: DefaultRTol, ATol: DefaultATol}); err != nil {
			return outcome{stage: "load", err: err}
		}
		return outcome{stage: "ok"}
	}
	m, err := Load(f, opts)
	if err != nil {
		return outcome{stage: "load", err: err}
	}
	ins, err := m.DefaultInputs(opts)
	if err != nil {
		return outcome{stage: "inputs", err: err}
	}
	if _, err := m.Execute(ins); err != nil {
		return outcome{stage: "execute", err: err}
	}
	return outcome{stage: "ok"}
}

func stackTop(st []byte) string {
	lines := strings.Split(string(st), "\n")
	var keep []string
	for _, l := range lines {
		if strings.Contains(l, "fxport/") && !strings.Contains(l, "hostile_test.go") {
			keep = append(keep, strings.TrimSpace(l))
		}
		if len(keep) == 8 {
			break
		}
	}
	return strings.Join(keep, "\n")
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

// mutate returns a copy of data with 1–4 seeded changes: a random byte, a
// flipped bit, or a 4-byte word set to an edge value (0, -1, ±2^31, a
// small count). Nine changes in ten land in the FlatBuffers program (the
// first programSize bytes), where the structure lives.
func mutate(data []byte, programSize int, r *rand.Rand) []byte {
	out := bytes.Clone(data)
	words := []uint32{0, 0xffffffff, 0x7fffffff, 0x80000000, 1, 2, 3, 7, 0x100, 0xfffffffe, 0x40000000}
	for range 1 + r.IntN(4) {
		span := len(out)
		if programSize > 0 && programSize < span && r.IntN(10) != 0 {
			span = programSize
		}
		at := r.IntN(span)
		switch r.IntN(3) {
		case 0:
			out[at] = byte(r.UintN(256))
		case 1:
			out[at] ^= 1 << r.UintN(8)
		default:
			at &^= 3
			if at+4 <= len(out) {
				binary.LittleEndian.PutUint32(out[at:], words[r.IntN(len(words))])
			}
		}
	}
	return out
}

// programSize is the size of the FlatBuffers program in a .pte: the eh00
// header's program_size, else the whole file.
func programSize(data []byte) int {
	if len(data) >= 24 && string(data[8:12]) == "eh00" {
		if n := int(binary.LittleEndian.Uint64(data[16:24])); n > 0 && n <= len(data) {
			return n
		}
	}
	return len(data)
}

// caseTimeout bounds one hostile case.
const caseTimeout = 10 * time.Second

// runCase runs tryPTE under caseTimeout.
func runCase(t *testing.T, name string, data []byte, opts Options) outcome {
	t.Helper()
	done := make(chan outcome, 1)
	go func() { done <- tryPTE(name, data, opts) }()
	select {
	case o := <-done:
		return o
	case <-time.After(caseTimeout):
		t.Fatalf("%s: no answer after %v (a hang)", name, caseTimeout)
	}
	return outcome{}
}

// TestGenuineMutations applies 500 seeded mutations to each genuine .pte
// and .bpte and runs inspect's and run's code path on each: no case may
// panic or hang, and every refusal names the file.
func TestGenuineMutations(t *testing.T) {
	defer boundInterp()()
	dir := testenv.Shared(t, "testdata/pte")
	files, err := filepath.Glob(filepath.Join(dir, "*.*pte"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no genuine .pte files in %s (%v)", dir, err)
	}
	n := 500
	if testing.Short() {
		n = 100
	}
	counts := map[string]int{}
	panics := 0
	for fi, path := range files {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		base := filepath.Base(path)
		ps := programSize(data)
		r := rand.New(rand.NewPCG(uint64(fi), 17))
		for k := range n {
			name := fmt.Sprintf("%s~%d", base, k)
			o := runCase(t, name, mutate(data, ps, r), hostileOptions)
			counts[o.stage]++
			switch {
			case o.panic != "":
				panics++
				if panics <= 20 {
					t.Errorf("%s: panic: %s", name, o.panic)
				}
			case o.err != nil && strings.Contains(o.err.Error(), "panic"):
				panics++
				if panics <= 20 {
					t.Errorf("%s: %s: a recovered panic: %v", name, o.stage, o.err)
				}
			case o.err != nil && !strings.Contains(o.err.Error(), name):
				t.Errorf("%s: %s: the error does not name the file: %v", name, o.stage, o.err)
			}
		}
	}
	t.Logf("%d files × %d mutations: %v; %d panics", len(files), n, counts, panics)
}

// The genuine 1 KB djl_portable_expand_512mib_output.pte plans a 512 MiB
// arena: refused by the default limit, naming the file, the field and the
// flag.
func TestLargeArenaLimit(t *testing.T) {
	path := filepath.Join(testenv.Shared(t, "testdata/pte"), "djl_portable_expand_512mib_output.pte")
	f, err := pte.Read(path)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Load(f, Options{})
	if err == nil {
		t.Fatal("a 512 MiB arena loaded under the default limit")
	}
	for _, want := range []string{path, "non_const_buffer_sizes", "--max-arena-bytes"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %q", err, want)
		}
	}
	// Just under the arena's size is still refused; the message says how
	// much the plan needs, so the user knows what to raise the limit to.
	_, err = Load(f, Options{MaxArenaBytes: 536_870_927})
	if err == nil || !strings.Contains(err.Error(), "536870928 bytes") {
		t.Fatalf("limit one byte short: %v", err)
	}
}
