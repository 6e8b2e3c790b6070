package pt2schema

import "strings"

// Fields reads an object's members without decoding them and returns a
// decoder for each, located at the member's path. A key given twice is an
// error (it would make the file ambiguous).
func (d *Decoder) Fields() (map[string]*Decoder, error) {
	out := map[string]*Decoder{}
	err := d.Object(func(key string) error {
		if _, dup := out[key]; dup {
			return d.Errorf("field given twice")
		}
		s, err := d.Span()
		if err != nil {
			return err
		}
		out[key] = d.Sub(s, "")
		return nil
	})
	return out, err
}

// Enum reads an IntEnum: an integer, or a member name from names (also
// accepted with a "Type." prefix, as some old files spell them).
func (d *Decoder) Enum(typeName string, names []string) (int64, error) {
	if d.Peek() == '"' {
		s, err := d.Str()
		if err != nil {
			return 0, err
		}
		if i := strings.LastIndexByte(s, '.'); i >= 0 {
			s = s[i+1:]
		}
		for v, n := range names {
			if n != "" && strings.EqualFold(n, s) {
				return int64(v), nil
			}
		}
		return 0, d.Errorf("unknown %s %q", typeName, s)
	}
	return d.Int()
}

// Enum member names, indexed by value ("" for unused values).
var (
	ScalarTypeNames = []string{
		"UNKNOWN", "BYTE", "CHAR", "SHORT", "INT", "LONG", "HALF", "FLOAT", "DOUBLE",
		"COMPLEXHALF", "COMPLEXFLOAT", "COMPLEXDOUBLE", "BOOL", "BFLOAT16",
		"", "", "", "", "", "", "", "", "", "", "", "", "", "",
		"UINT16", "FLOAT8E4M3FN", "FLOAT8E5M2", "FLOAT8E4M3FNUZ", "FLOAT8E5M2FNUZ",
		"FLOAT8E8M0FNU", "UINT32", "UINT64",
	}
	LayoutNames       = []string{"Unknown", "SparseCoo", "SparseCsr", "SparseCsc", "SparseBsr", "SparseBsc", "_mkldnn", "Strided"}
	MemoryFormatNames = []string{"Unknown", "ContiguousFormat", "ChannelsLast", "ChannelsLast3d", "PreserveFormat"}
	ArgumentKindNames = []string{"UNKNOWN", "POSITIONAL", "KEYWORD"}
)

// tensorRef reads a TensorArgument / TokenArgument {"name": …}.
func (d *Decoder) tensorRef() (string, error) {
	name, seen := "", false
	err := d.Object(func(key string) error {
		if key != "name" {
			return nil
		}
		seen = true
		var err error
		name, err = d.Str()
		return err
	})
	if err == nil && !seen {
		err = d.Errorf("missing field \"name\"")
	}
	return name, err
}

// symRef reads a SymIntArgument/SymBoolArgument/SymFloatArgument union:
// {"as_name": n} becomes a reference tagged ref, a literal member the
// literal Argument.
func (d *Decoder) symRef(typeName string, ref ArgTag) (Argument, error) {
	var a Argument
	err := d.Union(typeName, func(tag string) (bool, error) {
		var err error
		switch {
		case tag == "as_name":
			a.Tag = ref
			a.Name, err = d.Str()
		case tag == "as_int" && ref == TagSymInt:
			a.Tag = TagInt
			a.Int, err = d.Int()
		case tag == "as_bool" && ref == TagSymBool:
			a.Tag = TagBool
			a.Bool, err = d.Bool()
		case tag == "as_float" && ref == TagSymFloat:
			a.Tag = TagFloat
			a.Float, err = d.Float()
		default:
			return false, nil
		}
		return true, err
	})
	return a, err
}

// optionalTensor reads an OptionalTensorArgument union.
func (d *Decoder) optionalTensor() (Argument, error) {
	var a Argument
	err := d.Union("OptionalTensorArgument", func(tag string) (bool, error) {
		switch tag {
		case "as_tensor":
			a.Tag = TagTensor
			var err error
			a.Name, err = d.tensorRef()
			return true, err
		case "as_none":
			a.Tag = TagNone
			return true, d.Skip()
		}
		return false, nil
	})
	return a, err
}

