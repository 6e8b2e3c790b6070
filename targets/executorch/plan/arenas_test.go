package plan_test

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/targets/executorch/plan"
)

// checkArenas fails when a value is in the wrong arena, misaligned or past
// its arena, or when two values of different storage classes in one arena
// are live together and share bytes.
func checkArenas(t *testing.T, pl *plan.Plan, arenaOf func(*ir.Value) int) {
	t.Helper()
	for i, a := range pl.Values {
		if want := arenaOf(a.Value); a.MemID != want {
			t.Fatalf("%s: memory id %d, want %d", a.Value, a.MemID, want)
		}
		if a.Offset%16 != 0 || a.Offset+a.Size > pl.ArenaSize[a.MemID] {
			t.Fatalf("%s: [%d, +%d) in arena %d of %d bytes", a.Value, a.Offset, a.Size, a.MemID, pl.ArenaSize[a.MemID])
		}
		for _, b := range pl.Values[i+1:] {
			if a.MemID != b.MemID || a.Class == b.Class || a.Size == 0 || b.Size == 0 {
				continue
			}
			if liveTogether(a, b) && a.Offset < b.Offset+b.Size && b.Offset < a.Offset+a.Size {
				t.Fatalf("%s and %s are live together and overlap in arena %d", a.Value, b.Value, a.MemID)
			}
		}
	}
}

// Values split over two arenas by name: each arena is placed on its own,
// at its own max-live lower bound here, where the joint plan of the same
// program, cut in two with offsets kept, leaves holes.
func TestComputeArenasPlansEachArenaOnItsOwn(t *testing.T) {
	// d* values are "device", the rest "host"; the live sets alternate so
	// that a joint plan interleaves them.
	p, err := ir.Parse([]byte(`graph forward(%x: f32[16]) {
  %d1: f32[64] = aten.repeat.default(%x, [4])
  %h1: f32[16] = aten.relu.default(%x)
  %d2: f32[16] = aten.slice.Tensor(%d1, 0, 0, 16)
  %h2: f32[64] = aten.repeat.default(%h1, [4])
  %d3: f32[16] = aten.relu.default(%d2)
  %h3: f32[16] = aten.slice.Tensor(%h2, 0, 0, 16)
  %add: f32[16] = aten.add.Tensor(%d3, %h3)
  return %add
}
`), "arenas.fxir")
	if err != nil {
		t.Fatal(err)
	}
	arenaOf := func(v *ir.Value) int {
		if strings.HasPrefix(v.Name, "d") {
			return 2
		}
		return 1
	}
	pl, bounds, err := plan.ComputeArenas(p, plan.DefaultOptions(), arenaOf)
	if err != nil {
		t.Fatal(err)
	}
	checkArenas(t, pl, arenaOf)
	if len(pl.ArenaSize) != 3 || len(bounds) != 3 || pl.ArenaSize[0] != 0 {
		t.Fatalf("arenas %v bounds %v", pl.ArenaSize, bounds)
	}
	for id := 1; id <= 2; id++ {
		if pl.ArenaSize[id] < bounds[id] || float64(pl.ArenaSize[id]) > 1.05*float64(bounds[id]) {
			t.Errorf("arena %d: %d bytes, max-live lower bound %d", id, pl.ArenaSize[id], bounds[id])
		}
	}
	if pl.MaxLiveLowerBound != bounds[1]+bounds[2] {
		t.Errorf("lower bound %d, want %d + %d", pl.MaxLiveLowerBound, bounds[1], bounds[2])
	}
	// The joint plan's host part alone spans more than the host arena.
	joint, err := plan.Compute(p, plan.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	var hostEnd int64
	for _, e := range joint.Values {
		if arenaOf(e.Value) == 1 {
			hostEnd = max(hostEnd, e.Offset+(e.Size+15)/16*16)
		}
	}
	if hostEnd <= pl.ArenaSize[1] {
		t.Errorf("the joint plan packs the host values into %d bytes (split: %d): the program no longer shows the holes a joint plan leaves", hostEnd, pl.ArenaSize[1])
	}
	// Arena 0 leaves a value unplanned; a class split over two arenas is
	// an error naming both values.
	pl, _, err = plan.ComputeArenas(p, plan.DefaultOptions(), func(v *ir.Value) int {
		if v.Name == "x" {
			return 0
		}
		return arenaOf(v)
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := pl.Lookup(p.Main.Value("x")); ok {
		t.Error("x is planned despite arena 0")
	}
	lowered, err := ir.Parse([]byte(`graph forward(%x: f32[4]) {
  %alloc: f32[4] = memory.alloc.default([4], dtype=torch.float32)
  %relu: f32[4] = aten.relu.out(%x, out=%alloc)
  return %relu
}
`), "alias.fxir")
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = plan.ComputeArenas(lowered, plan.DefaultOptions(), func(v *ir.Value) int {
		if v.Name == "relu" {
			return 2
		}
		return 1
	})
	if err == nil || !strings.Contains(err.Error(), "share storage") {
		t.Errorf("a storage class over two arenas: err = %v", err)
	}
}

// Random programs with values dealt to three arenas never overlap, and
// every arena is at least its own lower bound.
func TestComputeArenasRandomNeverOverlap(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	relu := ir.MustLookupOp("aten.relu.default")
	cat := ir.MustLookupOp("aten.cat.default")
	for iter := 0; iter < 100; iter++ {
		p := ir.NewProgram()
		g := p.Main
		var vals []*ir.Value
		for i := 0; i < 1+r.IntN(3); i++ {
			v, err := g.AddInput("in"+string(rune('a'+i)), ir.Tensor(ir.Float32, int64(1+r.IntN(40))))
			if err != nil {
				t.Fatal(err)
			}
			vals = append(vals, v)
		}
		b := ir.NewBuilder(g)
		for i := 0; i < 5+r.IntN(25); i++ {
			var v *ir.Value
			var err error
			if r.IntN(3) == 0 {
				v, err = b.Value(cat, ir.ValuesArg(vals[r.IntN(len(vals))], vals[r.IntN(len(vals))]))
			} else {
				v, err = b.Value(relu, ir.ValueArg(vals[r.IntN(len(vals))]))
			}
			if err != nil {
				t.Fatal(err)
			}
			vals = append(vals, v)
		}
		g.SetOutputs(ir.ValueArg(vals[len(vals)-1]))
		p.Signature = ir.DefaultSignature(g)
		deal := map[*ir.Value]int{}
		for _, v := range vals {
			deal[v] = 1 + r.IntN(3)
		}
		arenaOf := func(v *ir.Value) int { return deal[v] }
		pl, bounds, err := plan.ComputeArenas(p, plan.DefaultOptions(), arenaOf)
		if err != nil {
			t.Fatal(err)
		}
		checkArenas(t, pl, arenaOf)
		for id := 1; id < len(pl.ArenaSize); id++ {
			if pl.ArenaSize[id] < bounds[id] {
				t.Fatalf("iteration %d: arena %d of %d bytes below its lower bound %d", iter, id, pl.ArenaSize[id], bounds[id])
			}
		}
	}
}
