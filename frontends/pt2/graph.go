package pt2

import (
	"fmt"
	"strconv"

	"github.com/fxport/fxport/internal/pt2schema"
	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/ir/sym"
)

// graphState is one graph under construction.
type graphState struct {
	g     *ir.Graph
	b     *ir.Builder
	synth []synthValue
	next  int
}

// synthValue is a value the file does not name (a None result, a literal
// input): it gets a temporary name that no file name can take and is
// renamed FX-style from base once every name of the graph is known.
type synthValue struct {
	v        *ir.Value
	base     string
	sigInput int // index in the program signature's inputs, or -1
}

func (gs *graphState) tempName() string {
	gs.next++
	return "\x00" + strconv.Itoa(gs.next)
}

func (gs *graphState) noteSynth(v *ir.Value, base string, sigInput int) {
	gs.synth = append(gs.synth, synthValue{v, base, sigInput})
}

// at builds a JSON-path error below d's path.
func at(d *pt2schema.Decoder, suffix, format string, args ...any) error {
	return &pt2schema.Error{Path: d.Path() + suffix, Msg: fmt.Sprintf(format, args...)}
}

// graph fills g from a Graph object. sig is the program's signature for
// the main graph (sigPath its JSON path), nil for a region.
func (r *reader) graph(g *ir.Graph, d *pt2schema.Decoder, sig *pt2schema.GraphSignature, sigPath string) error {
	f, err := d.Fields()
	if err != nil {
		return err
	}
	gs := &graphState{g: g, b: ir.NewBuilder(g)}
	var inputs []pt2schema.Argument
	inPath := d.Path() + ".inputs"
	if id := f["inputs"]; id != nil {
		inPath = id.Path()
		if err := id.Array(func(int) error {
			a, err := pt2schema.DecodeArgument(id)
			inputs = append(inputs, a)
			return err
		}); err != nil {
			return err
		}
	}
	if sig != nil {
		err = r.mainInputs(gs, inputs, sig, inPath, sigPath)
	} else {
		err = r.regionInputs(gs, inputs, inPath)
	}
	if err != nil {
		return err
	}
	if nd := f["nodes"]; nd != nil {
		err := nd.Array(func(int) error {
			n, err := pt2schema.DecodeNode(nd)
			if err != nil {
				return err
			}
			return r.node(gs, &n, nd)
		})
		if err != nil {
			return err
		}
	}
	var outs []ir.Arg
	var outArgs []pt2schema.Argument
	outPath := d.Path() + ".outputs"
	if od := f["outputs"]; od != nil {
		outPath = od.Path()
		err := od.Array(func(j int) error {
			a, err := pt2schema.DecodeArgument(od)
			if err != nil {
				return err
			}
			x, err := r.arg(gs, &a, od.Path, nil)
			outArgs = append(outArgs, a)
			outs = append(outs, x)
			return err
		})
		if err != nil {
			return err
		}
	}
	g.SetOutputs(outs...)
	if sig != nil {
		if err := r.mainOutputs(outArgs, sig, outPath, sigPath); err != nil {
			return err
		}
	}
	if err := r.tables(gs, f); err != nil {
		return err
	}
	return r.finish(gs, inPath, d.Path()+".nodes")
}