// gather reads an array, each element with f, on top of the scratch stack
// and returns the elements in a slice of their exact length (never nil).
func gather[T any](d *Decoder, stack *[]T, f func() (T, error)) ([]T, error) {
	start := len(*stack)
	err := d.Array(func(int) error {
		v, err := f()
		*stack = append(*stack, v)
		return err
	})
	out := append([]T{}, (*stack)[start:]...)
	clear((*stack)[start:])
	*stack = (*stack)[:start]
	return out, err
}

// elems reads an array, each element with f.
func (d *Decoder) elems(f func() (Argument, error)) ([]Argument, error) {
	return gather(d, &d.argScratch, f)
}

func (d *Decoder) ints() ([]int64, error) { return gather(d, &d.intScratch, d.Int) }

func (d *Decoder) floats() ([]float64, error) { return gather(d, &d.floatScratch, d.Float) }

func (d *Decoder) bools() ([]bool, error) { return gather(d, &d.boolScratch, d.Bool) }

func (d *Decoder) tensorRefArg() (Argument, error) {
	n, err := d.tensorRef()
	return Argument{Tag: TagTensor, Name: n}, err
}

// DecodeDevice reads a Device {"type": str, "index": int|null}.
func DecodeDevice(d *Decoder) (Device, error) {
	var dev Device
	err := d.Object(func(key string) error {
		switch key {
		case "type":
			var err error
			dev.Type, err = d.Str()
			return err
		case "index":
			if d.IsNull() {
				return nil
			}
			v, err := d.Int()
			dev.Index = &v
			return err
		}
		return nil
	})
	return dev, err
}

// DecodeArgument reads an Argument union.
func DecodeArgument(d *Decoder) (Argument, error) {
	var a Argument
	err := d.Union("Argument", func(name string) (bool, error) {
		tag, ok := tagByName[name]
		if !ok {
			return false, nil
		}
		a.Tag = tag
		var err error
		switch tag {
		case TagNone:
			err = d.Skip()
		case TagTensor:
			a.Name, err = d.tensorRef()
		case TagTensors:
			a.Elems, err = d.elems(d.tensorRefArg)
		case TagInt:
			a.Int, err = d.Int()
		case TagInts:
			a.Ints, err = d.ints()
		case TagFloat:
			a.Float, err = d.Float()
		case TagFloats:
			a.Floats, err = d.floats()
		case TagString, TagOperator:
			a.Str, err = d.Str()
		case TagStrings:
			a.Strs, err = d.Strs()
		case TagSymInt:
			a, err = d.symRef("SymIntArgument", TagSymInt)
		case TagSymInts:
			a.Elems, err = d.elems(func() (Argument, error) { return d.symRef("SymIntArgument", TagSymInt) })
		case TagSymBool:
			a, err = d.symRef("SymBoolArgument", TagSymBool)
		case TagSymBools:
			a.Elems, err = d.elems(func() (Argument, error) { return d.symRef("SymBoolArgument", TagSymBool) })
		case TagSymFloat:
			a, err = d.symRef("SymFloatArgument", TagSymFloat)
		case TagSymFloats:
			a.Elems, err = d.elems(func() (Argument, error) { return d.symRef("SymFloatArgument", TagSymFloat) })
		case TagScalarType:
			a.Int, err = d.Enum("ScalarType", ScalarTypeNames)
		case TagMemoryFormat:
			a.Int, err = d.Enum("MemoryFormat", MemoryFormatNames)
		case TagLayout:
			a.Int, err = d.Enum("Layout", LayoutNames)
		case TagDevice:
			a.Device, err = DecodeDevice(d)
		case TagBool:
			a.Bool, err = d.Bool()
		case TagBools:
			a.Bools, err = d.bools()
		case TagGraph:
			a.Graph, err = decodeGraphArgument(d)
		case TagOptionalTensors:
			a.Elems, err = d.elems(d.optionalTensor)
		case TagOptionalTensor:
			a, err = d.optionalTensor()
		case TagCustomObj:
			var c CustomObjArgument
			c, err = DecodeCustomObj(d)
			a.Name, a.Str = c.Name, c.ClassFQN
		case TagComplex:
			err = d.Object(func(key string) error {
				var err error
				switch key {
				case "real":
					a.Float, err = d.Float()
				case "imag":
					a.Imag, err = d.Float()
				}
				return err
			})
		case TagNestedTensors:
			a.Elems, err = d.elems(func() (Argument, error) {
				es, err := d.elems(d.tensorRefArg)
				return Argument{Tag: TagTensors, Elems: es}, err
			})
		case TagIntLists:
			a.Elems, err = d.elems(func() (Argument, error) {
				v, err := d.ints()
				return Argument{Tag: TagInts, Ints: v}, err
			})
		case TagFloatLists:
			a.Elems, err = d.elems(func() (Argument, error) {
				v, err := d.floats()
				return Argument{Tag: TagFloats, Floats: v}, err
			})
		case TagStringToArgument:
			a.Elems, a.Keys = []Argument{}, []string{}
			err = d.Map(func(k string) error {
				v, err := DecodeArgument(d)
				a.Keys = append(a.Keys, k)
				a.Elems = append(a.Elems, v)
				return err
			})
		}
		return true, err
	})
	return a, err
}

