package emit_test

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"

	"github.com/fxport/fxport/ir"
	etfb "github.com/fxport/fxport/targets/executorch/fb/executorch_flatbuffer"
	"github.com/fxport/fxport/targets/executorch/pte"
)

// traceOptions steer checkEmittedTrace's walk of the chain.
type traceOptions struct {
	// Trips is how many times each loop runs its body before its exit jump
	// is taken (per entry into the loop).
	Trips int
	// Aliasing makes a MoveCall assign the EValue (ExecuTorch's semantics:
	// the destination then reads the source's bytes) instead of copying.
	Aliasing bool
	// Seed picks the branch of every data-dependent forward jump (a cond).
	Seed uint64
}

// content is one thing written into planned memory: the bytes a write put
// there, live from the write to the last read of any value holding them.
type content struct {
	mem        uint32
	lo, hi     int64 // byte window
	from, to   int   // steps
	fromPC     int
	values     []int32 // value indices that held it
	lastReadPC int
}

// checkEmittedTrace runs the first method's chain of f symbolically: it
// follows the instructions as the runtime would, with loops taking
// o.Trips iterations and conds a seeded branch, and records every write of
// planned memory (a kernel's out argument, a copying MoveCall) as a new
// content of the written tensor's window, and every read (a kernel's input
// tensors, tensor lists included; a MoveCall's source; a tensor predicate;
// the method's outputs at the end) as extending the content the read
// value holds. An argument a kernel mutates in place (et_copy_index's
// copy_to, copy_'s self) is read and keeps its content. It then checks
// that no two contents live at one step share a byte: that is, every read
// sees the bytes its value last had. It knows nothing of the planner.
func checkEmittedTrace(f *pte.File, o traceOptions) error {
	ep := f.Program.ExecutionPlan[0]
	type window struct {
		mem    uint32
		lo, hi int64
		ok     bool
	}
	win := make([]window, len(ep.Values))
	for i, v := range ep.Values {
		t, ok := v.Val.Value.(*etfb.TensorT)
		if !ok || t.AllocationInfo == nil {
			continue
		}
		n := elemSize(t.ScalarType)
		for _, d := range t.Sizes {
			n *= int64(d)
		}
		a := t.AllocationInfo
		lo := int64(a.MemoryOffsetHigh)<<32 | int64(a.MemoryOffsetLow)
		win[i] = window{a.MemoryId, lo, lo + n, true}
	}
	written := map[int32]bool{}
	for _, in := range ep.Inputs {
		written[in] = true
	}
	for _, ch := range ep.Chains {
		for _, in := range ch.Instructions {
			switch a := in.InstrArgs.Value.(type) {
			case *etfb.KernelCallT:
				for _, x := range a.Args {
					written[x] = true // conservative: any kernel argument may be written
				}
			case *etfb.MoveCallT:
				written[a.MoveTo] = true
			}
		}
	}
	var contents []*content
	holds := make([]int, len(ep.Values)) // value → content index + 1
	step, pc := 0, 0
	write := func(vi int32) {
		w := win[vi]
		if !w.ok || w.hi == w.lo {
			return
		}
		contents = append(contents, &content{mem: w.mem, lo: w.lo, hi: w.hi, from: step, to: step, fromPC: pc, values: []int32{vi}, lastReadPC: pc})
		holds[vi] = len(contents)
	}
	var read func(vi int32)
	read = func(vi int32) {
		if vi < 0 || int(vi) >= len(ep.Values) {
			return
		}
		if l, ok := ep.Values[vi].Val.Value.(*etfb.TensorListT); ok {
			for _, x := range l.Items {
				read(x)
			}
			return
		}
		if l, ok := ep.Values[vi].Val.Value.(*etfb.OptionalTensorListT); ok {
			for _, x := range l.Items {
				if x >= 0 {
					read(x)
				}
			}
			return
		}
		if !win[vi].ok {
			return
		}
		h := holds[vi]
		if h == 0 {
			// Never written (a stacked output of a scan forced to run no
			// iteration): its bytes are garbage, nothing to keep.
			return
		}
		c := contents[h-1]
		c.to, c.lastReadPC = step, pc
	}
	for _, in := range ep.Inputs {
		step = -1
		write(in)
	}
	step = 0
	visits := map[int]int{}
	r := rand.New(rand.NewPCG(o.Seed, 99))
	instrs := ep.Chains[0].Instructions
	for pc < len(instrs) {
		if step > 100000 {
			return fmt.Errorf("no end after %d steps (a loop that does not exit?)", step)
		}
		next := pc + 1
		switch a := instrs[pc].InstrArgs.Value.(type) {
		case *etfb.KernelCallT:
			op, err := kernelOp(ep.Operators[a.OpIndex])
			if err != nil {
				return fmt.Errorf("instruction %d: %w", pc, err)
			}
			sch := op.Info().Schema
			var outs []int32
			for i, arg := range sch.Args {
				if i >= len(a.Args) {
					break
				}
				switch {
				case !arg.Mutates():
					read(a.Args[i])
				case op.Has(ir.PropOutVariant):
					outs = append(outs, a.Args[i])
				default:
					read(a.Args[i]) // mutated in place: keeps its content
				}
			}
			for _, vi := range outs {
				if l, ok := ep.Values[vi].Val.Value.(*etfb.TensorListT); ok {
					for _, x := range l.Items {
						write(x)
					}
					continue
				}
				write(vi)
			}
		case *etfb.MoveCallT:
			if !win[a.MoveTo].ok {
				break
			}
			read(a.MoveFrom)
			switch {
			case o.Aliasing || win[a.MoveFrom] == win[a.MoveTo]:
				// The destination now holds the source's bytes (assigned,
				// or copied onto themselves).
				win[a.MoveTo] = win[a.MoveFrom]
				holds[a.MoveTo] = holds[a.MoveFrom]
				if h := holds[a.MoveTo]; h > 0 {
					contents[h-1].values = append(contents[h-1].values, a.MoveTo)
				}
			default:
				write(a.MoveTo)
			}
		case *etfb.JumpFalseCallT:
			cond := a.CondValueIndex
			read(cond)
			dynamic := written[cond] || win[cond].ok
			jump := false
			switch {
			case !dynamic:
				b, ok := ep.Values[cond].Val.Value.(*etfb.BoolT)
				if !ok {
					return fmt.Errorf("instruction %d: JumpFalseCall on value %d, neither written nor a Bool", pc, cond)
				}
				jump = !b.BoolVal
			case isLoopExit(instrs, pc, int(a.DestinationInstruction)):
				visits[pc]++
				if visits[pc] > o.Trips {
					jump, visits[pc] = true, 0
				}
			default:
				jump = r.IntN(2) == 0
			}
			if jump {
				next = int(a.DestinationInstruction)
			}
		default:
			return fmt.Errorf("instruction %d: %T is not simulated", pc, a)
		}
		pc = next
		step++
	}
	for _, out := range ep.Outputs {
		read(out)
	}
	sort.SliceStable(contents, func(i, j int) bool { return contents[i].from < contents[j].from })
	for i, a := range contents {
		for _, b := range contents[i+1:] {
			if b.from > a.to {
				break
			}
			if a.mem == b.mem && a.lo < b.hi && b.lo < a.hi {
				return fmt.Errorf("bytes [%d, %d) of value %v (written at instruction %d, read until instruction %d, steps %d..%d) are overwritten by value %v at instruction %d (step %d)",
					max(a.lo, b.lo), min(a.hi, b.hi), a.values, a.fromPC, a.lastReadPC, a.from, a.to, b.values, b.fromPC, b.from)
			}
		}
	}
	return nil
}

