package xnnpack_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fxport/fxport/ir"
	_ "github.com/fxport/fxport/passes" // the executorch lowering passes
	"github.com/fxport/fxport/pm"
	"github.com/fxport/fxport/targets/executorch/emit"
	etfb "github.com/fxport/fxport/targets/executorch/fb/executorch_flatbuffer"
	"github.com/fxport/fxport/targets/executorch/internal/ettest"
	"github.com/fxport/fxport/targets/executorch/pte"
	"github.com/fxport/fxport/targets/executorch/xnnpack"
)

func parse(t *testing.T, path string) *ir.Program {
	t.Helper()
	return ettest.ParseFile(t, path)
}

// lower runs the executorch.xnnpack pipeline (pipeline text when given).
func lower(t *testing.T, p *ir.Program, text string) {
	t.Helper()
	ettest.Lower(t, p, "executorch.xnnpack", text)
}

// export lowers, emits, encodes and decodes an IR file.
func export(t *testing.T, path string) (*pte.File, []byte) {
	t.Helper()
	p := parse(t, path)
	lower(t, p, "")
	return ettest.Emit(t, p, filepath.Base(path), emit.Options{NoMetadataMethod: true})
}

func genuineDir(t *testing.T) string {
	t.Helper()
	for _, rel := range []string{"../../../../shared/testdata/pte", "../../../../../shared/testdata/pte", "../../../shared/testdata/pte"} {
		if _, err := os.Stat(filepath.Join(rel, "PROVENANCE.md")); err == nil {
			return rel
		}
	}
	t.Skip("genuine ExecuTorch files (shared/testdata/pte) not found")
	return ""
}

// structure is what exir's conventions fix in a delegated program: segment
// layout, named data sizes, method values, inputs/outputs, operators,
// instructions and each delegate's graph (values and nodes in full, with
// constant data sizes). Planned offsets, arena sizes, the flatbuffer's
// internal layout and the weights themselves are not compared.
type structure struct {
	Segments     []string
	Named        []uint64
	Values       []string
	Inputs       []int32
	Outputs      []int32
	Operators    int
	Instructions []string
	Delegates    []string
}

func describe(t *testing.T, f *pte.File, planned bool) structure {
	t.Helper()
	var s structure
	payload := map[uint32]bool{}
	for _, d := range f.Methods[0].Delegates {
		payload[d.Index] = true
	}
	for i, seg := range f.Segments {
		if payload[uint32(i)] {
			// The flatbuffer's internal layout (hence its size) is the
			// builder's choice; the graph itself is compared below.
			s.Segments = append(s.Segments, fmt.Sprintf("payload@%d", seg.Offset))
			continue
		}
		s.Segments = append(s.Segments, fmt.Sprintf("%d@%d", seg.Size, seg.Offset))
	}
	for _, nd := range f.Program.NamedData {
		seg := f.Segments[nd.SegmentIndex]
		s.Named = append(s.Named, seg.Size)
		sum := sha256.Sum256(seg.Data)
		if nd.Key != hex.EncodeToString(sum[:]) {
			t.Errorf("%s: named data key %s is not the sha256 of its bytes", f.Name, nd.Key)
		}
	}
	m := f.Methods[0]
	for _, v := range m.Plan.Values {
		d := etfb.EnumNamesKernelTypes[v.Val.Type]
		if x, ok := v.Val.Value.(*etfb.TensorT); ok {
			d += fmt.Sprintf(" %s%v %s const=%v", etfb.EnumNamesScalarType[x.ScalarType], x.Sizes, etfb.EnumNamesTensorShapeDynamism[x.ShapeDynamism], x.DataBufferIdx > 0)
			if planned {
				d += fmt.Sprintf(" planned=%v", x.AllocationInfo != nil)
			}
		}
		s.Values = append(s.Values, d)
	}
	s.Inputs, s.Outputs, s.Operators = m.Plan.Inputs, m.Plan.Outputs, len(m.Plan.Operators)
	for _, in := range m.Plan.Chains[0].Instructions {
		switch x := in.InstrArgs.Value.(type) {
		case *etfb.DelegateCallT:
			s.Instructions = append(s.Instructions, fmt.Sprintf("delegate %d %v", x.DelegateIndex, x.Args))
		case *etfb.KernelCallT:
			s.Instructions = append(s.Instructions, fmt.Sprintf("kernel %d %v", x.OpIndex, x.Args))
		}
	}
	for i, d := range m.Delegates {
		g := d.XNNPACK.Graph
		desc := fmt.Sprintf("%s seg=%d compile_specs=%d num_externs=%d in=%v out=%v", d.ID, d.Index, len(m.Plan.Delegates[i].CompileSpecs), g.NumExterns, g.InputIds, g.OutputIds)
		for _, v := range g.Xvalues {
			desc += fmt.Sprintf("\n  value %+v", *pte.XNNTensor(v))
		}
		for _, n := range g.Xnodes {
			desc += fmt.Sprintf("\n  node %s %+v handle=%d", n.XnodeUnion.Type, n.XnodeUnion.Value, n.DebugHandle)
			if n.OutputMinMax != nil {
				desc += fmt.Sprintf(" minmax=%+v", *n.OutputMinMax)
			}
		}
		for _, c := range g.ConstantData {
			desc += fmt.Sprintf("\n  constant size=%d named=%v", c.Size, c.NamedKey != "")
		}
		s.Delegates = append(s.Delegates, desc)
	}
	return s
}

