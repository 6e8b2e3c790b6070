package passes

import (
	"bytes"
	"encoding/binary"
	"io"
	"math"
	"testing"

	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/pm"
)

// The folded constants hold the bytes the copies computed: a permute of a
// [2, 3] weight, a view of that permute, and a chain permute → permute
// (which composes into one strided view of the original weight).
func TestFoldConstantViewsBytes(t *testing.T) {
	src := `input p_w: parameter "w"
input x: user_input
output user_output
output user_output
output user_output
weight "w": f32[2, 3] = inline("0000803f0000004000004040000080400000a0400000c040")
graph forward(%p_w: f32[2, 3], %x: f32[3, 2]) {
  %t: f32[3, 2] = aten.permute_copy.default(%p_w, [1, 0])
  %v: f32[6] = aten.view_copy.default(%t, [6])
  %tt: f32[2, 3] = aten.permute_copy.default(%t, [1, 0])
  %a: f32[3, 2] = aten.add.Tensor(%t, %x)
  return %a, %v, %tt
}
`
	p, err := ir.Parse([]byte(src), "fold.fxir")
	if err != nil {
		t.Fatal(err)
	}
	pl, err := pm.ParsePipeline("executorch.portable: executorch.lowering(fold-constant-views)")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pm.Run(p, pl, nil, pm.Config{VerifyEach: true}); err != nil {
		t.Fatal(err)
	}
	if err := ir.VerifyWith(p, ir.VerifyOptions{Types: true}); err != nil {
		t.Fatal(err)
	}
	for _, n := range p.Main.Nodes() {
		if n.Op == etlOpPermuteCopy || n.Op == etlOpViewCopy {
			t.Errorf("%s left unfolded", n.Short())
		}
	}
	// w = [[1 2 3] [4 5 6]]: its transpose, flattened, and the transpose of
	// the transpose.
	want := map[int][]float32{0: {1, 4, 2, 5, 3, 6}, 1: {1, 4, 2, 5, 3, 6}, 2: {1, 2, 3, 4, 5, 6}}
	outs := p.Main.Outputs()
	for i, w := range want {
		v := outs[i].Value
		if i == 0 {
			v = v.Def.Operands()[0]
		}
		if v.Def != nil || p.Signature.Inputs[v.Index].Kind != ir.ConstantTensor {
			t.Fatalf("output %d reads %s, not a constant input", i, v)
		}
		wt := p.Weight(p.Signature.Inputs[v.Index].Target)
		r, err := wt.Source.Open()
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(r)
		var exp bytes.Buffer
		for _, f := range w {
			_ = binary.Write(&exp, binary.LittleEndian, math.Float32bits(f))
		}
		if !bytes.Equal(got, exp.Bytes()) {
			t.Errorf("output %d (%s = %s): bytes %x, want %x", i, wt.Name, wt.Source, got, exp.Bytes())
		}
		// The weight source prints and parses back.
		back, err := ir.ParseWeightSource(wt.Source.String())
		if err != nil || back.String() != wt.Source.String() {
			t.Errorf("output %d: source does not round-trip: %v", i, err)
		}
	}
	if p.Weight("w") != nil {
		t.Errorf("weight w has no users left but was kept")
	}
	// Running it again changes nothing.
	before := ir.Print(p)
	if _, err := pm.Run(p, pl, nil, pm.Config{}); err != nil || ir.Print(p) != before {
		t.Errorf("second run changed the program (err %v)", err)
	}
}
