package ir

import (
	"fmt"
	"strings"
)

// Op identifies an operator overload. The constants and the table behind
// them are generated from gen/ops.spec into opgen.go; read an op's metadata
// through its methods.
type Op int32

// OpInvalid is the zero Op.
const OpInvalid Op = 0

// OpInfo is one row of the generated op table.
type OpInfo struct {
	// Name is the qualified overload name used in IR text:
	// "aten.add.Tensor", "operator.add", "higher_order.cond", "math.ceil".
	Name string
	// Namespace, Base and Overload split Name for ATen-style ops
	// ("aten", "add", "Tensor"); Overload is "" for ops without overloads.
	Namespace, Base, Overload string
	// Schema is the op's parsed signature.
	Schema Schema
	// Props are the op's properties from the spec.
	Props OpProps
	// Functional, Inplace and Out name the op's twins ("" when none).
	Functional, Inplace, Out string
	// Infer computes result types from the node's arguments; nil when the op
	// has no rule yet (inference then fails loudly, naming the op).
	Infer InferFunc
	// InferRule is the name of the rule in the spec, for diagnostics.
	InferRule string
	// Kernel is the ExecuTorch kernel library that registers the op
	// ("portable", "quantized"; "" when none does), from gen/etkernels.spec,
	// which gen/etkernels/etkernels.py writes from executorch's kernel lists.
	Kernel string
}

// OpProps are the boolean properties an op declares in the spec.
type OpProps uint32

// Op properties.
const (
	PropFunctional  OpProps = 1 << iota // pure: no mutation, no aliasing of outputs to inputs
	PropInplace                         // mutates its first argument and returns it
	PropView                            // output aliases an input
	PropOutVariant                      // writes into out= arguments
	PropCore                            // in torch's Core ATen opset
	PropSideEffects                     // must not be removed even when unused
	PropRandom                          // nondeterministic (random number generation)
	PropSymbolic                        // operates on SymInt/SymFloat/SymBool values
	PropHigherOrder                     // carries subgraph regions
	PropCommutative                     // first two tensor operands may be swapped
	PropPointwise                       // torch tags it pointwise: elementwise, its out laid out like its inputs (gen/torchtags.spec)
)

var propNames = []struct {
	p    OpProps
	name string
}{
	{PropFunctional, "functional"}, {PropInplace, "inplace"}, {PropView, "view"},
	{PropOutVariant, "out"}, {PropCore, "core"}, {PropSideEffects, "side_effects"},
	{PropRandom, "random"}, {PropSymbolic, "symbolic"}, {PropHigherOrder, "higher_order"},
	{PropCommutative, "commutative"}, {PropPointwise, "pointwise"},
}

func (p OpProps) String() string {
	var parts []string
	for _, pn := range propNames {
		if p&pn.p != 0 {
			parts = append(parts, pn.name)
		}
	}
	return strings.Join(parts, ",")
}

// ParseOpProp maps a property name from the spec to its bit.
func ParseOpProp(name string) (OpProps, bool) {
	for _, pn := range propNames {
		if pn.name == name {
			return pn.p, true
		}
	}
	return 0, false
}

// Schema is an op signature in torch's schema language, parsed.
type Schema struct {
	Args    []ArgSchema
	Returns []ReturnSchema
	// VarArgs is set for ops such as operator.* whose arguments are positional only.
	VarArgs bool
}

// ArgSchema is one formal argument.
type ArgSchema struct {
	Name string
	Type SchemaType
	// Default is the spelling of the default value in the schema ("1", "None",
	// "[]", "False", "\"none\"", "0.5"); "" when the argument is required.
	Default string
	// KwargOnly is set for arguments after "*".
	KwargOnly bool
	// Alias is the alias annotation without parentheses: "a", "a!", "" for none.
	Alias string
}

// Mutates reports whether the argument is written to (alias annotation ends in '!').
func (a ArgSchema) Mutates() bool { return strings.HasSuffix(a.Alias, "!") }

// HasDefault reports whether the argument may be omitted.
func (a ArgSchema) HasDefault() bool { return a.Default != "" }

// ReturnSchema is one result.
type ReturnSchema struct {
	Name  string
	Type  SchemaType
	Alias string
}

// BaseKind is the base of a schema type.
type BaseKind uint8

// Schema base kinds.
const (
	KTensor BaseKind = iota
	KInt
	KSymInt
	KFloat
	KSymFloat
	KBool
	KSymBool
	KStr
	KScalar
	KScalarType
	KLayout
	KDevice
	KMemoryFormat
	KGenerator
	KAny
	KGraph
	KNone
	KStorage
	KDimname
	KToken
	KOpaque
)

var baseKindNames = [...]string{
	KTensor: "Tensor", KInt: "int", KSymInt: "SymInt", KFloat: "float", KSymFloat: "SymFloat",
	KBool: "bool", KSymBool: "SymBool", KStr: "str", KScalar: "Scalar", KScalarType: "ScalarType",
	KLayout: "Layout", KDevice: "Device", KMemoryFormat: "MemoryFormat", KGenerator: "Generator",
	KAny: "Any", KGraph: "GraphModule", KNone: "NoneType", KStorage: "Storage", KDimname: "Dimname",
	KToken: "Token", KOpaque: "Opaque",
}