// TestGenuineStructure builds the programs of the genuine XNNPACK files
// from hand-written IR and compares the structure of our .pte with exir's.
func TestGenuineStructure(t *testing.T) {
	dir := genuineDir(t)
	for _, c := range []struct {
		ir, genuine string
		planned     bool // compare which values are planned
	}{
		{"add.fxir", "djl_xnnpack_add_f32x1.pte", true},
		{"linear129.fxir", "djl_xnnpack_linear129_planned_input.pte", true},
		{"conv_relu.fxir", "djl_xnnpack_conv2d_relu_nhwc.pte", true},
	} {
		t.Run(c.genuine, func(t *testing.T) {
			ours, _ := export(t, filepath.Join("testdata", c.ir))
			want, err := pte.Read(filepath.Join(dir, c.genuine))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(describe(t, want, c.planned), describe(t, ours, c.planned)); diff != "" {
				t.Errorf("structure differs from %s (-genuine +ours):\n%s", c.genuine, diff)
			}
		})
	}
}

// The clamp file was exported with alloc_graph_input=False; its XNNPACK
// graph lists the output value first. We define values in visiting order
// (input first), as exir does for every other file; the node matches.
func TestClampNode(t *testing.T) {
	ours, _ := export(t, "testdata/clamp.fxir")
	g := ours.Methods[0].Delegates[0].XNNPACK.Graph
	if len(g.Xnodes) != 1 || g.Xnodes[0].XnodeUnion.Type.String() != "XNNClamp" {
		t.Fatalf("nodes %v, want one XNNClamp", g.Xnodes)
	}
	if mm := g.Xnodes[0].OutputMinMax; mm == nil || mm.OutputMin != -1 || mm.OutputMax != 1 {
		t.Fatalf("output_min_max %+v, want [-1, 1]", mm)
	}
}

func TestDeterministic(t *testing.T) {
	for _, f := range []string{"add.fxir", "linear129.fxir", "conv_relu.fxir"} {
		_, a := export(t, filepath.Join("testdata", f))
		_, b := export(t, filepath.Join("testdata", f))
		if !bytes.Equal(a, b) {
			t.Errorf("%s: two exports differ", f)
		}
	}
}

const pipelineHead = "executorch.xnnpack: executorch.lowering(decompose-to-core, to-dim-order-ops, to-edge-views, to-executorch-prim, functionalize-inplace, "

