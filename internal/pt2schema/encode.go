package pt2schema

import (
	"fmt"
)

// Encoding writes every struct field, in the declaration order of torch's
// schema.py, as torch's serializer does.

// EncodeDevice writes a Device.
func EncodeDevice(e *Encoder, dev Device) {
	e.BeginObject()
	e.Key("type")
	e.Str(dev.Type)
	e.Key("index")
	if dev.Index != nil {
		e.Int(*dev.Index)
	} else {
		e.Null()
	}
	e.EndObject()
}

func encodeTensorRef(e *Encoder, name string) {
	e.BeginObject()
	e.Key("name")
	e.Str(name)
	e.EndObject()
}

func encodeSymRef(e *Encoder, a Argument) error {
	e.BeginObject()
	switch a.Tag {
	case TagSymInt, TagSymBool, TagSymFloat:
		e.Key("as_name")
		e.Str(a.Name)
	case TagInt:
		e.Key("as_int")
		e.Int(a.Int)
	case TagBool:
		e.Key("as_bool")
		e.Bool(a.Bool)
	case TagFloat:
		e.Key("as_float")
		e.Float(a.Float)
	default:
		return fmt.Errorf("%s cannot be a symbolic-argument element", a.Tag)
	}
	e.EndObject()
	return nil
}

func encodeOptionalTensor(e *Encoder, a Argument) error {
	e.BeginObject()
	switch a.Tag {
	case TagTensor:
		e.Key("as_tensor")
		encodeTensorRef(e, a.Name)
	case TagNone:
		e.Key("as_none")
		e.Bool(true)
	default:
		return fmt.Errorf("%s cannot be an optional-tensor element", a.Tag)
	}
	e.EndObject()
	return nil
}

// EncodeCustomObj writes a CustomObjArgument.
func EncodeCustomObj(e *Encoder, name, class string) {
	e.BeginObject()
	e.Key("name")
	e.Str(name)
	e.Key("class_fqn")
	e.Str(class)
	e.EndObject()
}

func encodeList[T any](e *Encoder, xs []T, f func(T) error) error {
	e.BeginArray()
	for _, x := range xs {
		if err := f(x); err != nil {
			return err
		}
	}
	e.EndArray()
	return nil
}

// EncodeArgument writes an Argument union.
func EncodeArgument(e *Encoder, a Argument) error {
	if a.Tag == TagInvalid || a.Tag >= numTags || a.Tag == TagOptionalTensor {
		return fmt.Errorf("cannot encode Argument tag %d", a.Tag)
	}
	e.BeginObject()
	e.Key(tagNames[a.Tag])
	var err error
	switch a.Tag {
	case TagNone:
		e.Bool(true)
	case TagTensor:
		encodeTensorRef(e, a.Name)
	case TagTensors:
		err = encodeList(e, a.Elems, func(x Argument) error { encodeTensorRef(e, x.Name); return nil })
	case TagInt, TagScalarType, TagMemoryFormat, TagLayout:
		e.Int(a.Int)
	case TagInts:
		err = encodeList(e, a.Ints, func(x int64) error { e.Int(x); return nil })
	case TagFloat:
		e.Float(a.Float)
	case TagFloats:
		err = encodeList(e, a.Floats, func(x float64) error { e.Float(x); return nil })
	case TagString, TagOperator:
		e.Str(a.Str)
	case TagStrings:
		err = encodeList(e, a.Strs, func(x string) error { e.Str(x); return nil })
	case TagBool:
		e.Bool(a.Bool)
	case TagBools:
		err = encodeList(e, a.Bools, func(x bool) error { e.Bool(x); return nil })
	case TagSymInt, TagSymBool, TagSymFloat:
		err = encodeSymRef(e, a)
	case TagSymInts, TagSymBools, TagSymFloats:
		err = encodeList(e, a.Elems, func(x Argument) error { return encodeSymRef(e, x) })
	case TagDevice:
		EncodeDevice(e, a.Device)
	case TagGraph:
		if a.Graph == nil || a.Graph.Write == nil {
			return fmt.Errorf("as_graph without a graph writer")
		}
		e.BeginObject()
		e.Key("name")
		e.Str(a.Graph.Name)
		e.Key("graph")
		err = a.Graph.Write(e)
		e.EndObject()
	case TagOptionalTensors:
		err = encodeList(e, a.Elems, func(x Argument) error { return encodeOptionalTensor(e, x) })
	case TagCustomObj:
		EncodeCustomObj(e, a.Name, a.Str)
	case TagComplex:
		e.BeginObject()
		e.Key("real")
		e.Float(a.Float)
		e.Key("imag")
		e.Float(a.Imag)
		e.EndObject()
	case TagNestedTensors:
		err = encodeList(e, a.Elems, func(x Argument) error {
			return encodeList(e, x.Elems, func(y Argument) error { encodeTensorRef(e, y.Name); return nil })
		})
	case TagIntLists:
		err = encodeList(e, a.Elems, func(x Argument) error {
			return encodeList(e, x.Ints, func(y int64) error { e.Int(y); return nil })
		})
	case TagFloatLists:
		err = encodeList(e, a.Elems, func(x Argument) error {
			return encodeList(e, x.Floats, func(y float64) error { e.Float(y); return nil })
		})
	case TagStringToArgument:
		e.BeginObject()
		for i, k := range a.Keys {
			e.Key(k)
			if err = EncodeArgument(e, a.Elems[i]); err != nil {
				return err
			}
		}
		e.EndObject()
	}
	if err != nil {
		return err
	}
	e.EndObject()
	return nil
}

