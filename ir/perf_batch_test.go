package ir

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// The batch edits leave what the one-by-one edits leave: AddWeights and
// RemoveWeights against AddWeight and RemoveWeight on random names
// (duplicates and replacements included), RemoveInputs against
// RemoveInput on random subsets of a graph's inputs.
func TestBatchEditsMatchOneByOne(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 9))
	names := func(ws []*Weight) []string {
		var out []string
		for _, w := range ws {
			out = append(out, fmt.Sprintf("%s@%p", w.Name, w))
		}
		return out
	}
	for iter := range 200 {
		a, b := NewProgram(), NewProgram()
		for range rng.IntN(20) {
			w := &Weight{Name: fmt.Sprintf("w%d", rng.IntN(30))}
			a.AddWeight(w)
			b.AddWeight(w)
		}
		var add []*Weight
		for range rng.IntN(20) {
			add = append(add, &Weight{Name: fmt.Sprintf("w%d", rng.IntN(30))})
		}
		for _, w := range add {
			a.AddWeight(w)
		}
		b.AddWeights(add)
		if got, want := names(b.Weights), names(a.Weights); !slices.Equal(got, want) {
			t.Fatalf("iteration %d: AddWeights gave %v, AddWeight %v", iter, got, want)
		}
		var drop []string
		for range rng.IntN(20) {
			drop = append(drop, fmt.Sprintf("w%d", rng.IntN(30)))
		}
		for _, n := range drop {
			a.RemoveWeight(n)
		}
		b.RemoveWeights(drop)
		if got, want := names(b.Weights), names(a.Weights); !slices.Equal(got, want) {
			t.Fatalf("iteration %d: RemoveWeights gave %v, RemoveWeight %v", iter, got, want)
		}

		ga, gb := NewProgram().Main, NewProgram().Main
		var ia, ib []*Value
		n := rng.IntN(15)
		for k := range n {
			va, err := ga.AddInput(fmt.Sprintf("i%d", k), Tensor(Float32, 2))
			if err != nil {
				t.Fatal(err)
			}
			vb, _ := gb.AddInput(fmt.Sprintf("i%d", k), Tensor(Float32, 2))
			ia, ib = append(ia, va), append(ib, vb)
		}
		var rb []*Value
		for k := range n {
			if rng.IntN(2) == 0 {
				if err := ga.RemoveInput(ia[k]); err != nil {
					t.Fatal(err)
				}
				rb = append(rb, ib[k])
			}
		}
		if err := gb.RemoveInputs(rb); err != nil {
			t.Fatal(err)
		}
		if len(ga.Inputs) != len(gb.Inputs) {
			t.Fatalf("iteration %d: %d inputs left, RemoveInput left %d", iter, len(gb.Inputs), len(ga.Inputs))
		}
		for k := range ga.Inputs {
			if ga.Inputs[k].Name != gb.Inputs[k].Name || gb.Inputs[k].Index != k || ga.Inputs[k].Index != k {
				t.Fatalf("iteration %d: input %d is %s (index %d), RemoveInput left %s", iter, k, gb.Inputs[k].Name, gb.Inputs[k].Index, ga.Inputs[k].Name)
			}
		}
		for _, v := range rb {
			if _, err := gb.AddInput(v.Name, v.Type); err != nil {
				t.Fatalf("iteration %d: the name of removed input %s is still taken: %v", iter, v.Name, err)
			}
		}
	}
}

// RemoveInputs refuses an input with uses or of another graph, naming it.
func TestRemoveInputsErrors(t *testing.T) {
	p, err := Parse([]byte("input x: user_input\noutput user_output\ngraph forward(%x: f32[2]) {\n  %r: f32[2] = aten.relu.default(%x)\n  return %r\n}\n"), "t.fxir")
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Main.RemoveInputs([]*Value{p.Main.Inputs[0]}); err == nil {
		t.Fatal("removed an input with uses")
	}
	other := NewProgram().Main
	v, _ := other.AddInput("y", Tensor(Float32, 2))
	if err := p.Main.RemoveInputs([]*Value{v}); err == nil {
		t.Fatal("removed another graph's input")
	}
}
