package cuda_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	pt2front "github.com/fxport/fxport/frontends/pt2"
	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/targets/executorch/cuda"
	etfb "github.com/fxport/fxport/targets/executorch/fb/executorch_flatbuffer"
	"github.com/fxport/fxport/targets/executorch/plan"
	"github.com/fxport/fxport/targets/executorch/pte"
)

// split: an item() of the first partition's sum is read by later tensor
// nodes, so the device work splits in two: partition 0 (the casts, relu,
// sum), the host item(), partition 1 (mul by the item, add).
const split = `meta "export.model_class" = "SplitModel"
input x: user_input
input y: user_input
output user_output
graph forward(%x: f32[4], %y: f32[4]) {
  %relu: f32[4] = aten.relu.default(%x)
  %sum: f32[] = aten.sum.default(%relu)
  %item: SymFloat = aten._local_scalar_dense.default(%sum)
  %mul: f32[4] = aten.mul.Scalar(%relu, %item)
  %add: f32[4] = aten.add.Tensor(%mul, %y)
  return %add
}
`

// step is one instruction: a kernel's operator ("et_copy::_h2d_copy.out")
// or "delegate".
func steps(m *etfb.ExecutionPlanT) ([]string, []*etfb.DelegateCallT, [][]int32) {
	var names []string
	var dcs []*etfb.DelegateCallT
	var args [][]int32
	for _, in := range m.Chains[0].Instructions {
		switch a := in.InstrArgs.Value.(type) {
		case *etfb.KernelCallT:
			names = append(names, m.Operators[a.OpIndex].Name+"."+m.Operators[a.OpIndex].Overload)
			args = append(args, a.Args)
		case *etfb.DelegateCallT:
			names = append(names, "delegate")
			dcs = append(dcs, a)
			args = append(args, a.Args)
		default:
			names = append(names, "other")
			args = append(args, nil)
		}
	}
	return names, dcs, args
}

