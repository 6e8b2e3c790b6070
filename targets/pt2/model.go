package pt2

import (
	"fmt"
	"sort"
	"strings"

	frontend "github.com/fxport/fxport/frontends/pt2"
	"github.com/fxport/fxport/internal/pt2schema"
	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/ir/sym"
)

// writer turns one program into the ExportedProgram JSON.
type writer struct {
	p *ir.Program
}

// program writes the ExportedProgram object, fields in schema.py order.
func (w *writer) program(e *pt2schema.Encoder) error {
	p := w.p
	e.BeginObject()
	e.Key("graph_module")
	e.BeginObject()
	e.Key("graph")
	if err := w.graph(e, p.Main, true); err != nil {
		return err
	}
	e.Key("signature")
	if err := w.signature(e); err != nil {
		return err
	}
	e.Key("module_call_graph")
	if err := w.moduleCallGraph(e); err != nil {
		return err
	}
	e.Key("metadata")
	var md []pt2schema.KV
	for _, kv := range p.Meta.Entries() {
		switch {
		case strings.HasPrefix(kv.Key, frontend.MetaEscape):
			md = append(md, pt2schema.KV{Key: strings.TrimPrefix(kv.Key, frontend.MetaEscape), Value: kv.Value})
		case !strings.HasPrefix(kv.Key, "pt2."):
			md = append(md, pt2schema.KV{Key: kv.Key, Value: kv.Value})
		}
	}
	sort.SliceStable(md, func(i, j int) bool { return md[i].Key < md[j].Key })
	pt2schema.EncodeStrMap(e, md)
	e.Key("treespec_namedtuple_fields")
	if err := metaJSON(e, p, frontend.MetaNamedTuples, "{}", validNamedTuples); err != nil {
		return err
	}
	e.EndObject()
	e.Key("opset_version")
	if err := metaJSON(e, p, frontend.MetaOpsetVersion, "{}", validOpset); err != nil {
		return err
	}
	e.Key("range_constraints")
	e.BeginObject()
	for _, s := range p.Env.Symbols() {
		r, _ := p.Env.Range(s)
		var rc pt2schema.RangeConstraint
		if v, ok := finite(r.Lo); ok {
			rc.HasMin, rc.Min = true, v
		}
		if v, ok := finite(r.Hi); ok {
			rc.HasMax, rc.Max = true, v
		}
		e.Key(s)
		pt2schema.EncodeRangeConstraint(e, rc)
	}
	e.EndObject()
	e.Key("schema_version")
	e.BeginObject()
	e.Key("major")
	e.Int(pt2schema.SchemaMajor)
	e.Key("minor")
	e.Int(pt2schema.SchemaMinor)
	e.EndObject()
	e.Key("verifiers")
	if err := metaJSON(e, p, frontend.MetaVerifiers, "[]", validStrs); err != nil {
		return err
	}
	e.Key("torch_version")
	tv, _ := p.Meta.Get(frontend.MetaTorchVersion)
	e.Str(tv)
	e.Key("guards_code")
	if err := metaJSON(e, p, frontend.MetaGuardsCode, "[]", validStrs); err != nil {
		return err
	}
	e.EndObject()
	return nil
}

// finite returns a bound's value unless it is infinite.
func finite(b sym.Bound) (int64, bool) { return b.V, b.IsFinite() }

// metaJSON writes the JSON text stored under a metadata key (def when
// absent), after checking its shape with check.
func metaJSON(e *pt2schema.Encoder, p *ir.Program, key, def string, check func(*pt2schema.Decoder) error) error {
	s, ok := p.Meta.Get(key)
	if !ok {
		s = def
	}
	d := pt2schema.NewDecoder([]byte(s))
	if err := check(d); err != nil {
		return fmt.Errorf("program metadata %q: %v", key, err)
	}
	if err := d.End(); err != nil {
		return fmt.Errorf("program metadata %q: %v", key, err)
	}
	e.RawValue([]byte(strings.TrimSpace(s)))
	return nil
}

func validStrs(d *pt2schema.Decoder) error { _, err := d.Strs(); return err }

func validOpset(d *pt2schema.Decoder) error {
	return d.Map(func(string) error { _, err := d.Int(); return err })
}

func validNamedTuples(d *pt2schema.Decoder) error {
	return d.Map(func(string) error {
		return d.Object(func(key string) error {
			if key != "field_names" {
				return d.Errorf("unexpected field")
			}
			return validStrs(d)
		})
	})
}

var inputKinds = map[ir.InputKind]pt2schema.InputKind{
	ir.UserInput: pt2schema.InUserInput, ir.Parameter: pt2schema.InParameter, ir.Buffer: pt2schema.InBuffer,
	ir.ConstantTensor: pt2schema.InTensorConstant, ir.CustomObj: pt2schema.InCustomObj,
	ir.ConstantInput: pt2schema.InConstantInput, ir.TokenInput: pt2schema.InToken,
}

