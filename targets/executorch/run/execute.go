package run

import (
	"fmt"

	"github.com/fxport/fxport/interp"
	etfb "github.com/fxport/fxport/targets/executorch/fb/executorch_flatbuffer"
	"github.com/fxport/fxport/targets/executorch/pte"
)

// Run loads the method opts.Method of f and executes it on inputs.
func Run(f *pte.File, inputs []interp.Value, opts Options) ([]interp.Value, error) {
	m, err := Load(f, opts)
	if err != nil {
		return nil, err
	}
	return m.Execute(inputs)
}

// Execute binds inputs (tensors are copied into their planned windows, or
// into fresh buffers when unplanned; non-tensor inputs replace their value),
// runs every chain's instructions and returns the outputs: tensors decoded
// from their memory (copies), other values as they stand. As in ExecuTorch,
// where an unplanned input shares the caller's memory, a tensor input
// bound to an unplanned value that the method writes (a user input's
// write-back copy_) is updated in place (shared_inputs.go); a planned
// input is a copy, and the caller's tensor is left as it was.
//
// A runner bug that panics on a malformed program is returned as an error
// naming the file (the hostile-input tests fail on it); it never crashes
// the caller.
func (m *Method) Execute(inputs []interp.Value) (outs []interp.Value, err error) {
	defer func() {
		if r := recover(); r != nil {
			outs, err = nil, fmt.Errorf("%s: method %s: internal error, please report it (runner panic: %v)", m.file.Name, m.name, r)
		}
	}()
	return m.execute(inputs)
}