func (k BaseKind) String() string {
	if int(k) < len(baseKindNames) {
		return baseKindNames[k]
	}
	return fmt.Sprintf("BaseKind(%d)", uint8(k))
}

// BaseKindFromName parses a schema base type name.
func BaseKindFromName(s string) (BaseKind, bool) {
	for i, n := range baseKindNames {
		if n == s {
			return BaseKind(i), true
		}
	}
	return 0, false
}

// SchemaType is a schema type such as "Tensor", "int[2]", "Tensor?[]", "SymInt[]?".
type SchemaType struct {
	Base         BaseKind
	List         bool // Base[] or Base[N]
	ListLen      int  // N for Base[N], 0 otherwise
	ElemOptional bool // Base?[]
	Optional     bool // outer '?'
}

func (t SchemaType) String() string {
	var b strings.Builder
	b.WriteString(t.Base.String())
	if t.ElemOptional {
		b.WriteByte('?')
	}
	if t.List {
		if t.ListLen > 0 {
			fmt.Fprintf(&b, "[%d]", t.ListLen)
		} else {
			b.WriteString("[]")
		}
	}
	if t.Optional {
		b.WriteByte('?')
	}
	return b.String()
}

// IsTensorLike reports whether arguments of this type carry tensor operands.
func (t SchemaType) IsTensorLike() bool { return t.Base == KTensor }

// InferFunc computes the result types of a node from its arguments.
type InferFunc func(c *InferCtx) ([]Type, error)

// Info returns the op's table row. It panics on an Op outside the table,
// which can only come from a bug (Ops are only made by Lookup and the constants).
func (op Op) Info() *OpInfo {
	if op <= OpInvalid || int(op) >= len(opTab) {
		panic(fmt.Sprintf("ir: invalid Op %d", int32(op)))
	}
	return &opTab[op]
}

// String returns the op's qualified name.
func (op Op) String() string {
	if op <= OpInvalid || int(op) >= len(opTab) {
		return fmt.Sprintf("Op(%d)", int32(op))
	}
	return opTab[op].Name
}

// FunctionalTwin is the functional op of an in-place or out= op
// (OpInfo.Functional), OpInvalid when none.
func (op Op) FunctionalTwin() Op { return twinTab[op].functional }

// InplaceTwin is the in-place variant of a functional op, OpInvalid when none.
func (op Op) InplaceTwin() Op { return twinTab[op].inplace }

// OutTwin is the out= variant of a functional op (OpInfo.Out), OpInvalid
// when none.
func (op Op) OutTwin() Op { return twinTab[op].out }

// Valid reports whether op is an op of the table (not OpInvalid or out of range).
func (op Op) Valid() bool { return op > OpInvalid && int(op) < len(opTab) }

// Has reports whether the op declares all of the given properties.
func (op Op) Has(p OpProps) bool { return op.Info().Props&p == p }

// LookupOp finds an op by its qualified name. It also accepts torch's
// spellings: "torch.ops.aten.add.Tensor", "aten::add.Tensor", "_operator.add",
// and an ATen name without overload ("aten.relu"), which means ".default".
func LookupOp(name string) (Op, bool) {
	if op, ok := opIndex[name]; ok {
		return op, true
	}
	n := NormalizeOpName(name)
	if op, ok := opIndex[n]; ok {
		return op, true
	}
	if op, ok := opIndex[n+".default"]; ok {
		return op, true
	}
	return OpInvalid, false
}

// NormalizeOpName rewrites torch's target spellings to fxport's.
func NormalizeOpName(name string) string {
	name = strings.TrimPrefix(name, "torch.ops.")
	if strings.HasPrefix(name, "_operator.") {
		name = "operator." + strings.TrimPrefix(name, "_operator.")
	}
	if i := strings.Index(name, "::"); i >= 0 {
		name = name[:i] + "." + name[i+2:]
	}
	return name
}

// AllOps lists every op in table order.
func AllOps() []Op {
	out := make([]Op, 0, len(opTab)-1)
	for i := 1; i < len(opTab); i++ {
		out = append(out, Op(i))
	}
	return out
}

// opTab and opIndex are set in init rather than by initializers: the
// generated opTable refers to the shape rules, which call Op.Info, and a
// static reference from Info back to opTable would be an initialization cycle.
var (
	opTab   []OpInfo
	opIndex map[string]Op
	twinTab []twins
)

// twins are an op's Functional, Inplace and Out twins as Ops.
type twins struct{ functional, inplace, out Op }

func init() {
	opTab = opTable[:]
	opIndex = make(map[string]Op, len(opTab))
	for i := 1; i < len(opTab); i++ {
		opIndex[opTab[i].Name] = Op(i)
	}
	twinTab = make([]twins, len(opTab))
	for i := 1; i < len(opTab); i++ {
		info := &opTab[i]
		twinTab[i] = twins{opIndex[info.Functional], opIndex[info.Inplace], opIndex[info.Out]}
	}
}

// ArgIndex returns the position of the named argument in the op's schema, or -1.
func (op Op) ArgIndex(name string) int {
	for i, a := range op.Info().Schema.Args {
		if a.Name == name {
			return i
		}
	}
	return -1
}