func partitionCount(t *testing.T, src, opts string) (int, *ir.Program) {
	t.Helper()
	p, err := ir.Parse([]byte(src), "test.fxir")
	if err != nil {
		t.Fatal(err)
	}
	lower(t, p, pipelineHead+"xnnpack-partition"+opts+", to-out-variants)")
	n := 0
	for _, nd := range p.Main.Nodes() {
		if nd.Op == xnnpack.OpCallDelegate {
			n++
		}
	}
	return n, p
}

const convexSrc = `input x: user_input
output user_output
graph forward(%x: f32[4]) {
  %a: f32[4] = aten.add.Tensor(%x, %x)
  %i: i64[4] = aten._to_copy.default(%a, dtype=torch.int64)
  %f: f32[4] = aten._to_copy.default(%i, dtype=torch.float32)
  %m: f32[4] = aten.mul.Tensor(%a, %f)
  return %m
}
`

// A partition never swallows a path through an undelegated node: add and
// mul are connected directly and through the int64 round trip, so they
// must end up in two partitions.
func TestConvexPartitions(t *testing.T) {
	n, p := partitionCount(t, convexSrc, "")
	if n != 2 {
		t.Fatalf("%d partitions, want 2:\n%s", n, ir.Print(p))
	}
	if err := ir.Verify(p); err != nil {
		t.Fatal(err)
	}
}

func TestPartitionExclude(t *testing.T) {
	src := `input x: user_input
output user_output
graph forward(%x: f32[4]) {
  %a: f32[4] = aten.add.Tensor(%x, %x)
  %m: f32[4] = aten.mul.Tensor(%a, %a)
  return %m
}
`
	if n, _ := partitionCount(t, src, ""); n != 1 {
		t.Fatalf("%d partitions, want 1", n)
	}
	if n, p := partitionCount(t, src, "{partition-exclude=MulConfig}"); n != 1 || !strings.Contains(ir.Print(p), "aten.mul") {
		t.Fatalf("excluding MulConfig: %d partitions, mul kept: %v", n, strings.Contains(ir.Print(p), "aten.mul"))
	}
	if n, _ := partitionCount(t, src, "{partition-exclude=MulConfig+AddConfig}"); n != 0 {
		t.Fatalf("excluding both: %d partitions, want 0", n)
	}
	if _, err := pm.ParsePipeline(pipelineHead + "xnnpack-partition{partition-exclude=NoSuchConfig}, to-out-variants)"); err == nil || !strings.Contains(err.Error(), "NoSuchConfig") {
		t.Fatalf("unknown config: %v", err)
	}
	p, _ := ir.Parse([]byte(src), "x")
	all := xnnpack.Configs()
	if _, err := xnnpack.Run(p, xnnpack.Options{Exclude: all}); err == nil {
		t.Fatal("excluding every config must fail")
	}
}

// ET-P38 (invariant, partitioner constraint): prelu is delegated only for
// rank-4 inputs.
func TestInvariant_ET_P38(t *testing.T) {
	mk := func(shape string) string {
		return `input w: parameter "w"
input x: user_input
output user_output
weight "w": f32[3] = inline("0000803f0000803f0000803f")
graph forward(%w: f32[3], %x: f32[` + shape + `]) {
  %p: f32[` + shape + `] = aten.prelu.default(%x, %w)
  %a: f32[` + shape + `] = aten.add.Tensor(%p, %p)
  return %a
}
`
	}
	_, p4 := partitionCount(t, mk("1, 3, 2, 2"), "")
	for _, n := range p4.Main.Nodes() {
		if n.Op.Info().Name == "aten.prelu.default" {
			t.Fatalf("rank-4 prelu not delegated:\n%s", ir.Print(p4))
		}
	}
	_, p3 := partitionCount(t, mk("1, 3, 2"), "")
	for _, n := range p3.Main.Nodes() {
		if n.Op.Info().Name == "aten.prelu.default" {
			return // kept outside the delegate
		}
	}
	t.Fatalf("rank-3 prelu was delegated:\n%s", ir.Print(p3))
}