func (m *Method) execute(inputs []interp.Value) ([]interp.Value, error) {
	where := fmt.Sprintf("%s: method %s", m.file.Name, m.name)
	if len(inputs) != len(m.plan.Inputs) {
		return nil, fmt.Errorf("%s: %d inputs given, the method takes %d", where, len(inputs), len(m.plan.Inputs))
	}
	m.shared = m.shared[:0]
	for i, vi := range m.plan.Inputs {
		if err := m.bindInput(int(vi), inputs[i]); err != nil {
			return nil, fmt.Errorf("%s: input %d (value %d): %w", where, i, vi, err)
		}
		s, isSlot := m.vals[vi].(*slot)
		if t, isT := inputs[i].(*interp.Tensor); isSlot && isT {
			m.shareInput(i, s, t)
		}
	}
	for ci, ch := range m.plan.Chains {
		if ch == nil {
			continue
		}
		steps, maxSteps := 0, m.maxSteps
		for pc := 0; pc < len(ch.Instructions); {
			if steps++; steps > maxSteps {
				return nil, fmt.Errorf("%s: chain %d: more than %d instructions run (a loop that does not end? raise the limit with --max-instructions)", where, ci, maxSteps)
			}
			next, err := m.step(ch.Instructions[pc], pc)
			if err != nil {
				return nil, fmt.Errorf("%s: chain %d: instruction %d: %w", where, ci, pc, err)
			}
			pc = next
		}
	}
	outs := make([]interp.Value, len(m.plan.Outputs))
	for i, vi := range m.plan.Outputs {
		v, err := m.value(int(vi))
		if err != nil {
			return nil, fmt.Errorf("%s: output %d (value %d): %w", where, i, vi, err)
		}
		outs[i] = v
	}
	if err := m.writeBackShared(); err != nil {
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	return outs, nil
}

func (m *Method) bindInput(vi int, in interp.Value) error {
	if vi < 0 || vi >= len(m.vals) {
		return fmt.Errorf("value index out of range")
	}
	s, ok := m.vals[vi].(*slot)
	if !ok {
		switch in.(type) {
		case int64, float64, bool, string, nil:
			m.vals[vi] = in
			return nil
		case *interp.Tensor:
			t := in.(*interp.Tensor)
			if t.Numel() != 1 {
				return fmt.Errorf("a %d-element tensor for a %T input", t.Numel(), m.vals[vi])
			}
			x, err := t.Item()
			if err != nil {
				return err
			}
			if _, isInt := m.vals[vi].(int64); isInt {
				if f, ok := x.(float64); ok {
					x = int64(f)
				}
			}
			if _, isF := m.vals[vi].(float64); isF {
				if i, ok := x.(int64); ok {
					x = float64(i)
				}
			}
			m.vals[vi] = x
			return nil
		}
		return fmt.Errorf("input of kind %T for a %T value", in, m.vals[vi])
	}
	t, ok := in.(*interp.Tensor)
	if !ok {
		return fmt.Errorf("expected a tensor, got %s", interp.Describe(in))
	}
	if t.Rank() != len(s.sizes) {
		return fmt.Errorf("input shape %v, declared %v", t.Shape, s.sizes)
	}
	if s.dyn == etfb.TensorShapeDynamismSTATIC || s.planned {
		for i, d := range t.Shape {
			if (s.dyn == etfb.TensorShapeDynamismSTATIC && d != s.sizes[i]) || d > s.sizes[i] {
				return fmt.Errorf("input shape %v, declared %v (%s)", t.Shape, s.sizes, etfb.EnumNamesTensorShapeDynamism[s.dyn])
			}
		}
	}
	if t.DType != s.dt {
		return fmt.Errorf("input dtype %s, declared %s", t.DType, s.dt)
	}
	return s.write(t)
}

// value returns a value of the table as an interpreter value: tensors are
// decoded, lists resolved. A list's items are resolved one level deep: an
// item that is itself a list is refused (ExecuTorch's lists hold tensors
// or scalars), so a list that lists itself or a cycle of lists is an
// error, not a recursion.
func (m *Method) value(vi int) (interp.Value, error) {
	if vi < 0 || vi >= len(m.vals) {
		return nil, fmt.Errorf("value index %d out of range (%d values)", vi, len(m.vals))
	}
	switch v := m.vals[vi].(type) {
	case intList:
		out := make([]interp.Value, len(v))
		for i, e := range v {
			x, err := m.item(vi, int(e))
			if err != nil {
				return nil, fmt.Errorf("IntList item %d: %w", i, err)
			}
			if _, ok := x.(int64); !ok {
				return nil, fmt.Errorf("IntList item %d: value %d is %s, not an Int", i, e, interp.Describe(x))
			}
			out[i] = x
		}
		return out, nil
	case doubleList:
		out := make([]interp.Value, len(v))
		for i, e := range v {
			out[i] = e
		}
		return out, nil
	case boolList:
		out := make([]interp.Value, len(v))
		for i, e := range v {
			out[i] = e
		}
		return out, nil
	case tensorList:
		out := make([]interp.Value, len(v))
		for i, e := range v {
			x, err := m.item(vi, int(e))
			if err != nil {
				return nil, fmt.Errorf("TensorList item %d: %w", i, err)
			}
			out[i] = x
		}
		return out, nil
	case optTensorList:
		out := make([]interp.Value, len(v))
		for i, e := range v {
			if e < 0 {
				continue
			}
			x, err := m.item(vi, int(e))
			if err != nil {
				return nil, fmt.Errorf("OptionalTensorList item %d: %w", i, err)
			}
			out[i] = x
		}
		return out, nil
	}
	return m.scalar(vi)
}

// isList reports whether v is one of the list kinds of the value table.
func isList(v any) bool {
	switch v.(type) {
	case intList, doubleList, boolList, tensorList, optTensorList, []interp.Value:
		return true
	}
	return false
}

// item resolves item e of list value li: a value that is not a list.
func (m *Method) item(li, e int) (interp.Value, error) {
	if e < 0 || e >= len(m.vals) {
		return nil, fmt.Errorf("value index %d out of range (%d values)", e, len(m.vals))
	}
	if isList(m.vals[e]) {
		if e == li {
			return nil, fmt.Errorf("value %d lists itself", e)
		}
		return nil, fmt.Errorf("value %d is a list inside list %d", e, li)
	}
	return m.scalar(e)
}

// scalar returns a non-list value: a tensor decoded, anything else as it
// stands.
func (m *Method) scalar(vi int) (interp.Value, error) {
	if s, ok := m.vals[vi].(*slot); ok {
		return s.read()
	}
	return m.vals[vi], nil
}

// step runs one instruction and returns the next program counter.
func (m *Method) step(in *etfb.InstructionT, pc int) (int, error) {
	if in == nil || in.InstrArgs == nil {
		return 0, fmt.Errorf("empty instruction")
	}
	switch x := in.InstrArgs.Value.(type) {
	case *etfb.KernelCallT:
		return pc + 1, m.kernelCall(x)
	case *etfb.DelegateCallT:
		return pc + 1, m.delegateCall(x)
	case *etfb.MoveCallT:
		return pc + 1, m.move(int(x.MoveFrom), int(x.MoveTo))
	case *etfb.JumpFalseCallT:
		c, err := m.value(int(x.CondValueIndex))
		if err != nil {
			return 0, fmt.Errorf("JumpFalseCall: %w", err)
		}
		b, ok := c.(bool)
		if !ok {
			if t, isT := c.(*interp.Tensor); isT && t.Numel() == 1 {
				it, _ := t.Item()
				b, ok = it.(bool)
			}
		}
		if !ok {
			return 0, fmt.Errorf("JumpFalseCall: condition value %d is %s, not a bool", x.CondValueIndex, interp.Describe(c))
		}
		if b {
			return pc + 1, nil
		}
		return int(x.DestinationInstruction), nil
	case *etfb.FreeCallT:
		// Memory of dynamically unbound tensors: nothing to release here.
		return pc + 1, nil
	}
	return 0, fmt.Errorf("instruction kind %s is not supported", etfb.EnumNamesInstructionArguments[in.InstrArgs.Type])
}

// move copies value from into value to (a tensor's contents, or the
// value); with Options.AliasingMoves it assigns the value itself, so a
// tensor destination aliases the source's memory from then on.
func (m *Method) move(from, to int) error {
	v, err := m.value(from)
	if err != nil {
		return fmt.Errorf("MoveCall: %w", err)
	}
	if to < 0 || to >= len(m.vals) {
		return fmt.Errorf("MoveCall: destination %d out of range", to)
	}
	if m.alias {
		_, dstT := m.vals[to].(*slot)
		_, srcT := m.vals[from].(*slot)
		if dstT != srcT {
			return fmt.Errorf("MoveCall: %s into %T value %d", interp.Describe(v), m.vals[to], to)
		}
		m.vals[to] = m.vals[from]
		return nil
	}
	if s, ok := m.vals[to].(*slot); ok {
		t, ok := v.(*interp.Tensor)
		if !ok {
			return fmt.Errorf("MoveCall: %s into tensor value %d", interp.Describe(v), to)
		}
		return s.write(t)
	}
	m.vals[to] = m.vals[from]
	return nil
}
