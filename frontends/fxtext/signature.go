package fxtext

import (
	"regexp"
	"strings"

	"github.com/fxport/fxport/ir"
)

// sigSpec is one input or output spec of a printed graph signature.
type sigSpec struct {
	name       string
	kind       string // torch's enum name: USER_INPUT, PARAMETER, BUFFER_MUTATION, ...
	target     string
	hasTarget  bool
	persistent bool
	pos        pos
}

// graphSig is a parsed "Graph signature:" section, in one of three spellings:
// the block form ("# inputs" / "# outputs" lines, torch >= 2.5), the
// dataclass repr (ExportGraphSignature(input_specs=[InputSpec(...)], ...),
// torch 2.2-2.4) or the legacy dict repr (ExportGraphSignature(parameters=...,
// inputs_to_parameters={...}, ...), torch 2.1).
type graphSig struct {
	pos     pos
	inputs  []sigSpec
	outputs []sigSpec
	legacy  *legacySig
}

// legacySig is the torch 2.1 signature: roles keyed by placeholder and output names.
type legacySig struct {
	params, buffers map[string]string // input name -> FQN
	userInputs      map[string]bool
	bufferMutations map[string]string // output name -> buffer FQN
	userOutputs     map[string]bool
}

var inputKinds = map[string]ir.InputKind{
	"USER_INPUT": ir.UserInput, "PARAMETER": ir.Parameter, "BUFFER": ir.Buffer,
	"CONSTANT_TENSOR": ir.ConstantTensor, "CUSTOM_OBJ": ir.CustomObj, "TOKEN": ir.TokenInput,
}

var outputKinds = map[string]ir.OutputKind{
	"USER_OUTPUT": ir.UserOutput, "LOSS_OUTPUT": ir.LossOutput, "BUFFER_MUTATION": ir.BufferMutation,
	"GRADIENT_TO_PARAMETER": ir.GradientToParameter, "GRADIENT_TO_USER_INPUT": ir.GradientToUserInput,
	"USER_INPUT_MUTATION": ir.UserInputMutation, "TOKEN": ir.TokenOutput, "PARAMETER_MUTATION": ir.ParameterMutation,
}

func parseSignature(sec *section, file string) (*graphSig, error) {
	body := strings.TrimSpace(sec.text)
	sig := &graphSig{pos: sec.pos}
	if strings.HasPrefix(body, "ExportGraphSignature(") {
		return sig, sig.parseRepr(sec, file)
	}
	return sig, sig.parseBlock(sec, file)
}

// parseBlock reads the "# inputs" / "# outputs" spelling.
func (sig *graphSig) parseBlock(sec *section, file string) error {
	lines, err := lexLines(sec.text, file, sec.pos.line)
	if err != nil {
		return err
	}
	mode := ""
	for i := range lines {
		ll := &lines[i]
		if ll.isComment {
			switch ll.comment {
			case "inputs":
				mode = "inputs"
			case "outputs":
				mode = "outputs"
			}
			continue
		}
		if mode == "" {
			return errAt(file, ll.pos, "graph signature: expected \"# inputs\" before the first spec")
		}
		spec, err := blockSpec(ll, file)
		if err != nil {
			return err
		}
		if mode == "inputs" {
			if _, ok := inputKinds[spec.kind]; !ok {
				return errAt(file, spec.pos, "graph signature: unknown input kind %s", spec.kind)
			}
			sig.inputs = append(sig.inputs, spec)
		} else {
			if _, ok := outputKinds[spec.kind]; !ok {
				return errAt(file, spec.pos, "graph signature: unknown output kind %s", spec.kind)
			}
			sig.outputs = append(sig.outputs, spec)
		}
	}
	return nil
}

