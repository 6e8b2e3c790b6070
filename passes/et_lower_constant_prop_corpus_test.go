package passes_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fxport/fxport/frontends/pt2"
	"github.com/fxport/fxport/interp"
	"github.com/fxport/fxport/interp/npy"
	"github.com/fxport/fxport/pm"
	"github.com/fxport/fxport/targets/executorch/emit"
	etfb "github.com/fxport/fxport/targets/executorch/fb/executorch_flatbuffer"
	"github.com/fxport/fxport/targets/executorch/pte"
	"github.com/fxport/fxport/targets/executorch/run"
)

// mobilenet_v3_small through the XNNPACK pipeline keeps, by default (as
// exir's default to_executorch does), one portable _to_dim_order_copy per
// int64 literal the add/div of its activations lift: torch 2.14's core ATen
// writes its 28 hardsigmoids and hardswishes as add + clamp + div (+ mul),
// two literals each (56); with
// constant-propagation{enable=true} (exir's
// do_quant_fusion_and_const_prop) they fold into lifted f32 constants, no
// portable kernel call is left, and the .pte still matches torch's outputs
// (tests/corpus/mobilenet_v3_small/io) within 1e-4.
func TestConstantPropagationMobileNetV3(t *testing.T) {
	dir := filepath.Join("..", "tests", "corpus", "mobilenet_v3_small")
	for _, enable := range []bool{false, true} {
		t.Run(fmt.Sprintf("enable=%v", enable), func(t *testing.T) {
			p, err := pt2.Read(filepath.Join(dir, "program.pt2"))
			if err != nil {
				t.Fatalf("corpus program: %v", err)
			}
			pl, err := pm.Build(pm.TargetExecuTorch, "executorch.xnnpack")
			if err != nil {
				t.Fatal(err)
			}
			if enable {
				text := strings.Replace(pl.String(), "constant-propagation", "constant-propagation{enable=true}", 1)
				if pl, err = pm.ParsePipeline(text); err != nil {
					t.Fatal(err)
				}
			}
			rep, err := pm.Run(p, pl, nil, pm.Config{})
			if err != nil {
				t.Fatal(err)
			}
			ef, err := emit.Program(p, emit.Options{NoMetadataMethod: true})
			if err != nil {
				t.Fatal(err)
			}
			b, err := pte.Encode(ef)
			if err != nil {
				t.Fatal(err)
			}
			f, err := pte.Decode("mobilenet_v3_small.pte", b)
			if err != nil {
				t.Fatal(err)
			}
			portable := map[string]int{}
			delegates := 0
			m := f.Methods[0]
			for _, ch := range m.Plan.Chains {
				for _, in := range ch.Instructions {
					switch x := in.InstrArgs.Value.(type) {
					case *etfb.DelegateCallT:
						delegates++
					case *etfb.KernelCallT:
						op := m.Plan.Operators[x.OpIndex]
						portable[op.Name]++
					}
				}
			}
			t.Logf("enable=%v: %d bytes, %d delegate calls, portable %v, %d values", enable, len(b), delegates, portable, len(m.Plan.Values))
			if fired := constPropFired(rep.String()); enable && fired != 56 {
				t.Errorf("enabled: %d constants fired, want one per cast (56)", fired)
			}
			casts := portable["dim_order_ops::_to_dim_order_copy"]
			switch {
			case !enable && casts != 56:
				t.Errorf("default: %d portable _to_dim_order_copy calls, want exir's 56 (constant propagation is off by default)", casts)
			case enable && len(portable) != 0:
				t.Errorf("enabled: portable kernel calls left: %v", portable)
			}
			var ins []interp.Value
			for i := 0; ; i++ {
				x, err := npy.ReadFile(filepath.Join(dir, "io", fmt.Sprintf("input_%d.npy", i)))
				if os.IsNotExist(err) {
					break
				} else if err != nil {
					t.Fatal(err)
				}
				ins = append(ins, x)
			}
			outs, err := run.Run(f, ins, run.Options{})
			if err != nil {
				t.Fatalf("run: %v", err)
			}
			for i := range outs {
				want, err := npy.ReadFile(filepath.Join(dir, "io", fmt.Sprintf("output_%d.npy", i)))
				if err != nil {
					t.Fatal(err)
				}
				g, ok := outs[i].(*interp.Tensor)
				if !ok || fmt.Sprint(g.Shape) != fmt.Sprint(want.Shape) {
					t.Fatalf("output %d: %s, want shape %v", i, interp.Describe(outs[i]), want.Shape)
				}
				gs, ws := g.Float64s(), want.Float64s()
				for k := range ws {
					if d := gs[k] - ws[k]; !(d <= 1e-4 && d >= -1e-4) {
						t.Fatalf("output %d[%d] = %g, torch %g", i, k, gs[k], ws[k])
					}
				}
			}
		})
	}
}

// constPropFired counts the report's firings of constant-propagation.
func constPropFired(report string) int {
	n := 0
	for _, l := range strings.Split(report, "\n") {
		if strings.Contains(l, `fired constant-propagation pass`) {
			n++
		}
	}
	return n
}