// EncodeNamedArgument writes a NamedArgument.
func EncodeNamedArgument(e *Encoder, na NamedArgument) error {
	e.BeginObject()
	e.Key("name")
	e.Str(na.Name)
	e.Key("arg")
	if err := EncodeArgument(e, na.Arg); err != nil {
		return err
	}
	e.Key("kind")
	e.Int(na.Kind)
	e.EndObject()
	return nil
}

// EncodeStrMap writes a Dict[str, str] in the given order.
func EncodeStrMap(e *Encoder, kvs []KV) {
	e.BeginObject()
	for _, kv := range kvs {
		e.Key(kv.Key)
		e.Str(kv.Value)
	}
	e.EndObject()
}

// EncodeNode writes a Node.
func EncodeNode(e *Encoder, n *Node) error {
	e.BeginObject()
	e.Key("target")
	e.Str(n.Target)
	e.Key("inputs")
	if err := encodeList(e, n.Inputs, func(na NamedArgument) error { return EncodeNamedArgument(e, na) }); err != nil {
		return err
	}
	e.Key("outputs")
	if err := encodeList(e, n.Outputs, func(a Argument) error { return EncodeArgument(e, a) }); err != nil {
		return err
	}
	e.Key("metadata")
	EncodeStrMap(e, n.Metadata)
	e.Key("is_hop_single_tensor_return")
	if n.IsHopSingleTensorReturn != nil {
		e.Bool(*n.IsHopSingleTensorReturn)
	} else {
		e.Null()
	}
	e.Key("name")
	if n.Name != nil {
		e.Str(*n.Name)
	} else {
		e.Null()
	}
	e.EndObject()
	return nil
}

// EncodeSymExpr writes a SymExpr.
func EncodeSymExpr(e *Encoder, x SymExpr) {
	e.BeginObject()
	e.Key("expr_str")
	e.Str(x.ExprStr)
	e.Key("hint")
	switch x.HintKind {
	case HintInt:
		e.BeginObject()
		e.Key("as_int")
		e.Int(x.HintInt)
		e.EndObject()
	case HintBool:
		e.BeginObject()
		e.Key("as_bool")
		e.Bool(x.HintBool)
		e.EndObject()
	case HintFloat:
		e.BeginObject()
		e.Key("as_float")
		e.Float(x.HintFloat)
		e.EndObject()
	default:
		e.Null()
	}
	e.EndObject()
}

