package pte

import (
	"fmt"

	flatbuffers "github.com/google/flatbuffers/go"

	bpfb "github.com/fxport/fxport/targets/executorch/fb/bundled_program_flatbuffer"
	etfb "github.com/fxport/fxport/targets/executorch/fb/executorch_flatbuffer"
)

// BundledSuite is one method's test suite in a bundled program.
type BundledSuite struct {
	Method string
	Cases  []BundledCase
}

// BundledCase is one test case: the method's inputs, in order, and the
// outputs it is expected to produce from them (ExecuTorch compares every
// method output with the expected output of the same index).
type BundledCase struct {
	Inputs          []BundledValue
	ExpectedOutputs []BundledValue
}

// BundledKind is the kind of a bundled value (the schema's ValueUnion).
type BundledKind uint8

// The kinds of bundled values, numbered as the schema's ValueUnion.
const (
	BundledTensor BundledKind = BundledKind(bpfb.ValueUnionTensor)
	BundledInt    BundledKind = BundledKind(bpfb.ValueUnionInt)
	BundledBool   BundledKind = BundledKind(bpfb.ValueUnionBool)
	BundledDouble BundledKind = BundledKind(bpfb.ValueUnionDouble)
)

func (k BundledKind) String() string {
	if s, ok := bpfb.EnumNamesValueUnion[bpfb.ValueUnion(k)]; ok && k != 0 {
		return s
	}
	return fmt.Sprintf("kind %d", uint8(k))
}

// BundledValue is one input or expected output of a test case: Tensor for
// BundledTensor, else the scalar field of its kind.
type BundledValue struct {
	Kind   BundledKind
	Tensor *BundledTensorData
	Int    int64
	Bool   bool
	Double float64
}

// BundledTensorData is a bundled tensor. Data holds the elements in the
// physical order DimOrder gives (the outermost dimension first), little
// endian, exactly numel × element size bytes.
type BundledTensorData struct {
	ScalarType etfb.ScalarType
	Sizes      []int32
	DimOrder   []uint8
	Data       []byte
}

// Numel is the number of elements of the tensor.
func (t *BundledTensorData) Numel() int64 {
	n := int64(1)
	for _, s := range t.Sizes {
		n *= int64(s)
	}
	return n
}

// decodeSuites decodes and checks every test suite of bp against the
// embedded program's methods.
func decodeSuites(bp *bpfb.BundledProgram, f *File) ([]BundledSuite, error) {
	methods := map[string]*etfb.ExecutionPlanT{}
	for _, m := range f.Methods {
		methods[m.Plan.Name] = m.Plan
	}
	var out []BundledSuite
	var suite bpfb.BundledMethodTestSuite
	var tc bpfb.BundledMethodTestCase
	for si := 0; si < bp.MethodTestSuitesLength(); si++ {
		if !bp.MethodTestSuites(&suite, si) {
			return nil, fmt.Errorf("method_test_suites[%d]: missing", si)
		}
		s := BundledSuite{Method: string(suite.MethodName())}
		where := fmt.Sprintf("method_test_suites[%d] (%q)", si, s.Method)
		if _, ok := methods[s.Method]; !ok {
			return nil, fmt.Errorf("%s: the embedded program has no method %q", where, s.Method)
		}
		for ci := 0; ci < suite.TestCasesLength(); ci++ {
			cwhere := fmt.Sprintf("%s: test_cases[%d]", where, ci)
			if !suite.TestCases(&tc, ci) {
				return nil, fmt.Errorf("%s: missing", cwhere)
			}
			var c BundledCase
			var err error
			if c.Inputs, err = decodeValues(tc.InputsLength(), tc.Inputs, cwhere+": inputs"); err != nil {
				return nil, err
			}
			if c.ExpectedOutputs, err = decodeValues(tc.ExpectedOutputsLength(), tc.ExpectedOutputs, cwhere+": expected_outputs"); err != nil {
				return nil, err
			}
			s.Cases = append(s.Cases, c)
		}
		out = append(out, s)
	}
	return out, nil
}

