package ir

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// Program metadata keys of the flat input and output names (DYN-S05). The
// names are stored as compact JSON arrays so they print and parse with the
// program; IONames and SetIONames are the typed way to read and write them.
const (
	// MetaInputNames holds one name per user input (user_input and
	// constant_input, in graph order).
	MetaInputNames = "io.input_names"
	// MetaOutputNames holds one name per user output (user_output and
	// loss_output, in order).
	MetaOutputNames = "io.output_names"
)

// UserInputs returns the graph inputs a program's in_spec flattens to:
// those of kind user_input and constant_input, in order.
func (p *Program) UserInputs() []*Value {
	var out []*Value
	for i, s := range p.Signature.Inputs {
		if (s.Kind == UserInput || s.Kind == ConstantInput) && i < len(p.Main.Inputs) {
			out = append(out, p.Main.Inputs[i])
		}
	}
	return out
}

// UserOutputs returns the indices of the main graph's outputs an out_spec
// flattens to: those of kind user_output and loss_output.
func (p *Program) UserOutputs() []int {
	var out []int
	for i, s := range p.Signature.Outputs {
		if s.Kind == UserOutput || s.Kind == LossOutput {
			out = append(out, i)
		}
	}
	return out
}

// IONames returns the recorded flat names: one per user input and one per
// user output. ok is false when none were recorded; an error means the
// metadata is malformed or no longer matches the program.
func (p *Program) IONames() (inputs, outputs []string, ok bool, err error) {
	in, hasIn := p.Meta.Get(MetaInputNames)
	out, hasOut := p.Meta.Get(MetaOutputNames)
	if !hasIn && !hasOut {
		return nil, nil, false, nil
	}
	if inputs, err = parseNameList(MetaInputNames, in); err != nil {
		return nil, nil, false, err
	}
	if outputs, err = parseNameList(MetaOutputNames, out); err != nil {
		return nil, nil, false, err
	}
	if n := len(p.UserInputs()); n != len(inputs) {
		return nil, nil, false, fmt.Errorf("meta %q names %d inputs, the program has %d user inputs", MetaInputNames, len(inputs), n)
	}
	if n := len(p.UserOutputs()); n != len(outputs) {
		return nil, nil, false, fmt.Errorf("meta %q names %d outputs, the program has %d user outputs", MetaOutputNames, len(outputs), n)
	}
	return inputs, outputs, true, nil
}

// SetIONames records the flat names and reports whether that changed the
// program's metadata.
func (p *Program) SetIONames(inputs, outputs []string) (changed bool) {
	changed = p.setMeta(MetaInputNames, jsonStrings(inputs))
	return p.setMeta(MetaOutputNames, jsonStrings(outputs)) || changed
}

func (p *Program) setMeta(key, value string) bool {
	if old, ok := p.Meta.Get(key); ok && old == value {
		return false
	}
	p.Meta.Set(key, value)
	return true
}

func parseNameList(key, text string) ([]string, error) {
	var names []string
	if err := json.Unmarshal([]byte(text), &names); err != nil {
		return nil, fmt.Errorf("meta %q: want a JSON array of strings: %v", key, err)
	}
	return names, nil
}

// jsonStrings encodes names as a compact JSON array, without HTML escaping.
func jsonStrings(names []string) string {
	if names == nil {
		names = []string{}
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(names) // []string always encodes
	return strings.TrimSuffix(b.String(), "\n")
}