// blockSpec reads "name: KIND [target='fqn'] [persistent=True]".
func blockSpec(ll *logicalLine, file string) (sigSpec, error) {
	toks := ll.toks
	spec := sigSpec{pos: ll.pos}
	i := 0
	if len(toks) > 0 && toks[0].kind == tName && len(toks) > 1 && toks[1].kind == tOp && toks[1].text == ":" {
		spec.name = toks[0].text
		i = 2
	} else if len(toks) > 0 && toks[0].kind == tOp && toks[0].text == ":" {
		i = 1 // a constant output has an empty name
	} else {
		return spec, errAt(file, ll.pos, "graph signature: expected \"name: KIND\"")
	}
	if i >= len(toks) || toks[i].kind != tName {
		return spec, errAt(file, ll.pos, "graph signature: expected a kind after %q", spec.name+":")
	}
	spec.kind = toks[i].text
	i++
	for i < len(toks) {
		if i+2 >= len(toks) {
			return spec, errAt(file, toks[i].pos, "graph signature: expected key=value, found %s", toks[i].describe())
		}
		key, eq, val := toks[i], toks[i+1], toks[i+2]
		if key.kind != tName || eq.kind != tOp || eq.text != "=" {
			return spec, errAt(file, key.pos, "graph signature: expected key=value, found %s", key.describe())
		}
		switch {
		case key.text == "target" && val.kind == tString:
			spec.target, spec.hasTarget = val.text, true
		case key.text == "target" && val.kind == tName && val.text == "None":
		case key.text == "persistent" && val.kind == tName && (val.text == "True" || val.text == "False" || val.text == "None"):
			spec.persistent = val.text == "True"
		default:
			return spec, errAt(file, key.pos, "graph signature: unexpected %s=%s", key.text, val.text)
		}
		i += 3
	}
	return spec, nil
}

var enumRepr = regexp.MustCompile(`<(InputKind|OutputKind)\.([A-Z_]+): -?\d+>`)

// parseRepr reads the ExportGraphSignature(...) repr spellings.
func (sig *graphSig) parseRepr(sec *section, file string) error {
	// "<InputKind.PARAMETER: 2>" is not Python syntax; read it as InputKind.PARAMETER
	// (padded to keep columns).
	text := enumRepr.ReplaceAllStringFunc(sec.text, func(m string) string {
		sub := enumRepr.FindStringSubmatch(m)
		r := sub[1] + "." + sub[2]
		return r + strings.Repeat(" ", len(m)-len(r))
	})
	lines, err := lexLines(text, file, sec.pos.line)
	if err != nil {
		return err
	}
	var toks []token
	for _, ll := range lines {
		toks = append(toks, ll.toks...)
	}
	ps := &parser{file: file, src: text, toks: toks, endAt: sec.pos}
	e, err := ps.test()
	if err != nil {
		return err
	}
	if !ps.atEnd() {
		return errAt(file, ps.peek().pos, "graph signature: unexpected %s", ps.peek().describe())
	}
	if e.kind != eCall || e.fn.kind != eName || e.fn.name != "ExportGraphSignature" {
		return errAt(file, e.pos, "graph signature: expected ExportGraphSignature(...)")
	}
	kw := map[string]*expr{}
	for i, k := range e.keys {
		kw[k] = e.kw[i]
	}
	if _, ok := kw["input_specs"]; ok {
		for _, key := range []string{"input_specs", "output_specs"} {
			list := kw[key]
			if list == nil || list.kind != eList {
				return errAt(file, e.pos, "graph signature: %s must be a list", key)
			}
			for _, item := range list.elems {
				spec, err := reprSpec(item, file, key == "input_specs")
				if err != nil {
					return err
				}
				if key == "input_specs" {
					sig.inputs = append(sig.inputs, spec)
				} else {
					sig.outputs = append(sig.outputs, spec)
				}
			}
		}
		return nil
	}
	return sig.parseLegacy(kw, e, file)
}

// reprSpec reads InputSpec(kind=InputKind.X, arg=TensorArgument(name='x'), target=..., persistent=...).
func reprSpec(item *expr, file string, input bool) (sigSpec, error) {
	want := "OutputSpec"
	if input {
		want = "InputSpec"
	}
	if item.kind != eCall || item.fn.kind != eName || item.fn.name != want {
		return sigSpec{}, errAt(file, item.pos, "graph signature: expected %s(...)", want)
	}
	spec := sigSpec{pos: item.pos}
	for i, k := range item.keys {
		v := item.kw[i]
		switch k {
		case "kind":
			if v.kind != eName {
				return spec, errAt(file, v.pos, "graph signature: bad kind")
			}
			spec.kind = v.name[strings.LastIndex(v.name, ".")+1:]
			if input {
				if _, ok := inputKinds[spec.kind]; !ok {
					return spec, errAt(file, v.pos, "graph signature: unknown input kind %s", spec.kind)
				}
			} else if _, ok := outputKinds[spec.kind]; !ok {
				return spec, errAt(file, v.pos, "graph signature: unknown output kind %s", spec.kind)
			}
		case "arg":
			if v.kind != eCall || v.fn.kind != eName {
				return spec, errAt(file, v.pos, "graph signature: bad arg")
			}
			for j, ak := range v.keys {
				av := v.kw[j]
				switch ak {
				case "name":
					if av.kind != eStr {
						return spec, errAt(file, av.pos, "graph signature: arg name must be a string")
					}
					spec.name = av.s
				}
			}
		case "target":
			switch {
			case v.kind == eStr:
				spec.target, spec.hasTarget = v.s, true
			case v.kind == eName && v.name == "None":
			default:
				return spec, errAt(file, v.pos, "graph signature: target must be a string or None")
			}
		case "persistent":
			spec.persistent = v.kind == eName && v.name == "True"
		}
	}
	if spec.kind == "" {
		return spec, errAt(file, item.pos, "graph signature: %s without kind", want)
	}
	return spec, nil
}