func decodeValues(n int, get func(*bpfb.Value, int) bool, where string) ([]BundledValue, error) {
	out := make([]BundledValue, 0, n)
	var v bpfb.Value
	for i := 0; i < n; i++ {
		if !get(&v, i) {
			return nil, fmt.Errorf("%s[%d]: missing", where, i)
		}
		bv, err := decodeValue(&v)
		if err != nil {
			return nil, fmt.Errorf("%s[%d]: %w", where, i, err)
		}
		out = append(out, bv)
	}
	return out, nil
}

func decodeValue(v *bpfb.Value) (BundledValue, error) {
	var tab flatbuffers.Table
	kind := v.ValType()
	if _, known := bpfb.EnumNamesValueUnion[kind]; !known || kind == bpfb.ValueUnionNONE {
		return BundledValue{}, fmt.Errorf("value kind %d is not one of Tensor, Int, Bool, Double", kind)
	}
	if !v.Val(&tab) {
		return BundledValue{}, fmt.Errorf("%s value: missing its table", kind)
	}
	out := BundledValue{Kind: BundledKind(kind)}
	switch kind {
	case bpfb.ValueUnionTensor:
		var t bpfb.Tensor
		t.Init(tab.Bytes, tab.Pos)
		bt := &BundledTensorData{ScalarType: t.ScalarType(), Data: t.DataBytes(), DimOrder: t.DimOrderBytes()}
		for i := 0; i < t.SizesLength(); i++ {
			bt.Sizes = append(bt.Sizes, t.Sizes(i))
		}
		if err := bt.Check(); err != nil {
			return BundledValue{}, err
		}
		out.Tensor = bt
	case bpfb.ValueUnionInt:
		var x bpfb.Int
		x.Init(tab.Bytes, tab.Pos)
		out.Int = x.IntVal()
	case bpfb.ValueUnionBool:
		var x bpfb.Bool
		x.Init(tab.Bytes, tab.Pos)
		out.Bool = x.BoolVal()
	case bpfb.ValueUnionDouble:
		var x bpfb.Double
		x.Init(tab.Bytes, tab.Pos)
		out.Double = x.DoubleVal()
	}
	return out, nil
}

// maxBundledRank is the runtime's bound on a bundled tensor's rank
// (kMaxDim in devtools/bundled_program).
const maxBundledRank = 16

// Check reports a tensor whose fields disagree: an unknown scalar type, a
// negative size, a dim_order that is not a permutation of the dimensions,
// or data that is not exactly numel × element size bytes.
func (t *BundledTensorData) Check() error {
	esize := ScalarTypeSize(t.ScalarType)
	if esize == 0 {
		return fmt.Errorf("tensor: scalar type %d (%s) has no known element size", t.ScalarType, scalarName(t.ScalarType))
	}
	if len(t.Sizes) > maxBundledRank {
		return fmt.Errorf("tensor: rank %d exceeds %d", len(t.Sizes), maxBundledRank)
	}
	n := uint64(1)
	for i, s := range t.Sizes {
		if s < 0 {
			return fmt.Errorf("tensor: sizes[%d] = %d is negative", i, s)
		}
		n *= uint64(s)
		if n > 1<<40 {
			return fmt.Errorf("tensor: sizes %s hold too many elements", dims(t.Sizes))
		}
	}
	if len(t.DimOrder) != len(t.Sizes) {
		return fmt.Errorf("tensor: dim_order %s has %d entries for sizes %s", dims(t.DimOrder), len(t.DimOrder), dims(t.Sizes))
	}
	seen := make([]bool, len(t.Sizes))
	for _, d := range t.DimOrder {
		if int(d) >= len(seen) || seen[d] {
			return fmt.Errorf("tensor: dim_order %s is not a permutation of [0, %d)", dims(t.DimOrder), len(t.Sizes))
		}
		seen[d] = true
	}
	if want := n * uint64(esize); uint64(len(t.Data)) != want {
		return fmt.Errorf("tensor: %d data bytes for %s sizes %s (want %d = %d elements × %d bytes)", len(t.Data), scalarName(t.ScalarType), dims(t.Sizes), want, n, esize)
	}
	return nil
}