var outputKinds = map[ir.OutputKind]pt2schema.OutputKind{
	ir.UserOutput: pt2schema.OutUserOutput, ir.LossOutput: pt2schema.OutLossOutput,
	ir.BufferMutation: pt2schema.OutBufferMutation, ir.GradientToParameter: pt2schema.OutGradientToParameter,
	ir.GradientToUserInput: pt2schema.OutGradientToUserInput, ir.UserInputMutation: pt2schema.OutUserInputMutation,
	ir.TokenOutput: pt2schema.OutToken, ir.ParameterMutation: pt2schema.OutParameterMutation,
}

// signature writes the graph signature.
func (w *writer) signature(e *pt2schema.Encoder) error {
	p := w.p
	e.BeginObject()
	e.Key("input_specs")
	e.BeginArray()
	for i, in := range p.Signature.Inputs {
		v := p.Main.Inputs[i]
		s := pt2schema.InputSpec{Kind: inputKinds[in.Kind], Target: in.Target}
		switch in.Kind {
		case ir.ConstantInput:
			lit, ok, err := literal(in.Value)
			switch lit.Tag {
			case pt2schema.TagNone, pt2schema.TagInt, pt2schema.TagFloat, pt2schema.TagString, pt2schema.TagBool:
			default:
				ok = false
			}
			if err != nil || !ok {
				return fmt.Errorf("constant input %s: %s is not a constant torch.export can store (None, int, float, str, bool)", v, in.Value)
			}
			s.Name, s.Value = v.Name, lit
		case ir.Buffer:
			pers := in.Persistent
			s.Persistent = &pers
			s.Arg = pt2schema.Argument{Tag: pt2schema.TagTensor, Name: v.Name}
		case ir.CustomObj:
			class := ""
			if t, ok := v.Type.(*ir.OpaqueType); ok {
				class = t.Class
			}
			s.Arg = pt2schema.Argument{Tag: pt2schema.TagCustomObj, Name: v.Name, Str: class}
		case ir.UserInput:
			a, err := valueRef(v)
			if err != nil {
				return err
			}
			s.Arg = a
		default:
			s.Arg = pt2schema.Argument{Tag: pt2schema.TagTensor, Name: v.Name}
		}
		if err := pt2schema.EncodeInputSpec(e, &s); err != nil {
			return err
		}
	}
	e.EndArray()
	e.Key("output_specs")
	e.BeginArray()
	outs := p.Main.Outputs()
	for j, out := range p.Signature.Outputs {
		s := pt2schema.OutputSpec{Kind: outputKinds[out.Kind], Target: out.Target}
		if out.Kind == ir.UserOutput {
			a, err := w.argument(outs[j], nil)
			if err != nil {
				return fmt.Errorf("output %d: %v", j, err)
			}
			s.Arg = a
		} else {
			if outs[j].Kind != ir.ArgValue {
				return fmt.Errorf("output %d (%s) is not a value", j, out.Kind)
			}
			s.Arg = pt2schema.Argument{Tag: pt2schema.TagTensor, Name: outs[j].Value.Name}
		}
		if err := pt2schema.EncodeOutputSpec(e, &s); err != nil {
			return err
		}
	}
	e.EndArray()
	e.EndObject()
	return nil
}

// moduleCallGraph writes the module call graph (a root entry made from the
// signature's pytree specs when the program has none).
func (w *writer) moduleCallGraph(e *pt2schema.Encoder) error {
	p := w.p
	calls := p.ModuleCallGraph
	if len(calls) == 0 && (p.Signature.InSpec != "" || p.Signature.OutSpec != "") {
		calls = []ir.ModuleCall{{FQN: "", InSpec: p.Signature.InSpec, OutSpec: p.Signature.OutSpec}}
	}
	e.BeginArray()
	for _, mc := range calls {
		m := pt2schema.ModuleCallEntry{FQN: mc.FQN}
		if len(mc.Inputs) > 0 || len(mc.Outputs) > 0 || mc.InSpec != "" || mc.OutSpec != "" {
			s := &pt2schema.ModuleCallSignature{InSpec: mc.InSpec, OutSpec: mc.OutSpec}
			var err error
			if s.Inputs, err = w.callArgs(mc.Inputs); err != nil {
				return fmt.Errorf("module call %q inputs: %v", mc.FQN, err)
			}
			if s.Outputs, err = w.callArgs(mc.Outputs); err != nil {
				return fmt.Errorf("module call %q outputs: %v", mc.FQN, err)
			}
			m.Signature = s
		}
		if err := pt2schema.EncodeModuleCallEntry(e, &m); err != nil {
			return err
		}
	}
	e.EndArray()
	return nil
}

// callArgs turns module-call argument strings back into Arguments.
func (w *writer) callArgs(ss []string) ([]pt2schema.Argument, error) {
	out := make([]pt2schema.Argument, 0, len(ss))
	for _, s := range ss {
		name, lit, isLit, err := frontend.ParseCallArg(s)
		if err != nil {
			return nil, err
		}
		if isLit {
			a, _, err := literal(lit)
			if err != nil {
				return nil, err
			}
			out = append(out, a)
			continue
		}
		a := pt2schema.Argument{Tag: pt2schema.TagTensor, Name: name}
		if v := w.p.Main.Value(name); v != nil {
			if r, err := valueRef(v); err == nil {
				a = r
			}
		}
		out = append(out, a)
	}
	return out, nil
}
