package fxtext

import (
	"fmt"
	"strings"

	"github.com/fxport/fxport/ir"
)

// Options configure Parse.
// MaxTextBytes bounds an FX text dump read from a file (64 MiB by default:
// torch's dump of a 100,000-node program is about 30 MB); fxport
// parse/export --max-text-bytes raises it. IR text shares the limit.
var MaxTextBytes int64 = DefaultMaxTextBytes

// DefaultMaxTextBytes is MaxTextBytes' default.
const DefaultMaxTextBytes = 64 << 20

// MaxListElements bounds one list, tuple, dict or argument list of a dump
// (100,000 by default: torch prints sizes, dims and operand lists, never
// data); fxport parse/export --max-list-elements raises it.
var MaxListElements = DefaultMaxListElements

// DefaultMaxListElements is MaxListElements' default.
const DefaultMaxListElements = 100_000

// tooMany is the error for a list longer than MaxListElements.
func tooMany(file string, p pos) error {
	return errAt(file, p, "a list of more than %d elements (raise the limit with --max-list-elements)", MaxListElements)
}

type Options struct {
	// InputTypes types the inputs a dump does not annotate (the graph and
	// code forms print no types), by placeholder name; lifted tensor
	// attributes (get_attr) may be keyed by node name or attribute path.
	InputTypes map[string]ir.Type
	// CheckTypes re-runs shape inference on every annotated node and fails
	// when the annotation and the inferred type differ.
	CheckTypes bool
}

// Parse reads an FX text dump in any of the forms torch prints (see Form;
// the form is detected) into a verified program. filename is used in error
// messages, which read "file:line:col: message" and name the node.
//
// Result types come from the dump's annotations where present, otherwise
// from shape inference (ir.InferTypes) given the input types. The program's
// weights are the parameters, buffers and constants the signature names,
// with their types and no data (a text dump has none).
func Parse(src []byte, filename string, opts Options) (*ir.Program, error) {
	form := Detect(src)
	if form == FormUnknown {
		return nil, errAt(filename, firstSignificant(string(src)), "not an FX text dump: expected \"graph():\", \"def forward(self, ...):\", \"class GraphModule(torch.nn.Module):\" or \"ExportedProgram:\"")
	}
	doc := splitDocument(string(src), form)
	var mod *fxModule
	var err error
	if form == FormGraph {
		mod, err = parseGraphForm(doc.code, filename)
	} else {
		mod, err = parsePython(doc.code, filename, 1)
	}
	if err != nil {
		return nil, err
	}
	var sig *graphSig
	if doc.signature != nil {
		if sig, err = parseSignature(doc.signature, filename); err != nil {
			return nil, err
		}
	}
	b := &builder{file: filename, opts: opts, prog: ir.NewProgram(), tokenInputs: map[string]bool{}, maxNodes: nodeBudget(len(src))}
	if doc.ranges != nil {
		ranges, err := parseRanges(doc.ranges, filename)
		if err != nil {
			return nil, err
		}
		for _, r := range ranges {
			b.prog.Env.Declare(r.name, r.r, nil, isUnbackedName(r.name))
		}
	}
	if sig != nil {
		for _, in := range sig.inputs {
			if in.kind == "TOKEN" {
				b.tokenInputs[in.name] = true
			}
		}
	}
	gb := newGraphBuilder(b, b.prog.Main, mod, true)
	if err := gb.build(nil, "forward"); err != nil {
		return nil, err
	}
	if err := gb.signature(sig); err != nil {
		return nil, err
	}
	if err := gb.weights(); err != nil {
		return nil, err
	}
	if err := ir.Verify(b.prog); err != nil {
		return nil, fmt.Errorf("%s: the program read from the dump is not valid: %w", filename, err)
	}
	return b.prog, nil
}

func firstSignificant(src string) pos {
	for i, line := range strings.Split(src, "\n") {
		t := strings.TrimSpace(line)
		if t != "" && !strings.HasPrefix(t, "#") {
			return pos{i + 1, len(line) - len(strings.TrimLeft(line, " \t")) + 1}
		}
	}
	return pos{1, 1}
}

