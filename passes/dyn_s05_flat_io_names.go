package passes

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/pm"
	"github.com/fxport/fxport/pytree"
)

// Program metadata keys of the Dynamo stages (docs/dynamo.md).
const (
	// MetaInputNames holds the flat names of the user inputs as a JSON
	// array of strings, one per input of kind user_input or
	// constant_input, in graph order. flat-io-names writes it.
	MetaInputNames = "io.input_names"
	// MetaOutputNames holds the flat names of the user outputs as a JSON
	// array of strings, one per output of kind user_output or
	// loss_output, in order. flat-io-names writes it.
	MetaOutputNames = "io.output_names"
)

// FlatIONames records the flat input and output names (DYN-S05).
var FlatIONames = pm.RegisterPass(&pm.Pass{
	Name:     "flat-io-names",
	ID:       "DYN-S05",
	Kind:     pm.KindTransform,
	Stage:    pm.StagePytree,
	Required: true,
	Doc: `record the flat input and output names from the signature's pytree specs

Decodes the in_spec and out_spec TreeSpec strings torch.export wrote
(including the JSON-native contexts of transformers' Cache classes and the
key lists of ModelOutput) and names every user input and user output by its
dotted leaf path, as the Python exporter names ONNX inputs and outputs:
"input_ids", "past_key_values.layers.0.keys", "logits"; a bare tensor output
is "output". The names go to the program metadata io.input_names and
io.output_names (JSON arrays, one name per user_input/constant_input and per
user_output/loss_output, in order); no value is renamed. Without a spec the
names are the placeholder names (inputs) and the returned values' names
(outputs). A spec whose leaf count differs from the number of user inputs
or outputs is an error naming the spec.`,
	Run: runFlatIONames,
})

// userInputs returns the graph inputs a program's in_spec flattens to:
// those of kind user_input and constant_input, in order.
func userInputs(p *ir.Program) []*ir.Value {
	var out []*ir.Value
	for i, s := range p.Signature.Inputs {
		if (s.Kind == ir.UserInput || s.Kind == ir.ConstantInput) && i < len(p.Main.Inputs) {
			out = append(out, p.Main.Inputs[i])
		}
	}
	return out
}

// userOutputs returns the indices of the main graph's outputs an out_spec
// flattens to: those of kind user_output and loss_output.
func userOutputs(p *ir.Program) []int {
	var out []int
	for i, s := range p.Signature.Outputs {
		if s.Kind == ir.UserOutput || s.Kind == ir.LossOutput {
			out = append(out, i)
		}
	}
	return out
}

func runFlatIONames(p *ir.Program, c *pm.Ctx) (pm.Result, error) {
	ins := userInputs(p)
	inNames, err := inputNames(p, ins)
	if err != nil {
		return pm.Result{}, err
	}
	outs := userOutputs(p)
	outNames, err := outputNames(p, outs)
	if err != nil {
		return pm.Result{}, err
	}
	changed := setMeta(p, MetaInputNames, jsonStrings(inNames))
	changed = setMeta(p, MetaOutputNames, jsonStrings(outNames)) || changed
	if changed {
		c.Fired(nil, "inputs "+listNames(inNames)+"; outputs "+listNames(outNames))
	}
	return pm.Result{Changed: changed}, nil
}

func inputNames(p *ir.Program, ins []*ir.Value) ([]string, error) {
	placeholders := make([]string, len(ins))
	for i, v := range ins {
		placeholders[i] = v.Name
	}
	if p.Signature.InSpec == "" {
		return placeholders, nil
	}
	s, err := pytree.Decode(p.Signature.InSpec)
	if err != nil {
		return nil, fmt.Errorf("in_spec: %w", err)
	}
	if n := s.NumLeaves(); n != len(ins) {
		return nil, fmt.Errorf("in_spec has %d leaves but the signature has %d user inputs (%s)", n, len(ins), valueList(ins))
	}
	names, err := pytree.InputNames(s, placeholders)
	if err != nil {
		return nil, fmt.Errorf("in_spec: %w", err)
	}
	return names, nil
}

func outputNames(p *ir.Program, outs []int) ([]string, error) {
	if p.Signature.OutSpec == "" {
		return fallbackOutputNames(p, outs), nil
	}
	s, err := pytree.Decode(p.Signature.OutSpec)
	if err != nil {
		return nil, fmt.Errorf("out_spec: %w", err)
	}
	if n := s.NumLeaves(); n != len(outs) {
		return nil, fmt.Errorf("out_spec has %d leaves but the signature has %d user outputs", n, len(outs))
	}
	names, err := pytree.OutputNames(s)
	if err != nil {
		return nil, fmt.Errorf("out_spec: %w", err)
	}
	return names, nil
}

// fallbackOutputNames names outputs after the values they return (as
// torch.onnx does without names); a literal output, or a value returned
// twice, is "output_<i>".
func fallbackOutputNames(p *ir.Program, outs []int) []string {
	graphOuts := p.Main.Outputs()
	seen := map[string]bool{}
	var names []string
	for _, i := range outs {
		name := "output_" + strconv.Itoa(i)
		if i < len(graphOuts) && graphOuts[i].Kind == ir.ArgValue && !seen[graphOuts[i].Value.Name] {
			name = graphOuts[i].Value.Name
		}
		seen[name] = true
		names = append(names, name)
	}
	return names
}

// IONames returns the names flat-io-names recorded: one per user input
// (user_input and constant_input, in graph order) and one per user output
// (user_output and loss_output). ok is false when none were recorded; an
// error means the metadata is malformed or no longer matches the program.
func IONames(p *ir.Program) (inputs, outputs []string, ok bool, err error) {
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
	if n := len(userInputs(p)); n != len(inputs) {
		return nil, nil, false, fmt.Errorf("meta %q names %d inputs, the program has %d user inputs", MetaInputNames, len(inputs), n)
	}
	if n := len(userOutputs(p)); n != len(outputs) {
		return nil, nil, false, fmt.Errorf("meta %q names %d outputs, the program has %d user outputs", MetaOutputNames, len(outputs), n)
	}
	return inputs, outputs, true, nil
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

// setMeta stores key=value and reports whether that changed the program.
func setMeta(p *ir.Program, key, value string) bool {
	if old, ok := p.Meta.Get(key); ok && old == value {
		return false
	}
	p.Meta.Set(key, value)
	return true
}

func listNames(names []string) string { return "[" + strings.Join(names, ", ") + "]" }

func valueList(vs []*ir.Value) string {
	parts := make([]string, len(vs))
	for i, v := range vs {
		parts[i] = v.String()
	}
	return strings.Join(parts, ", ")
}
