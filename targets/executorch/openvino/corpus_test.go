package openvino_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	pt2front "github.com/fxport/fxport/frontends/pt2"
	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/pm"
	"github.com/fxport/fxport/targets/executorch/extcompile"
	etfb "github.com/fxport/fxport/targets/executorch/fb/executorch_flatbuffer"
	"github.com/fxport/fxport/targets/executorch/openvino"
	"github.com/fxport/fxport/targets/executorch/pte"
)

// corpusWant is the number of OpenvinoBackend delegates each corpus
// program gets through the executorch.openvino pipeline (the table in
// docs/targets/executorch.md, "## OpenVINO"). resnet18, bert_block and
// gpt2_block have dynamic dims. The corpus is torch 2.14's core-ATen form:
// its attention decomposition writes eq.Scalar, any.dim, le.Scalar,
// logical_and and scalar_tensor, which SupportedOps lacks, and bert_block's
// and gpt2_block's symbolic view/permute/expand/clone chains fall outside the
// partitions, so those programs are cut more often than the torch 1.13
// corpus was.
var corpusWant = map[string]int{
	"bert_block":                14,
	"convnext_tiny":             2,
	"efficientnet_b0":           1,
	"gpt2_block":                10,
	"llama_block":               5,
	"mobilenet_v3_small":        1,
	"moe_router":                1,
	"resnet18":                  1,
	"selective_scan":            7,
	"transformer_encoder_layer": 4,
	"vit_b_16":                  10,
	"whisper_frontend":          1,
}

// dynamicCorpus are the corpus programs with symbolic dims.
var dynamicCorpus = map[string]bool{"resnet18": true, "bert_block": true, "gpt2_block": true}

// TestCorpus exports every corpus program through the executorch.openvino
// pipeline with the stand-in compiler: the .pte decodes with flatc and our
// reader, has the expected number of OpenvinoBackend delegates, and every
// DelegateCall argument is a tensor whose sizes are its value's upper
// bounds, DYNAMIC_BOUND exactly when a dim is symbolic. For the dynamic
// programs (one partition each) the .pt2 given to the compiler reads back
// with the program's symbols and ranges.
func TestCorpus(t *testing.T) {
	files, _ := filepath.Glob("../../../tests/corpus/*/program.pt2")
	if len(files) == 0 {
		t.Skip("no corpus programs")
	}
	for _, f := range files {
		name := filepath.Base(filepath.Dir(f))
		t.Run(name, func(t *testing.T) {
			want, ok := corpusWant[name]
			if !ok {
				t.Fatalf("corpus program %s has no expected delegate count", name)
			}
			p, err := pt2front.Read(f)
			if err != nil {
				t.Fatal(err)
			}
			pl, err := pm.Build(pm.TargetExecuTorch, "executorch.openvino")
			if err != nil {
				t.Fatal(err)
			}
			if _, err := pm.Run(p, pl, nil, pm.Config{}); err != nil {
				t.Fatal(err)
			}
			calls := openvino.FindCalls(p)
			if len(calls) != want {
				t.Fatalf("%d OpenvinoBackend calls, want %d", len(calls), want)
			}
			dir := t.TempDir()
			kept := filepath.Join(dir, "kept.pt2")
			t.Setenv("FXPORT_STANDIN_KEEP", kept)
			out := filepath.Join(dir, name+".pte")
			if err := openvino.Write(context.Background(), p, out, openvino.Options{Command: standin(t)}); err != nil {
				t.Fatal(err)
			}
			flatcDecode(t, out)
			pf, err := pte.Read(out)
			if err != nil {
				t.Fatal(err)
			}
			m := method(t, pf, "forward")
			if len(m.Delegates) != want {
				t.Fatalf("%d delegates in the .pte, want %d", len(m.Delegates), want)
			}
			dyn := checkDelegateArgs(t, p, calls, m)
			if dyn != dynamicCorpus[name] {
				t.Errorf("dynamic delegate arguments: %v, want %v", dyn, dynamicCorpus[name])
			}
			if !dynamicCorpus[name] {
				return
			}
			given, err := pt2front.Read(kept)
			if err != nil {
				t.Fatalf("the partition .pt2 does not read back: %v", err)
			}
			checkRanges(t, p, given)
		})
	}
}

// checkDelegateArgs checks every DelegateCall's arguments against the
// calls' runtime operands (constants excluded) then results, and reports
// whether any is DYNAMIC_BOUND.
func checkDelegateArgs(t *testing.T, p *ir.Program, calls []*ir.Node, m *etfb.ExecutionPlanT) bool {
	t.Helper()
	var dcs []*etfb.DelegateCallT
	for _, ch := range m.Chains {
		for _, in := range ch.Instructions {
			if dc, ok := in.InstrArgs.Value.(*etfb.DelegateCallT); ok {
				dcs = append(dcs, dc)
			}
		}
	}
	if len(dcs) != len(calls) {
		t.Fatalf("%d DelegateCalls for %d calls", len(dcs), len(calls))
	}
	dynamic := false
	for i, call := range calls {
		var vals []*ir.Value
		for _, a := range call.Args[2:] {
			if a.Kind == ir.ArgValue && !extcompile.IsConstant(p, a.Value) {
				vals = append(vals, a.Value)
			}
		}
		vals = append(vals, call.Results...)
		if len(dcs[i].Args) != len(vals) {
			t.Fatalf("call %d: %d DelegateCall arguments for %d runtime values", i, len(dcs[i].Args), len(vals))
		}
		for j, v := range vals {
			tv := tensorOf(t, m, dcs[i].Args[j])
			tt := v.Tensor()
			if tt == nil {
				t.Fatalf("call %d argument %d (%s) is not a tensor", i, j, v)
			}
			sym := false
			var wantSizes []int32
			for _, d := range tt.Shape {
				if _, ok := d.Const(); !ok {
					sym = true
				}
				wantSizes = append(wantSizes, int32(p.Env.UpperBound(d).V))
			}
			if len(wantSizes) == 0 {
				wantSizes = nil
			}
			wantDyn := etfb.TensorShapeDynamismSTATIC
			if sym {
				wantDyn = etfb.TensorShapeDynamismDYNAMIC_BOUND
				dynamic = true
			}
			if tv.ShapeDynamism != wantDyn || fmt.Sprint(tv.Sizes) != fmt.Sprint(wantSizes) {
				t.Errorf("call %d argument %d (%s: %s): %s %v, want %s %v", i, j, v, tt, tv.ShapeDynamism, tv.Sizes, wantDyn, wantSizes)
			}
		}
	}
	return dynamic
}

// checkRanges checks that the partition program given read back with
// symbols and the same ranges as p's for those symbols, and that its inputs
// are dynamic.
func checkRanges(t *testing.T, p, given *ir.Program) {
	t.Helper()
	syms := given.Env.Symbols()
	if len(syms) == 0 {
		t.Fatal("the partition .pt2 has no symbols")
	}
	for _, s := range syms {
		got, _ := given.Env.Range(s)
		want, ok := p.Env.Range(s)
		if !ok {
			t.Errorf("symbol %s of the partition is not the program's", s)
			continue
		}
		if got.String() != want.String() {
			t.Errorf("symbol %s: range %s, want %s", s, got, want)
		}
	}
	var shapes []string
	dyn := false
	for _, in := range given.Main.Inputs {
		if tt := in.Tensor(); tt != nil {
			if _, ok := tt.StaticShape(); !ok {
				dyn = true
			}
			shapes = append(shapes, tt.String())
		}
	}
	if !dyn {
		t.Errorf("no dynamic partition input: %s", strings.Join(shapes, ", "))
	}
}