// signature fills the program signature: lifted attributes first, then one
// spec per forward input (from the dump's graph signature when it has one,
// else user inputs), and one spec per output.
func (gb *gbuild) signature(sig *graphSig) error {
	p := gb.prog
	var s ir.Signature
	for _, l := range gb.lifted {
		s.Inputs = append(s.Inputs, ir.InputSpec{Kind: l.kind, Name: l.name, Target: l.target})
	}
	params := gb.fn.params
	if sig == nil {
		for _, prm := range params {
			s.Inputs = append(s.Inputs, ir.InputSpec{Kind: ir.UserInput, Name: prm.name})
		}
		for range gb.g.Outputs() {
			s.Outputs = append(s.Outputs, ir.OutputSpec{Kind: ir.UserOutput})
		}
		p.Signature = s
		return nil
	}
	if sig.legacy != nil {
		names := make([]string, len(params))
		for i, prm := range params {
			names[i] = prm.name
		}
		if err := sig.resolveLegacy(names, gb.outNames, gb.file); err != nil {
			return err
		}
	}
	if len(sig.inputs) != len(params) {
		return errAt(gb.file, sig.pos, "graph signature lists %d inputs, forward takes %d", len(sig.inputs), len(params))
	}
	for i, spec := range sig.inputs {
		if spec.name != params[i].name && !gb.rebinds(spec.name, params[i].name) {
			return errAt(gb.file, spec.pos, "graph signature input %d is %s, forward's input %d is %s", i, spec.name, i, params[i].name)
		}
		in := ir.InputSpec{Kind: inputKinds[spec.kind], Name: params[i].name, Persistent: spec.persistent}
		if spec.hasTarget && in.Kind != ir.UserInput {
			in.Target = spec.target
		}
		switch in.Kind {
		case ir.Parameter, ir.Buffer, ir.ConstantTensor, ir.CustomObj:
			if in.Target == "" {
				return errAt(gb.file, spec.pos, "graph signature: %s input %s has no target", spec.kind, spec.name)
			}
		}
		s.Inputs = append(s.Inputs, in)
	}
	outs := gb.g.Outputs()
	if len(sig.outputs) > len(outs) {
		sig.outputs = gb.dropAppliedMutations(sig.outputs, len(outs))
	}
	if len(sig.outputs) != len(outs) {
		return errAt(gb.file, sig.pos, "graph signature lists %d outputs, forward returns %d", len(sig.outputs), len(outs))
	}
	for i, spec := range sig.outputs {
		if spec.name != "" && i < len(gb.outNames) && gb.outNames[i] != "" && spec.name != gb.outNames[i] && gb.defines(spec.name) {
			// A name the graph does not define is stale (ExecuTorch's passes
			// rename nodes after the signature was recorded): the outputs
			// then correspond by position, as torch reads them.
			return errAt(gb.file, spec.pos, "graph signature output %d is %s, forward returns %s", i, spec.name, gb.outNames[i])
		}
		out := ir.OutputSpec{Kind: outputKinds[spec.kind]}
		if spec.hasTarget {
			out.Target = spec.target
		}
		if out.Kind != ir.UserOutput && out.Kind != ir.LossOutput && out.Kind != ir.TokenOutput && out.Target == "" {
			return errAt(gb.file, spec.pos, "graph signature: %s output %s has no target", spec.kind, spec.name)
		}
		s.Outputs = append(s.Outputs, out)
	}
	p.Signature = s
	return nil
}

// weights records the parameters, buffers and constants the signature
// names, typed like their inputs and without data.
func (gb *gbuild) weights() error {
	p := gb.prog
	for i, in := range p.Signature.Inputs {
		switch in.Kind {
		case ir.Parameter, ir.Buffer, ir.ConstantTensor:
			if ir.IsUnknown(p.Main.Inputs[i].Type) {
				return nil // recorded once the inputs are typed (Retype)
			}
		}
	}
	for i, in := range p.Signature.Inputs {
		switch in.Kind {
		case ir.Parameter, ir.Buffer, ir.ConstantTensor:
		default:
			continue
		}
		tt := ir.AsTensor(p.Main.Inputs[i].Type)
		if tt == nil {
			return fmt.Errorf("%s: %s input %s has type %s, not a tensor", gb.file, in.Kind, in.Name, p.Main.Inputs[i].Type)
		}
		if w := p.Weight(in.Target); w != nil {
			if !ir.TypesCompatible(w.Type, tt) {
				return fmt.Errorf("%s: %s is read as %s and as %s", gb.file, in.Target, w.Type, tt)
			}
			continue
		}
		p.AddWeight(&ir.Weight{Name: in.Target, Type: tt})
	}
	return nil
}

// dropAppliedMutations handles ExecuTorch's memory-planned programs, whose
// printed signature still lists the buffer mutations that the graph now
// performs itself (aten.copy_ into the buffer) and no longer returns: those
// specs are dropped when that makes the signature match the forward.
func (gb *gbuild) dropAppliedMutations(outs []sigSpec, want int) []sigSpec {
	returned := map[string]bool{}
	for _, n := range gb.outNames {
		returned[n] = true
	}
	var kept []sigSpec
	for _, o := range outs {
		if (o.kind == "BUFFER_MUTATION" || o.kind == "USER_INPUT_MUTATION") && !returned[o.name] {
			continue
		}
		kept = append(kept, o)
	}
	if len(kept) != want {
		return outs
	}
	return kept
}

// rebinds reports whether forward starts by binding name to the input
// param ("input_1 = input": FX prints a placeholder whose name differs from
// its target, e.g. one shadowing a Python builtin, so).
func (gb *gbuild) rebinds(name, param string) bool {
	for _, st := range gb.fn.stmts {
		if st.name == name {
			p, ok := st.rhs.simpleName()
			return ok && p == param
		}
	}
	return false
}

// defines reports whether forward assigns name or takes it as an input.
func (gb *gbuild) defines(name string) bool {
	for _, p := range gb.fn.params {
		if p.name == name {
			return true
		}
	}
	for _, st := range gb.fn.stmts {
		if st.name == name {
			return true
		}
		for _, a := range st.alias {
			if a == name {
				return true
			}
		}
	}
	return false
}
