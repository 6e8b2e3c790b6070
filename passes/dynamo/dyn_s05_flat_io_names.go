package dynamo

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/pm"
	"github.com/fxport/fxport/pytree"
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

func runFlatIONames(p *ir.Program, c *pm.Ctx) (pm.Result, error) {
	ins := p.UserInputs()
	inNames, err := inputNames(p, ins)
	if err != nil {
		return pm.Result{}, err
	}
	outs := p.UserOutputs()
	outNames, err := outputNames(p, outs)
	if err != nil {
		return pm.Result{}, err
	}
	changed := p.SetIONames(inNames, outNames)
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

func listNames(names []string) string { return "[" + strings.Join(names, ", ") + "]" }

func valueList(vs []*ir.Value) string {
	parts := make([]string, len(vs))
	for i, v := range vs {
		parts[i] = v.String()
	}
	return strings.Join(parts, ", ")
}