// EncodeSymInt writes a SymInt union.
func EncodeSymInt(e *Encoder, s SymInt) {
	e.BeginObject()
	if s.IsExpr {
		e.Key("as_expr")
		EncodeSymExpr(e, s.Expr)
	} else {
		e.Key("as_int")
		e.Int(s.Int)
	}
	e.EndObject()
}

// EncodeSymBool writes a SymBool union.
func EncodeSymBool(e *Encoder, s SymBool) {
	e.BeginObject()
	if s.IsExpr {
		e.Key("as_expr")
		EncodeSymExpr(e, s.Expr)
	} else {
		e.Key("as_bool")
		e.Bool(s.Bool)
	}
	e.EndObject()
}

// EncodeSymFloat writes a SymFloat union.
func EncodeSymFloat(e *Encoder, s SymFloat) {
	e.BeginObject()
	if s.IsExpr {
		e.Key("as_expr")
		EncodeSymExpr(e, s.Expr)
	} else {
		e.Key("as_float")
		e.Float(s.Float)
	}
	e.EndObject()
}

// EncodeTensorMeta writes a TensorMeta.
func EncodeTensorMeta(e *Encoder, m *TensorMeta) {
	e.BeginObject()
	e.Key("dtype")
	e.Int(m.DType)
	e.Key("sizes")
	e.BeginArray()
	for _, s := range m.Sizes {
		EncodeSymInt(e, s)
	}
	e.EndArray()
	e.Key("requires_grad")
	e.Bool(m.RequiresGrad)
	e.Key("device")
	EncodeDevice(e, m.Device)
	e.Key("strides")
	e.BeginArray()
	for _, s := range m.Strides {
		EncodeSymInt(e, s)
	}
	e.EndArray()
	e.Key("storage_offset")
	EncodeSymInt(e, m.StorageOffset)
	e.Key("layout")
	e.Int(m.Layout)
	e.EndObject()
}

// EncodeRangeConstraint writes a RangeConstraint (unbounded sides as null).
func EncodeRangeConstraint(e *Encoder, r RangeConstraint) {
	e.BeginObject()
	e.Key("min_val")
	if r.HasMin {
		e.Int(r.Min)
	} else {
		e.Null()
	}
	e.Key("max_val")
	if r.HasMax {
		e.Int(r.Max)
	} else {
		e.Null()
	}
	e.EndObject()
}

var inputTags = [...]string{InUserInput: "user_input", InParameter: "parameter", InBuffer: "buffer",
	InTensorConstant: "tensor_constant", InCustomObj: "custom_obj", InToken: "token", InConstantInput: "constant_input"}

var inputTargets = [...]string{InParameter: "parameter_name", InBuffer: "buffer_name",
	InTensorConstant: "tensor_constant_name", InCustomObj: "custom_obj_name"}

// EncodeInputSpec writes an InputSpec union.
func EncodeInputSpec(e *Encoder, s *InputSpec) error {
	if s.Kind < InUserInput || s.Kind > InConstantInput {
		return fmt.Errorf("invalid input spec kind %d", s.Kind)
	}
	e.BeginObject()
	e.Key(inputTags[s.Kind])
	e.BeginObject()
	switch s.Kind {
	case InConstantInput:
		e.Key("name")
		e.Str(s.Name)
		e.Key("value")
		e.BeginObject()
		switch s.Value.Tag {
		case TagNone:
			e.Key("as_none")
			e.Bool(true)
		case TagInt:
			e.Key("as_int")
			e.Int(s.Value.Int)
		case TagFloat:
			e.Key("as_float")
			e.Float(s.Value.Float)
		case TagString:
			e.Key("as_string")
			e.Str(s.Value.Str)
		case TagBool:
			e.Key("as_bool")
			e.Bool(s.Value.Bool)
		default:
			return fmt.Errorf("constant input %q: %s is not a ConstantValue", s.Name, s.Value.Tag)
		}
		e.EndObject()
	case InUserInput:
		e.Key("arg")
		if err := EncodeArgument(e, s.Arg); err != nil {
			return err
		}
	case InCustomObj:
		e.Key("arg")
		EncodeCustomObj(e, s.Arg.Name, s.Arg.Str)
	default:
		e.Key("arg")
		encodeTensorRef(e, s.Arg.Name)
	}
	if int(s.Kind) < len(inputTargets) && inputTargets[s.Kind] != "" {
		e.Key(inputTargets[s.Kind])
		e.Str(s.Target)
	}
	if s.Kind == InBuffer {
		e.Key("persistent")
		if s.Persistent != nil {
			e.Bool(*s.Persistent)
		} else {
			e.Null()
		}
	}
	e.EndObject()
	e.EndObject()
	return nil
}