// TestWriteSplitsAtHostNodes: two CudaBackend calls, each compiled from its
// own .pt2 with its own .ptd keys; partition 0's device results flow into
// partition 1 without a host round trip; the host item() and the boxing of
// its value are portable CPU kernels on host tensors; host and device
// tensors are planned in arenas of their own.
func TestWriteSplitsAtHostNodes(t *testing.T) {
	dir := t.TempDir()
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	keep := t.TempDir()
	t.Setenv("FXPORT_STANDIN_KEEP_DIR", keep)
	out := filepath.Join(dir, "m.pte")
	p := lowered(t, split)
	if err := cuda.Write(context.Background(), p, out, cuda.Options{Command: standin(t)}); err != nil {
		t.Fatal(err)
	}
	if ents, _ := os.ReadDir(tmp); len(ents) != 0 {
		t.Errorf("the compile directories were not removed: %v", ents)
	}
	// Each partition was compiled from its own standalone .pt2.
	for i, want := range []string{"aten.sum.default", "aten._local_scalar_dense.default"} {
		given, err := pt2front.Read(filepath.Join(keep, "part"+string(rune('0'+i))+".pt2"))
		if err != nil {
			t.Fatalf("partition %d: %v", i, err)
		}
		if err := ir.Verify(given); err != nil {
			t.Fatalf("partition %d: %v", i, err)
		}
		if !strings.Contains(ir.Print(given), want) {
			t.Errorf("partition %d's .pt2 lacks %s:\n%s", i, want, ir.Print(given))
		}
		for _, v := range given.Main.Inputs {
			if v.Tensor() == nil || v.Tensor().Device != cuda.Device {
				t.Errorf("partition %d: input %s is %s, not a device tensor", i, v, v.Type)
			}
		}
	}
	if ents, _ := os.ReadDir(keep); len(ents) != 2 {
		t.Errorf("%d partitions compiled, want 2", len(ents))
	}

	flatcDecode(t, out)
	f, err := pte.Read(out)
	if err != nil {
		t.Fatal(err)
	}
	m := f.Program.ExecutionPlan[0]
	names, dcs, args := steps(m)
	want := []string{
		"et_copy::_h2d_copy.out", "et_copy::_h2d_copy.out", "delegate",
		"et_copy::_d2h_copy.out", "aten::_local_scalar_dense.", "aten::full.out", "et_copy::_h2d_copy.out",
		"delegate", "et_copy::_d2h_copy.out",
	}
	if strings.Join(names, " ") != strings.Join(want, " ") {
		t.Fatalf("instructions\n %v\nwant\n %v", names, want)
	}
	// Partition 0: two device inputs (x, y copied in), three device
	// results; the sum goes to the host, relu and the cast of y stay on
	// the device and are partition 1's operands.
	dc0, dc1 := dcs[0], dcs[1]
	if dc0.DelegateIndex != 0 || dc1.DelegateIndex != 1 || len(dc0.Args) != 5 || len(dc1.Args) != 4 {
		t.Fatalf("delegate calls %+v %+v", dc0, dc1)
	}
	results0 := map[int32]bool{}
	for _, a := range dc0.Args[2:] {
		results0[a] = true
	}
	if !results0[args[3][0]] {
		t.Errorf("the d2h copy reads %d, not a result of partition 0 %v", args[3][0], dc0.Args)
	}
	direct := 0
	for _, a := range dc1.Args[:3] {
		if results0[a] {
			direct++
		}
	}
	if direct != 2 {
		t.Errorf("partition 1 takes %d of partition 0's device results directly (args %v, partition 0 %v), want 2", direct, dc1.Args, dc0.Args)
	}
	// The boxed item(): full.out writes a host f64[] that is copied in.
	item, box := args[4][1], args[5][2]
	if _, ok := m.Values[item].Val.Value.(*etfb.DoubleT); !ok {
		t.Errorf("item() result %d is %T, want a double", item, m.Values[item].Val.Value)
	}
	if args[5][1] != item || args[6][0] != box || dc1.Args[1] != args[6][1] {
		t.Errorf("box chain: item %d, full %v, h2d %v, delegate %v", item, args[5], args[6], dc1.Args)
	}
	// Placement: delegate operands and results on the device (arena 2),
	// the host side of every copy and the host kernels' tensors in arena 1.
	for _, dc := range dcs {
		for _, a := range dc.Args {
			if tv := tensor(t, m, a); !isDevice(tv) || tv.AllocationInfo.MemoryId != 2 {
				t.Errorf("delegate argument %d: %+v %+v", a, tv.AllocationInfo, tv.ExtraTensorInfo)
			}
		}
	}
	for i, name := range names {
		var host []int32
		switch name {
		case "et_copy::_h2d_copy.out":
			host = args[i][:1]
		case "et_copy::_d2h_copy.out":
			host = args[i][1:]
		case "aten::_local_scalar_dense.":
			host = args[i][:1]
		case "aten::full.out":
			host = args[i][2:]
		}
		for _, a := range host {
			if tv := tensor(t, m, a); isDevice(tv) || tv.AllocationInfo == nil || tv.AllocationInfo.MemoryId != 1 {
				t.Errorf("%s: host tensor %d: %+v %+v", name, a, tv.AllocationInfo, tv.ExtraTensorInfo)
			}
		}
	}
	if st := tensor(t, m, box).ScalarType; st != etfb.ScalarTypeDOUBLE {
		t.Errorf("box scalar type %v", st)
	}
	if nd := m.NonConstBufferDevice; len(nd) != 1 || nd[0].BufferIdx != 2 || nd[0].DeviceType != etfb.DeviceTypeCUDA {
		t.Errorf("non_const_buffer_device %+v", nd)
	}
	// The host and device arenas are planned on their own: each within 5%
	// of its own max-live lower bound, and the emitted sizes are that plan.
	q := p.Clone()
	bounds, err := cuda.DeviceArenas(q)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := plan.Read(q)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.NonConstBufferSizes) != 3 || len(rec.ArenaSize) != 3 {
		t.Fatalf("buffer sizes %v, plan %v", m.NonConstBufferSizes, rec.ArenaSize)
	}
	for id := 1; id <= 2; id++ {
		if got := int64(m.NonConstBufferSizes[id]); got != rec.ArenaSize[id] || got < bounds[id] || float64(got) > 1.05*float64(bounds[id]) {
			t.Errorf("arena %d: %d bytes emitted, %d planned, max-live lower bound %d", id, got, rec.ArenaSize[id], bounds[id])
		}
	}

	// Two delegates, each naming its own two .ptd keys.
	if len(m.Delegates) != 2 {
		t.Fatalf("%d delegates", len(m.Delegates))
	}
	d, err := pte.ReadPTD(cuda.PTDPath(out))
	if err != nil {
		t.Fatal(err)
	}
	entries := map[string][]byte{}
	for _, e := range d.Tensors {
		sum := sha256.Sum256(e.Data)
		if !strings.HasPrefix(e.Key, hex.EncodeToString(sum[:])+"_") {
			t.Errorf(".ptd key %s does not start with its bytes' sha256", e.Key)
		}
		entries[e.Key] = e.Data
	}
	if len(entries) != 4 {
		t.Errorf(".ptd has %d entries, want 4 (a library and a weights blob per partition)", len(entries))
	}
	seen := map[string]bool{}
	for i, del := range m.Delegates {
		if del.Id != "CudaBackend" || del.Processed.Location != etfb.DataLocationSEGMENT {
			t.Fatalf("delegate %d: %+v", i, del)
		}
		if cs := del.CompileSpecs; len(cs) != 1 || cs[0].Key != "method_name" || string(cs[0].Value) != "SplitModel" {
			t.Errorf("delegate %d compile specs %+v", i, cs)
		}
		keys := strings.Split(string(f.Segments[del.Processed.Index].Data), "\n")
		if len(keys) != 2 || !strings.HasSuffix(keys[0], "_so_blob") || !strings.HasSuffix(keys[1], "_weights_blob") {
			t.Fatalf("delegate %d processed keys %q", i, keys)
		}
		for _, k := range keys {
			if _, ok := entries[k]; !ok || seen[k] {
				t.Errorf("delegate %d key %s: in the .ptd %v, named twice %v", i, k, ok, seen[k])
			}
			seen[k] = true
		}
		if so := string(entries[keys[0]]); !strings.HasPrefix(so, "standin-so for ") {
			t.Errorf("delegate %d library %q", i, so)
		}
	}
}

