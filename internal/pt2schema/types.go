package pt2schema

// SchemaMajor is the schema major version this package reads and writes.
const SchemaMajor = 8

// SchemaMinor is the minor version the writer claims (torch 2.12's
// SCHEMA_VERSION); minor versions are additive, so the reader accepts all.
const SchemaMinor = 20

// ArgTag says which member of the Argument union an Argument holds.
type ArgTag uint8

// Argument union members. The SymIntArgument, SymBoolArgument,
// SymFloatArgument and OptionalTensorArgument unions fold into these: a
// named member is TagSymInt/TagSymBool/TagSymFloat/TagTensor with Name
// set, a literal member is TagInt/TagBool/TagFloat/TagNone.
const (
	TagInvalid ArgTag = iota
	TagNone
	TagTensor
	TagTensors
	TagInt
	TagInts
	TagFloat
	TagFloats
	TagString
	TagStrings
	TagSymInt
	TagSymInts
	TagScalarType
	TagMemoryFormat
	TagLayout
	TagDevice
	TagBool
	TagBools
	TagSymBool
	TagSymBools
	TagGraph
	TagOptionalTensors
	TagCustomObj
	TagOperator
	TagSymFloat
	TagSymFloats
	TagOptionalTensor
	TagComplex
	TagNestedTensors
	TagIntLists
	TagStringToArgument
	TagFloatLists
	numTags
)

var tagNames = [numTags]string{
	TagInvalid: "", TagNone: "as_none", TagTensor: "as_tensor", TagTensors: "as_tensors",
	TagInt: "as_int", TagInts: "as_ints", TagFloat: "as_float", TagFloats: "as_floats",
	TagString: "as_string", TagStrings: "as_strings", TagSymInt: "as_sym_int",
	TagSymInts: "as_sym_ints", TagScalarType: "as_scalar_type",
	TagMemoryFormat: "as_memory_format", TagLayout: "as_layout", TagDevice: "as_device",
	TagBool: "as_bool", TagBools: "as_bools", TagSymBool: "as_sym_bool",
	TagSymBools: "as_sym_bools", TagGraph: "as_graph",
	TagOptionalTensors: "as_optional_tensors", TagCustomObj: "as_custom_obj",
	TagOperator: "as_operator", TagSymFloat: "as_sym_float", TagSymFloats: "as_sym_floats",
	TagOptionalTensor: "as_optional_tensor", TagComplex: "as_complex",
	TagNestedTensors: "as_nested_tensors", TagIntLists: "as_int_lists",
	TagStringToArgument: "as_string_to_argument", TagFloatLists: "as_float_lists",
}

var tagByName = func() map[string]ArgTag {
	m := make(map[string]ArgTag, numTags)
	for t := TagNone; t < numTags; t++ {
		m[tagNames[t]] = t
	}
	return m
}()

func (t ArgTag) String() string {
	if t < numTags && t != TagInvalid {
		return tagNames[t]
	}
	return "invalid"
}

// IsRef reports tags that name a value (when Name is set).
func (t ArgTag) IsRef() bool {
	switch t {
	case TagTensor, TagSymInt, TagSymBool, TagSymFloat, TagCustomObj:
		return true
	}
	return false
}

// Argument is one member of the Argument union (see ArgTag for how the
// nested unions fold in).
type Argument struct {
	Tag ArgTag
	// Name is the value referred to (as_tensor, as_custom_obj, a named
	// as_sym_int/as_sym_bool/as_sym_float).
	Name string
	// Int holds as_int, as_scalar_type, as_memory_format, as_layout.
	Int int64
	// Float holds as_float and the real part of as_complex.
	Float float64
	// Imag is the imaginary part of as_complex.
	Imag float64
	Bool bool
	// Str holds as_string, as_operator, the class of as_custom_obj.
	Str string
	// Device holds as_device.
	Device Device
	// Literal lists.
	Ints   []int64
	Floats []float64
	Strs   []string
	Bools  []bool
	// Elems holds the elements of as_tensors, as_sym_ints, as_sym_bools,
	// as_sym_floats, as_optional_tensors (each an Argument of the folded
	// element kind), of the nested lists (each a TagTensors, TagInts or
	// TagFloats Argument) and the values of as_string_to_argument.
	Elems []Argument
	// Keys are the keys of as_string_to_argument, parallel to Elems.
	Keys []string
	// Graph holds as_graph.
	Graph *GraphArgument
}

// GraphArgument is a higher-order op's subgraph. When decoded, Body is a
// decoder positioned on the Graph object (decode it with the caller's
// graph reader); when encoding, Write emits the Graph object.
type GraphArgument struct {
	Name  string
	Body  *Decoder
	Write func(*Encoder) error
}

// Device is torch.device: Index is nil for "no index".
type Device struct {
	Type  string
	Index *int64
}