// mainInputs creates the main graph's inputs from graph.inputs and the
// signature's input specs (same order, same length).
func (r *reader) mainInputs(gs *graphState, inputs []pt2schema.Argument, sig *pt2schema.GraphSignature, inPath, sigPath string) error {
	if len(inputs) != len(sig.Inputs) {
		return &pt2schema.Error{Path: inPath, Msg: fmt.Sprintf("%d graph inputs but the signature has %d input specs", len(inputs), len(sig.Inputs))}
	}
	for i := range sig.Inputs {
		spec := &sig.Inputs[i]
		ga := &inputs[i]
		specPath := fmt.Sprintf("%s.input_specs[%d]", sigPath, i)
		gaPath := fmt.Sprintf("%s[%d]", inPath, i)
		in := ir.InputSpec{Target: spec.Target}
		var typ ir.Type
		name := spec.Arg.Name
		switch spec.Kind {
		case pt2schema.InUserInput:
			in.Kind = ir.UserInput
			if !spec.Arg.Tag.IsRef() {
				lit, ok := literalArg(&spec.Arg)
				if !ok {
					return &pt2schema.Error{Path: specPath, Msg: fmt.Sprintf("user input of kind %s is not supported", spec.Arg.Tag)}
				}
				in.Kind, in.Value, typ, name = ir.ConstantInput, lit, literalType(lit), ""
			} else if spec.Arg.Tag == pt2schema.TagCustomObj {
				typ = &ir.OpaqueType{Class: spec.Arg.Str}
			}
		case pt2schema.InParameter:
			in.Kind = ir.Parameter
		case pt2schema.InBuffer:
			in.Kind = ir.Buffer
			in.Persistent = spec.Persistent != nil && *spec.Persistent
		case pt2schema.InTensorConstant:
			in.Kind = ir.ConstantTensor
		case pt2schema.InCustomObj:
			in.Kind = ir.CustomObj
			typ = &ir.OpaqueType{Class: spec.Arg.Str}
		case pt2schema.InToken:
			in.Kind = ir.TokenInput
			typ = ir.Token
		case pt2schema.InConstantInput:
			in.Kind = ir.ConstantInput
			lit, ok := literalArg(&spec.Value)
			if !ok {
				return &pt2schema.Error{Path: specPath, Msg: "constant input has no value"}
			}
			in.Value, typ, name = lit, literalType(lit), spec.Name
		}
		if in.Kind == ir.UserInput {
			in.Target = ""
		}
		if name != "" {
			if !validName(name) {
				return &pt2schema.Error{Path: specPath, Msg: fmt.Sprintf("%q is not a valid value name", name)}
			}
			if ga.Tag.IsRef() && ga.Name != name {
				return &pt2schema.Error{Path: gaPath, Msg: fmt.Sprintf("graph input is %q but %s names %q", ga.Name, specPath, name)}
			}
			if !ga.Tag.IsRef() && in.Kind != ir.ConstantInput {
				return &pt2schema.Error{Path: gaPath, Msg: fmt.Sprintf("graph input is a %s literal but %s names %q", ga.Tag, specPath, name)}
			}
		} else if ga.Tag.IsRef() {
			return &pt2schema.Error{Path: gaPath, Msg: fmt.Sprintf("graph input %q has a literal user-input spec", ga.Name)}
		}
		vname := name
		if vname == "" {
			vname = gs.tempName()
		}
		v, err := gs.g.AddInput(vname, typ)
		if err != nil {
			return &pt2schema.Error{Path: gaPath, Msg: err.Error()}
		}
		if name == "" {
			gs.noteSynth(v, "const_input", i)
		}
		in.Name = v.Name
		r.p.Signature.Inputs = append(r.p.Signature.Inputs, in)
	}
	return nil
}

// regionInputs creates a subgraph's inputs; each must name a value.
func (r *reader) regionInputs(gs *graphState, inputs []pt2schema.Argument, inPath string) error {
	for i := range inputs {
		a := &inputs[i]
		p := fmt.Sprintf("%s[%d]", inPath, i)
		if !a.Tag.IsRef() {
			return &pt2schema.Error{Path: p, Msg: fmt.Sprintf("subgraph input is a %s literal, not a value", a.Tag)}
		}
		if !validName(a.Name) {
			return &pt2schema.Error{Path: p, Msg: fmt.Sprintf("%q is not a valid value name", a.Name)}
		}
		var typ ir.Type
		if a.Tag == pt2schema.TagCustomObj {
			typ = &ir.OpaqueType{Class: a.Str}
		}
		if _, err := gs.g.AddInput(a.Name, typ); err != nil {
			return &pt2schema.Error{Path: p, Msg: err.Error()}
		}
	}
	return nil
}

