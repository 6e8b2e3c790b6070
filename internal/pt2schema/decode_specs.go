package pt2schema

// Decoding of the signature, the module call graph and payload configs.

// DecodeInputSpec reads an InputSpec union.
func DecodeInputSpec(d *Decoder) (InputSpec, error) {
	var s InputSpec
	err := d.Union("InputSpec", func(tag string) (bool, error) {
		target := ""
		switch tag {
		case "user_input":
			s.Kind = InUserInput
		case "parameter":
			s.Kind, target = InParameter, "parameter_name"
		case "buffer":
			s.Kind, target = InBuffer, "buffer_name"
		case "tensor_constant":
			s.Kind, target = InTensorConstant, "tensor_constant_name"
		case "custom_obj":
			s.Kind, target = InCustomObj, "custom_obj_name"
		case "token":
			s.Kind = InToken
		case "constant_input":
			s.Kind = InConstantInput
		default:
			return false, nil
		}
		seenArg := false
		err := d.Object(func(key string) error {
			var err error
			switch {
			case key == "arg" && s.Kind != InConstantInput:
				seenArg = true
				switch s.Kind {
				case InUserInput:
					s.Arg, err = DecodeArgument(d)
				case InCustomObj:
					var c CustomObjArgument
					c, err = DecodeCustomObj(d)
					s.Arg = Argument{Tag: TagCustomObj, Name: c.Name, Str: c.ClassFQN}
				default:
					s.Arg, err = d.tensorRefArg()
				}
			case key == target && target != "":
				s.Target, err = d.Str()
			case key == "persistent" && s.Kind == InBuffer:
				if d.IsNull() {
					return nil
				}
				var b bool
				b, err = d.Bool()
				s.Persistent = &b
			case key == "name" && s.Kind == InConstantInput:
				seenArg = true
				s.Name, err = d.Str()
			case key == "value" && s.Kind == InConstantInput:
				s.Value, err = decodeConstantValue(d)
			}
			return err
		})
		if err == nil && !seenArg {
			err = d.Errorf("%s spec has no %s", tag, map[bool]string{true: "name", false: "arg"}[s.Kind == InConstantInput])
		}
		return true, err
	})
	return s, err
}

func decodeConstantValue(d *Decoder) (Argument, error) {
	var a Argument
	err := d.Union("ConstantValue", func(tag string) (bool, error) {
		var err error
		switch tag {
		case "as_none":
			a.Tag = TagNone
			err = d.Skip()
		case "as_int":
			a.Tag = TagInt
			a.Int, err = d.Int()
		case "as_float":
			a.Tag = TagFloat
			a.Float, err = d.Float()
		case "as_string":
			a.Tag = TagString
			a.Str, err = d.Str()
		case "as_bool":
			a.Tag = TagBool
			a.Bool, err = d.Bool()
		default:
			return false, nil
		}
		return true, err
	})
	return a, err
}

// DecodeOutputSpec reads an OutputSpec union.
func DecodeOutputSpec(d *Decoder) (OutputSpec, error) {
	var s OutputSpec
	err := d.Union("OutputSpec", func(tag string) (bool, error) {
		target := ""
		switch tag {
		case "user_output":
			s.Kind = OutUserOutput
		case "loss_output":
			s.Kind = OutLossOutput
		case "buffer_mutation":
			s.Kind, target = OutBufferMutation, "buffer_name"
		case "gradient_to_parameter":
			s.Kind, target = OutGradientToParameter, "parameter_name"
		case "gradient_to_user_input":
			s.Kind, target = OutGradientToUserInput, "user_input_name"
		case "user_input_mutation":
			s.Kind, target = OutUserInputMutation, "user_input_name"
		case "token":
			s.Kind = OutToken
		case "parameter_mutation":
			s.Kind, target = OutParameterMutation, "parameter_name"
		default:
			return false, nil
		}
		seenArg := false
		err := d.Object(func(key string) error {
			var err error
			switch {
			case key == "arg":
				seenArg = true
				if s.Kind == OutUserOutput {
					s.Arg, err = DecodeArgument(d)
				} else {
					s.Arg, err = d.tensorRefArg()
				}
			case key == target && target != "":
				s.Target, err = d.Str()
			}
			return err
		})
		if err == nil && !seenArg {
			err = d.Errorf("%s spec has no arg", tag)
		}
		return true, err
	})
	return s, err
}

// DecodeSignature reads a GraphSignature.
func DecodeSignature(d *Decoder) (GraphSignature, error) {
	var s GraphSignature
	err := d.Object(func(key string) error {
		switch key {
		case "input_specs":
			return d.Array(func(int) error {
				in, err := DecodeInputSpec(d)
				s.Inputs = append(s.Inputs, in)
				return err
			})
		case "output_specs":
			return d.Array(func(int) error {
				out, err := DecodeOutputSpec(d)
				s.Outputs = append(s.Outputs, out)
				return err
			})
		}
		return nil
	})
	return s, err
}

// DecodeModuleCallEntry reads a ModuleCallEntry.
func DecodeModuleCallEntry(d *Decoder) (ModuleCallEntry, error) {
	var m ModuleCallEntry
	err := d.Object(func(key string) error {
		switch key {
		case "fqn":
			var err error
			m.FQN, err = d.Str()
			return err
		case "signature":
			if d.IsNull() {
				return nil
			}
			sig := &ModuleCallSignature{}
			m.Signature = sig
			return d.Object(func(key string) error {
				var err error
				args := func() ([]Argument, error) {
					out := []Argument{}
					err := d.Array(func(int) error {
						a, err := DecodeArgument(d)
						out = append(out, a)
						return err
					})
					return out, err
				}
				switch key {
				case "inputs":
					sig.Inputs, err = args()
				case "outputs":
					sig.Outputs, err = args()
				case "in_spec":
					sig.InSpec, err = d.Str()
				case "out_spec":
					sig.OutSpec, err = d.Str()
				case "forward_arg_names":
					if d.IsNull() {
						return nil
					}
					sig.ForwardArgNames, err = d.Strs()
				}
				return err
			})
		}
		return nil
	})
	return m, err
}

// DecodePayloadConfig reads a PayloadConfig. A key given twice is an error.
func DecodePayloadConfig(d *Decoder) (PayloadConfig, error) {
	var c PayloadConfig
	seen := map[string]bool{}
	err := d.Object(func(key string) error {
		if key != "config" {
			return nil
		}
		return d.Map(func(fqn string) error {
			if seen[fqn] {
				return d.Errorf("entry given twice")
			}
			seen[fqn] = true
			var pm PayloadMeta
			err := d.Object(func(key string) error {
				var err error
				switch key {
				case "path_name":
					pm.PathName, err = d.Str()
				case "is_param":
					pm.IsParam, err = d.Bool()
				case "use_pickle":
					pm.UsePickle, err = d.Bool()
				case "tensor_meta":
					if d.IsNull() {
						return nil
					}
					var tm TensorMeta
					tm, err = DecodeTensorMeta(d)
					pm.TensorMeta = &tm
				}
				return err
			})
			c.Entries = append(c.Entries, PayloadEntry{fqn, pm})
			return err
		})
	})
	return c, err
}