// isLoopExit reports whether the jump at pc to dest leaves a loop: the
// instruction before dest jumps back to pc or earlier.
func isLoopExit(instrs []*etfb.InstructionT, pc, dest int) bool {
	if dest <= pc || dest-1 >= len(instrs) {
		return false
	}
	j, ok := instrs[dest-1].InstrArgs.Value.(*etfb.JumpFalseCallT)
	return ok && int(j.DestinationInstruction) <= pc
}

// kernelOp maps an operator (aten::add + out) to the op table.
func kernelOp(o *etfb.OperatorT) (ir.Op, error) {
	ns, name, ok := strings.Cut(o.Name, "::")
	if !ok {
		return 0, fmt.Errorf("operator %q has no namespace", o.Name)
	}
	ov := o.Overload
	if ov == "" {
		ov = "default"
	}
	op, ok := ir.LookupOp(ns + "." + name + "." + ov)
	if !ok {
		return 0, fmt.Errorf("operator %s.%s is not in the op table", o.Name, o.Overload)
	}
	return op, nil
}

// elemSize is the byte size of one element of a scalar type.
func elemSize(s etfb.ScalarType) int64 {
	switch s {
	case etfb.ScalarTypeBYTE, etfb.ScalarTypeCHAR, etfb.ScalarTypeBOOL, etfb.ScalarTypeQINT8, etfb.ScalarTypeQUINT8:
		return 1
	case etfb.ScalarTypeSHORT, etfb.ScalarTypeHALF, etfb.ScalarTypeBFLOAT16, etfb.ScalarTypeUINT16:
		return 2
	case etfb.ScalarTypeLONG, etfb.ScalarTypeDOUBLE, etfb.ScalarTypeUINT64:
		return 8
	}
	return 4
}