// Partitions whose bytes coincide share .ptd entries: without weights
// blobs both weights keys are sha256("")_weights_blob, stored once.
func TestWriteSharesEqualEntries(t *testing.T) {
	t.Setenv("FXPORT_STANDIN_NO_WEIGHTS", "1")
	out := filepath.Join(t.TempDir(), "m.pte")
	if err := cuda.Write(context.Background(), lowered(t, split), out, cuda.Options{Command: standin(t)}); err != nil {
		t.Fatal(err)
	}
	d, err := pte.ReadPTD(cuda.PTDPath(out))
	if err != nil {
		t.Fatal(err)
	}
	empty := sha256.Sum256(nil)
	var weights int
	for _, e := range d.Tensors {
		if strings.HasSuffix(e.Key, "_weights_blob") {
			weights++
			if e.Key != hex.EncodeToString(empty[:])+"_weights_blob" || len(e.Data) != 0 {
				t.Errorf("weights entry %s with %d bytes", e.Key, len(e.Data))
			}
		}
	}
	if len(d.Tensors) != 3 || weights != 1 {
		t.Errorf(".ptd has %d entries (%d weights), want the two libraries and one shared empty weights blob", len(d.Tensors), weights)
	}
}

// Compile leaves the library and weights blob as lazy sources over its
// temporary files — sized and hashed, not read into memory — until Close
// removes them.
func TestCompileIsFileBacked(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	p := lowered(t, tiny)
	part, err := cuda.RegionProgram(p, cuda.FindCalls(p)[0])
	if err != nil {
		t.Fatal(err)
	}
	c, err := cuda.Compile(context.Background(), part, standin(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range []pte.Lazy{c.SO, c.Weights} {
		r, err := l.Open()
		if err != nil {
			t.Fatalf("%s: %v", l.Name, err)
		}
		f, ok := r.(*os.File)
		if !ok || !strings.HasPrefix(f.Name(), tmp) {
			t.Errorf("%s is not read from the compile directory: %T", l.Name, r)
		}
		st, _ := f.Stat()
		r.Close()
		if l.Digest == nil || uint64(st.Size()) != l.Size || l.Size == 0 {
			t.Errorf("%s: size %d (file %d), digest %v", l.Name, l.Size, st.Size(), l.Digest)
		}
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Weights.Open(); err == nil || !strings.Contains(err.Error(), "closed") {
		t.Errorf("open after Close: %v", err)
	}
	if ents, _ := os.ReadDir(tmp); len(ents) != 0 {
		t.Errorf("Close left %v", ents)
	}
	if err := c.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

// When the second partition fails to compile, nothing is written and the
// first partition's compile directory is removed too.
func TestWriteSecondPartitionFailureWritesNothing(t *testing.T) {
	dir, tmp, keep := t.TempDir(), t.TempDir(), t.TempDir()
	t.Setenv("TMPDIR", tmp)
	t.Setenv("FXPORT_STANDIN_KEEP_DIR", keep)
	t.Setenv("FXPORT_STANDIN_FAIL_AT", "1")
	err := cuda.Write(context.Background(), lowered(t, split), filepath.Join(dir, "m.pte"), cuda.Options{Command: standin(t)})
	if err == nil || !strings.Contains(err.Error(), "partition 2 of 2") || !strings.Contains(err.Error(), "told to fail at partition 1") || !strings.Contains(err.Error(), "--aoti-command") {
		t.Fatalf("err = %v", err)
	}
	for _, d := range []string{dir, tmp} {
		if ents, _ := os.ReadDir(d); len(ents) != 0 {
			t.Errorf("%s: left %v", d, ents)
		}
	}
}

// s0*2 equals no dim of the region's input: the .pt2 computes it from
// sym_size of its tensor input, and the delegate takes device tensors only.
func TestWriteComputedSymInt(t *testing.T) {
	dir := t.TempDir()
	kept := filepath.Join(dir, "given.pt2")
	t.Setenv("FXPORT_STANDIN_KEEP", kept)
	out := filepath.Join(dir, "m.pte")
	src := `symbol s0: [1, 8] hint 2
graph forward(%x: f32[s0, 4]) {
  %sym_size: Sym(s0) = aten.sym_size.int(%x, 0)
  %mul: Sym(2*s0) = operator.mul(%sym_size, 2)
  %relu: f32[s0, 4] = aten.relu.default(%x)
  %view: f32[2*s0, 2] = aten.view.default(%relu, [%mul, 2])
  return %view
}
`
	if err := cuda.Write(context.Background(), lowered(t, src), out, cuda.Options{Command: standin(t)}); err != nil {
		t.Fatal(err)
	}
	given, err := pt2front.Read(kept)
	if err != nil {
		t.Fatal(err)
	}
	text := ir.Print(given)
	for _, v := range given.Main.Inputs {
		if v.Tensor() == nil {
			t.Errorf("the .pt2 has a non-tensor input %s", v)
		}
	}
	if !strings.Contains(text, "aten.sym_size.int(") || !strings.Contains(text, "operator.mul(") {
		t.Errorf("the .pt2 does not compute s0*2:\n%s", text)
	}
	f, err := pte.Read(out)
	if err != nil {
		t.Fatal(err)
	}
	m := f.Program.ExecutionPlan[0]
	_, dcs, _ := steps(m)
	if len(dcs) != 1 || len(dcs[0].Args) != 2 {
		t.Fatalf("delegate calls %+v", dcs)
	}
	for _, a := range dcs[0].Args {
		if tv := tensor(t, m, a); !isDevice(tv) || tv.ShapeDynamism != etfb.TensorShapeDynamismDYNAMIC_BOUND {
			t.Errorf("delegate argument %d: %+v", a, tv)
		}
	}
}