var outputTags = [...]string{OutUserOutput: "user_output", OutLossOutput: "loss_output",
	OutBufferMutation: "buffer_mutation", OutGradientToParameter: "gradient_to_parameter",
	OutGradientToUserInput: "gradient_to_user_input", OutUserInputMutation: "user_input_mutation",
	OutToken: "token", OutParameterMutation: "parameter_mutation"}

var outputTargets = [...]string{OutBufferMutation: "buffer_name", OutGradientToParameter: "parameter_name",
	OutGradientToUserInput: "user_input_name", OutUserInputMutation: "user_input_name",
	OutParameterMutation: "parameter_name"}

// EncodeOutputSpec writes an OutputSpec union.
func EncodeOutputSpec(e *Encoder, s *OutputSpec) error {
	if s.Kind < OutUserOutput || s.Kind > OutParameterMutation {
		return fmt.Errorf("invalid output spec kind %d", s.Kind)
	}
	e.BeginObject()
	e.Key(outputTags[s.Kind])
	e.BeginObject()
	e.Key("arg")
	if s.Kind == OutUserOutput {
		if err := EncodeArgument(e, s.Arg); err != nil {
			return err
		}
	} else {
		encodeTensorRef(e, s.Arg.Name)
	}
	if t := outputTargets[s.Kind]; t != "" {
		e.Key(t)
		e.Str(s.Target)
	}
	e.EndObject()
	e.EndObject()
	return nil
}

// EncodeModuleCallEntry writes a ModuleCallEntry.
func EncodeModuleCallEntry(e *Encoder, m *ModuleCallEntry) error {
	e.BeginObject()
	e.Key("fqn")
	e.Str(m.FQN)
	e.Key("signature")
	if m.Signature == nil {
		e.Null()
		e.EndObject()
		return nil
	}
	s := m.Signature
	e.BeginObject()
	for _, part := range []struct {
		key  string
		args []Argument
	}{{"inputs", s.Inputs}, {"outputs", s.Outputs}} {
		e.Key(part.key)
		if err := encodeList(e, part.args, func(a Argument) error { return EncodeArgument(e, a) }); err != nil {
			return err
		}
	}
	e.Key("in_spec")
	e.Str(s.InSpec)
	e.Key("out_spec")
	e.Str(s.OutSpec)
	e.Key("forward_arg_names")
	if s.ForwardArgNames != nil {
		_ = encodeList(e, s.ForwardArgNames, func(x string) error { e.Str(x); return nil })
	} else {
		e.Null()
	}
	e.EndObject()
	e.EndObject()
	return nil
}

// EncodePayloadConfig writes a PayloadConfig in entry order.
func EncodePayloadConfig(e *Encoder, c *PayloadConfig) {
	e.BeginObject()
	e.Key("config")
	e.BeginObject()
	for i := range c.Entries {
		pe := &c.Entries[i]
		e.Key(pe.FQN)
		e.BeginObject()
		e.Key("path_name")
		e.Str(pe.Meta.PathName)
		e.Key("is_param")
		e.Bool(pe.Meta.IsParam)
		e.Key("use_pickle")
		e.Bool(pe.Meta.UsePickle)
		e.Key("tensor_meta")
		if pe.Meta.TensorMeta != nil {
			EncodeTensorMeta(e, pe.Meta.TensorMeta)
		} else {
			e.Null()
		}
		e.EndObject()
	}
	e.EndObject()
	e.EndObject()
}