// NamedArgument is one input of a node: the op-schema argument name ("" for
// positional higher-order-op inputs), the argument and its ArgumentKind.
type NamedArgument struct {
	Name string
	Arg  Argument
	Kind int64 // ArgumentKind: 0 unknown, 1 positional, 2 keyword
}

// Argument kinds of a NamedArgument.
const (
	KindUnknown    = 0
	KindPositional = 1
	KindKeyword    = 2
)

// Node is one call: Target is torch's spelling of the callee.
type Node struct {
	Target   string
	Inputs   []NamedArgument
	Outputs  []Argument
	Metadata []KV
	// IsHopSingleTensorReturn is nil when absent or null.
	IsHopSingleTensorReturn *bool
	// Name is the node's name (schema ≥ 8.17); nil when absent or null.
	Name *string
}

// HintKind says which member of SymExprHint is set.
type HintKind uint8

// SymExprHint members.
const (
	NoHint HintKind = iota
	HintInt
	HintBool
	HintFloat
)

// SymExpr is a symbolic expression (sympy srepr or str() text) and its hint.
type SymExpr struct {
	ExprStr   string
	HintKind  HintKind
	HintInt   int64
	HintBool  bool
	HintFloat float64
}

// SymInt is the SymInt union: an expression, or a constant when IsExpr is false.
type SymInt struct {
	IsExpr bool
	Expr   SymExpr
	Int    int64
}

// SymBool is the SymBool union.
type SymBool struct {
	IsExpr bool
	Expr   SymExpr
	Bool   bool
}

// SymFloat is the SymFloat union.
type SymFloat struct {
	IsExpr bool
	Expr   SymExpr
	Float  float64
}

// TensorMeta describes a tensor value.
type TensorMeta struct {
	DType         int64
	Sizes         []SymInt
	RequiresGrad  bool
	Device        Device
	Strides       []SymInt
	StorageOffset SymInt
	Layout        int64
}

// RangeConstraint bounds a symbol; a false Has* means unbounded on that side.
type RangeConstraint struct {
	HasMin, HasMax bool
	Min, Max       int64
}

// CustomObjArgument names a custom object value and its class.
type CustomObjArgument struct {
	Name     string
	ClassFQN string
}

// InputKind is the member of the InputSpec union.
type InputKind uint8

// InputSpec members.
const (
	InUserInput InputKind = iota + 1
	InParameter
	InBuffer
	InTensorConstant
	InCustomObj
	InToken
	InConstantInput
)

// InputSpec describes one input of the main graph.
type InputSpec struct {
	Kind InputKind
	// Arg is the input: the full Argument for user_input; a TagTensor
	// reference for parameter, buffer, tensor_constant and token; a
	// TagCustomObj reference for custom_obj.
	Arg Argument
	// Target is parameter_name, buffer_name, tensor_constant_name or custom_obj_name.
	Target string
	// Persistent is the buffer's persistence (nil when absent).
	Persistent *bool
	// Name and Value describe a constant_input; Value is a literal
	// Argument (TagNone, TagInt, TagFloat, TagString or TagBool).
	Name  string
	Value Argument
}

// OutputKind is the member of the OutputSpec union.
type OutputKind uint8

// OutputSpec members.
const (
	OutUserOutput OutputKind = iota + 1
	OutLossOutput
	OutBufferMutation
	OutGradientToParameter
	OutGradientToUserInput
	OutUserInputMutation
	OutToken
	OutParameterMutation
)

// OutputSpec describes one output of the main graph.
type OutputSpec struct {
	Kind OutputKind
	// Arg is the full Argument for user_output, a TagTensor reference otherwise.
	Arg Argument
	// Target is buffer_name, parameter_name or user_input_name.
	Target string
}

// GraphSignature is the program's signature.
type GraphSignature struct {
	Inputs  []InputSpec
	Outputs []OutputSpec
}

// ModuleCallSignature is the calling convention recorded for one module.
type ModuleCallSignature struct {
	Inputs, Outputs []Argument
	InSpec, OutSpec string
	// ForwardArgNames is nil when absent or null.
	ForwardArgNames []string
}

// ModuleCallEntry is one module of the module call graph.
type ModuleCallEntry struct {
	FQN       string
	Signature *ModuleCallSignature
}

// SchemaVersion is the schema version of a program.
type SchemaVersion struct{ Major, Minor int64 }

// PayloadMeta locates one tensor (or custom object) of a PayloadConfig.
type PayloadMeta struct {
	PathName   string
	IsParam    bool
	UsePickle  bool
	TensorMeta *TensorMeta
}

// PayloadEntry is one entry of a PayloadConfig, keyed by FQN.
type PayloadEntry struct {
	FQN  string
	Meta PayloadMeta
}

// PayloadConfig indexes the raw payloads of a PT2 archive (torch ≥ 2.9).
type PayloadConfig struct {
	Entries []PayloadEntry
}