func decodeGraphArgument(d *Decoder) (*GraphArgument, error) {
	g := &GraphArgument{}
	err := d.Object(func(key string) error {
		switch key {
		case "name":
			var err error
			g.Name, err = d.Str()
			return err
		case "graph":
			s, err := d.Span()
			if err != nil {
				return err
			}
			g.Body = d.Sub(s, "")
		}
		return nil
	})
	if err == nil && g.Body == nil {
		err = d.Errorf("GraphArgument has no graph")
	}
	return g, err
}

// DecodeCustomObj reads a CustomObjArgument {"name", "class_fqn"}.
func DecodeCustomObj(d *Decoder) (CustomObjArgument, error) {
	var c CustomObjArgument
	err := d.Object(func(key string) error {
		var err error
		switch key {
		case "name":
			c.Name, err = d.Str()
		case "class_fqn":
			c.ClassFQN, err = d.Str()
		}
		return err
	})
	return c, err
}

// DecodeNamedArgument reads a NamedArgument.
func DecodeNamedArgument(d *Decoder) (NamedArgument, error) {
	var na NamedArgument
	seenArg := false
	err := d.Object(func(key string) error {
		var err error
		switch key {
		case "name":
			na.Name, err = d.Str()
		case "arg":
			seenArg = true
			na.Arg, err = DecodeArgument(d)
		case "kind":
			if d.IsNull() {
				return nil
			}
			na.Kind, err = d.Enum("ArgumentKind", ArgumentKindNames)
		}
		return err
	})
	if err == nil && !seenArg {
		err = d.Errorf("NamedArgument has no arg")
	}
	return na, err
}

// DecodeNode reads a Node.
func DecodeNode(d *Decoder) (Node, error) {
	var n Node
	err := d.Object(func(key string) error {
		var err error
		switch key {
		case "target":
			n.Target, err = d.Str()
		case "inputs":
			start := len(d.namScratch)
			err = d.Array(func(int) error {
				na, err := DecodeNamedArgument(d)
				d.namScratch = append(d.namScratch, na)
				return err
			})
			n.Inputs = append(n.Inputs, d.namScratch[start:]...)
			clear(d.namScratch[start:])
			d.namScratch = d.namScratch[:start]
		case "outputs":
			start := len(d.argScratch)
			err = d.Array(func(int) error {
				a, err := DecodeArgument(d)
				d.argScratch = append(d.argScratch, a)
				return err
			})
			n.Outputs = append(n.Outputs, d.argScratch[start:]...)
			clear(d.argScratch[start:])
			d.argScratch = d.argScratch[:start]
		case "metadata":
			if d.IsNull() {
				return nil
			}
			n.Metadata, err = d.StrMap()
		case "is_hop_single_tensor_return":
			if d.IsNull() {
				return nil
			}
			var b bool
			b, err = d.Bool()
			n.IsHopSingleTensorReturn = &b
		case "name":
			if d.IsNull() {
				return nil
			}
			var s string
			s, err = d.Str()
			n.Name = &s
		}
		return err
	})
	if err == nil && n.Target == "" {
		err = d.Errorf("node has no target")
	}
	return n, err
}