// parseLegacy reads the torch 2.1 repr: parameters=[...], buffers=[...],
// user_inputs=[...], user_outputs=[...], inputs_to_parameters={...},
// inputs_to_buffers={...}, buffers_to_mutate={...}.
func (sig *graphSig) parseLegacy(kw map[string]*expr, e *expr, file string) error {
	l := &legacySig{params: map[string]string{}, buffers: map[string]string{}, userInputs: map[string]bool{},
		bufferMutations: map[string]string{}, userOutputs: map[string]bool{}}
	strDict := func(key string, into map[string]string) error {
		d := kw[key]
		if d == nil {
			return nil
		}
		if d.kind != eDict {
			return errAt(file, d.pos, "graph signature: %s must be a dict", key)
		}
		for i, k := range d.keys {
			v := d.elems[i]
			if v.kind != eStr {
				return errAt(file, v.pos, "graph signature: %s values must be strings", key)
			}
			into[k] = v.s
		}
		return nil
	}
	strList := func(key string, into map[string]bool) error {
		d := kw[key]
		if d == nil {
			return nil
		}
		if d.kind != eList {
			return errAt(file, d.pos, "graph signature: %s must be a list", key)
		}
		for _, v := range d.elems {
			if v.kind != eStr {
				return errAt(file, v.pos, "graph signature: %s items must be strings", key)
			}
			into[v.s] = true
		}
		return nil
	}
	if kw["inputs_to_parameters"] == nil && kw["user_inputs"] == nil {
		return errAt(file, e.pos, "graph signature: neither input_specs nor inputs_to_parameters/user_inputs")
	}
	for _, err := range []error{
		strDict("inputs_to_parameters", l.params), strDict("inputs_to_buffers", l.buffers),
		strDict("buffers_to_mutate", l.bufferMutations),
		strList("user_inputs", l.userInputs), strList("user_outputs", l.userOutputs),
	} {
		if err != nil {
			return err
		}
	}
	sig.legacy = l
	return nil
}

// resolveLegacy turns a legacy signature into specs, given the graph's input
// and output names.
func (sig *graphSig) resolveLegacy(inputs, outputs []string, file string) error {
	l := sig.legacy
	for _, name := range inputs {
		spec := sigSpec{name: name, pos: sig.pos}
		switch {
		case l.params[name] != "":
			spec.kind, spec.target, spec.hasTarget = "PARAMETER", l.params[name], true
		case l.buffers[name] != "":
			spec.kind, spec.target, spec.hasTarget, spec.persistent = "BUFFER", l.buffers[name], true, true
		case l.userInputs[name]:
			spec.kind = "USER_INPUT"
		default:
			return errAt(file, sig.pos, "graph signature: input %s is neither a parameter, a buffer nor a user input", name)
		}
		sig.inputs = append(sig.inputs, spec)
	}
	for _, name := range outputs {
		spec := sigSpec{name: name, pos: sig.pos}
		switch {
		case l.bufferMutations[name] != "":
			spec.kind, spec.target, spec.hasTarget = "BUFFER_MUTATION", l.bufferMutations[name], true
		case l.userOutputs[name]:
			spec.kind = "USER_OUTPUT"
		default:
			return errAt(file, sig.pos, "graph signature: output %s is neither a user output nor a buffer mutation", name)
		}
		sig.outputs = append(sig.outputs, spec)
	}
	return nil
}