var outputKinds = map[pt2schema.OutputKind]ir.OutputKind{
	pt2schema.OutUserOutput: ir.UserOutput, pt2schema.OutLossOutput: ir.LossOutput,
	pt2schema.OutBufferMutation: ir.BufferMutation, pt2schema.OutGradientToParameter: ir.GradientToParameter,
	pt2schema.OutGradientToUserInput: ir.GradientToUserInput, pt2schema.OutUserInputMutation: ir.UserInputMutation,
	pt2schema.OutToken: ir.TokenOutput, pt2schema.OutParameterMutation: ir.ParameterMutation,
}

// mainOutputs records the signature's output specs, checking that each
// names the graph output at its position.
func (r *reader) mainOutputs(outs []pt2schema.Argument, sig *pt2schema.GraphSignature, outPath, sigPath string) error {
	if len(outs) != len(sig.Outputs) {
		return &pt2schema.Error{Path: outPath, Msg: fmt.Sprintf("%d graph outputs but the signature has %d output specs", len(outs), len(sig.Outputs))}
	}
	for j := range sig.Outputs {
		spec := &sig.Outputs[j]
		if spec.Arg.Tag.IsRef() && (!outs[j].Tag.IsRef() || outs[j].Name != spec.Arg.Name) {
			return &pt2schema.Error{Path: fmt.Sprintf("%s.output_specs[%d]", sigPath, j), Msg: fmt.Sprintf("names %q but graph output %d is %s", spec.Arg.Name, j, describeArg(&outs[j]))}
		}
		r.p.Signature.Outputs = append(r.p.Signature.Outputs, ir.OutputSpec{Kind: outputKinds[spec.Kind], Target: spec.Target})
	}
	return nil
}

func describeArg(a *pt2schema.Argument) string {
	if a.Tag.IsRef() {
		return strconv.Quote(a.Name)
	}
	return "a " + a.Tag.String()
}

// tables types the graph's values from tensor_values and the sym_*_values
// and custom_obj_values tables. Entries for names the graph does not define
// are still checked (and their hints recorded).
func (r *reader) tables(gs *graphState, f map[string]*pt2schema.Decoder) error {
	g := gs.g
	set := func(name string, t ir.Type) {
		if v := g.Value(name); v != nil && v.Type == nil {
			v.SetType(t)
		}
	}
	if d := f["tensor_values"]; d != nil && !d.IsNull() {
		err := d.Map(func(name string) error {
			m, err := pt2schema.DecodeTensorMeta(d)
			if err != nil {
				return err
			}
			t, err := r.syms.tensorType(&m)
			if err != nil {
				return d.Errorf("%v", err)
			}
			set(name, t)
			return nil
		})
		if err != nil {
			return err
		}
	}
	if d := f["sym_int_values"]; d != nil && !d.IsNull() {
		err := d.Map(func(name string) error {
			s, err := pt2schema.DecodeSymInt(d)
			if err != nil {
				return err
			}
			e, err := r.syms.symInt(s)
			if err != nil {
				e = sym.Expr{} // an expression the IR cannot read: an unknown SymInt
			}
			set(name, &ir.SymIntType{Expr: e})
			return nil
		})
		if err != nil {
			return err
		}
	}
	if d := f["sym_bool_values"]; d != nil && !d.IsNull() {
		err := d.Map(func(name string) error {
			s, err := pt2schema.DecodeSymBool(d)
			if err != nil {
				return err
			}
			var e sym.Expr
			switch {
			case !s.IsExpr && s.Bool:
				e = sym.True()
			case !s.IsExpr:
				e = sym.False()
			default:
				if x, err := r.syms.parse(s.Expr); err == nil && x.IsBool() {
					e = x
				}
			}
			set(name, &ir.SymBoolType{Expr: e})
			return nil
		})
		if err != nil {
			return err
		}
	}
	if d := f["sym_float_values"]; d != nil && !d.IsNull() {
		err := d.Map(func(name string) error {
			if _, err := pt2schema.DecodeSymFloat(d); err != nil {
				return err
			}
			set(name, ir.SymFloat)
			return nil
		})
		if err != nil {
			return err
		}
	}
	if d := f["custom_obj_values"]; d != nil && !d.IsNull() {
		err := d.Map(func(name string) error {
			c, err := pt2schema.DecodeCustomObj(d)
			if err != nil {
				return err
			}
			set(name, &ir.OpaqueType{Class: c.ClassFQN})
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// finish checks that every value has a type (inferring node results the
// tables left out) and gives the synthetic values their final names.
func (r *reader) finish(gs *graphState, inPath, nodesPath string) error {
	g := gs.g
	for i, in := range g.Inputs {
		if in.Type == nil {
			return &pt2schema.Error{Path: fmt.Sprintf("%s[%d]", inPath, i), Msg: fmt.Sprintf("input %q has no type (it is in none of tensor_values, sym_int_values, sym_bool_values, sym_float_values, custom_obj_values)", in.Name)}
		}
	}
	i := 0
	for n := g.First(); n != nil; n = n.Next() {
		missing := ""
		for _, res := range n.Results {
			if res.Type == nil {
				missing = res.Name
				break
			}
		}
		if missing != "" && n.Op == ir.OpOpaqueCall {
			target := ""
			if len(n.Args) > 0 {
				target = n.Args[0].Str
			}
			return &pt2schema.Error{Path: fmt.Sprintf("%s[%d].target", nodesPath, i), Msg: fmt.Sprintf("unknown op %q, and torch recorded no type for its result %q: fxport can keep an op it does not know only with its result types", target, missing)}
		}
		if missing != "" {
			types, err := ir.InferTypes(n)
			if err == nil && len(types) != len(n.Results) {
				err = fmt.Errorf("inference gives %d results for %d", len(types), len(n.Results))
			}
			if err != nil {
				return &pt2schema.Error{Path: fmt.Sprintf("%s[%d]", nodesPath, i), Msg: fmt.Sprintf("value %q has no recorded type and inferring it failed: %v", missing, err)}
			}
			for k, res := range n.Results {
				if res.Type == nil {
					res.SetType(types[k])
				}
			}
		}
		if err := wrapSymScalars(gs, n); err != nil {
			return &pt2schema.Error{Path: fmt.Sprintf("%s[%d]", nodesPath, i), Msg: err.Error()}
		}
		i++
	}
	for _, s := range gs.synth {
		if err := s.v.Rename(g.FreshName(s.base)); err != nil {
			return err
		}
		if s.sigInput >= 0 {
			r.p.Signature.Inputs[s.sigInput].Name = s.v.Name
		}
	}
	return nil
}

// wrapSymScalars replaces a symbolic scalar given for a Tensor argument of n
// (torch.export writes aten.mul.Tensor(%x, %sym_size_int) for x * x.shape[0])
// by a 0-d tensor, aten.scalar_tensor(%sym) of the dtype torch wraps such
// numbers in (int64, float64, bool), inserted before n, so that Tensor slots
// hold tensors.
func wrapSymScalars(gs *graphState, n *ir.Node) error {
	info := n.Op.Info()
	if info.Schema.VarArgs {
		return nil
	}
	formals := info.Schema.Args
	for i, a := range n.Args {
		if i >= len(formals) {
			break
		}
		f := formals[i].Type
		if f.Base != ir.KTensor || f.List || a.Kind != ir.ArgValue || a.Value == nil {
			continue
		}
		var dt ir.DType
		switch a.Value.Type.(type) {
		case *ir.SymIntType:
			dt = ir.Int64
		case *ir.SymFloatType:
			dt = ir.Float64
		case *ir.SymBoolType:
			dt = ir.Bool
		default:
			continue
		}
		gs.b.SetInsertBefore(n)
		w, err := gs.b.CallKw(ir.OpAtenScalarTensor, []ir.Arg{a}, map[string]ir.Arg{"dtype": ir.DTypeArg(dt)})
		gs.b.SetInsertAtEnd()
		if err != nil {
			return fmt.Errorf("wrapping the %s given for %s argument %q as a tensor: %v", a.Value.Type, n.Op, formals[i].Name, err)
		}
		w.Meta = n.Meta.Clone()
		n.SetArg(i, ir.ValueArg(w.Results[0]))
	}
	return nil
}
