package pte

import (
	"fmt"
	"sort"

	flatbuffers "github.com/google/flatbuffers/go"

	bpfb "github.com/fxport/fxport/targets/executorch/fb/bundled_program_flatbuffer"
	etfb "github.com/fxport/fxport/targets/executorch/fb/executorch_flatbuffer"
)

// BundledVersion is the bundled program schema version EncodeBundled
// writes (BUNDLED_PROGRAM_SCHEMA_VERSION in devtools/bundled_program).
const BundledVersion = 2

// Alignments of the bundled program's [ubyte] vectors (the schema's
// force_align): the embedded program and every tensor's data.
const (
	bundledProgramAlignment = 32
	bundledTensorAlignment  = 16
)

// EncodeBundled wraps a complete .pte (program: the bytes Encode or Write
// produce, eh00 header and segments included) with test suites into a
// bundled program (.bpte), as exir's serialize_from_bundled_program_to_flatbuffer
// does: a BundledProgram flatbuffer (identifier BP08, version
// BundledVersion) whose program vector holds the .pte bytes unchanged,
// starting at a multiple of 32 in the file, with every tensor's data
// 16-aligned. The .pte's segment offsets stay relative to its own start,
// so the runtime uses the embedded bytes in place.
//
// The suites are written sorted by method name (exir's order); every case
// must give one input per method input (a tensor of the declared scalar
// type and rank for a tensor input) and one expected output per method
// output. The bytes are deterministic, and are decoded again with Decode
// before they are returned.
func EncodeBundled(program []byte, suites []BundledSuite) ([]byte, error) {
	f, err := Decode("embedded program", program)
	if err != nil {
		return nil, fmt.Errorf("encode .bpte: %w", err)
	}
	if f.Bundled != nil {
		return nil, fmt.Errorf("encode .bpte: the program to embed is itself a bundled program")
	}
	sorted := append([]BundledSuite(nil), suites...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Method < sorted[j].Method })
	for si, s := range sorted {
		if si > 0 && sorted[si-1].Method == s.Method {
			return nil, fmt.Errorf("encode .bpte: two test suites for method %q", s.Method)
		}
		if err := checkSuite(f, s); err != nil {
			return nil, fmt.Errorf("encode .bpte: %w", err)
		}
	}
	out := packBundled(program, sorted)
	if _, err := Decode("encoded bundled program", out); err != nil {
		return nil, fmt.Errorf("encode .bpte: the written bytes do not decode: %w", err)
	}
	return out, nil
}

// packBundled serializes a BundledProgram without checking its contents:
// the suites (test cases first), then the program vector, so that the
// program lands near the front of the file, then the root table.
func packBundled(program []byte, suites []BundledSuite) []byte {
	b := flatbuffers.NewBuilder(len(program) + 1024)
	suiteOffs := make([]flatbuffers.UOffsetT, len(suites))
	for i, s := range suites {
		suiteOffs[i] = packSuite(b, s)
	}
	suitesVec := offsetVector(b, suiteOffs)
	prog := alignedByteVector(b, program, bundledProgramAlignment)
	bpfb.BundledProgramStart(b)
	bpfb.BundledProgramAddVersion(b, BundledVersion)
	bpfb.BundledProgramAddMethodTestSuites(b, suitesVec)
	bpfb.BundledProgramAddProgram(b, prog)
	b.FinishWithFileIdentifier(bpfb.BundledProgramEnd(b), []byte(bundledMagic))
	return b.FinishedBytes()
}

// checkSuite checks a suite against the method it tests.
func checkSuite(f *File, s BundledSuite) error {
	var plan *etfb.ExecutionPlanT
	var names []string
	for _, m := range f.Methods {
		names = append(names, m.Plan.Name)
		if m.Plan.Name == s.Method {
			plan = m.Plan
		}
	}
	if plan == nil {
		return fmt.Errorf("test suite for method %q: the program has no such method (methods: %v)", s.Method, names)
	}
	for ci, c := range s.Cases {
		where := fmt.Sprintf("method %q: test case %d", s.Method, ci)
		if len(c.Inputs) != len(plan.Inputs) {
			return fmt.Errorf("%s: %d inputs, the method takes %d", where, len(c.Inputs), len(plan.Inputs))
		}
		if len(c.ExpectedOutputs) != len(plan.Outputs) {
			return fmt.Errorf("%s: %d expected outputs, the method returns %d", where, len(c.ExpectedOutputs), len(plan.Outputs))
		}
		for i, v := range c.Inputs {
			if err := checkBundledValue(plan, plan.Inputs[i], v); err != nil {
				return fmt.Errorf("%s: input %d: %w", where, i, err)
			}
		}
		for i, v := range c.ExpectedOutputs {
			if err := checkBundledValue(plan, plan.Outputs[i], v); err != nil {
				return fmt.Errorf("%s: expected output %d: %w", where, i, err)
			}
		}
	}
	return nil
}

// checkBundledValue checks v against the declared value vi of plan: the
// same kind, and for tensors the same scalar type and rank.
func checkBundledValue(plan *etfb.ExecutionPlanT, vi int32, v BundledValue) error {
	if vi < 0 || int(vi) >= len(plan.Values) || plan.Values[vi] == nil || plan.Values[vi].Val == nil {
		return fmt.Errorf("value %d of the method is missing", vi)
	}
	decl := plan.Values[vi].Val
	want := map[etfb.KernelTypes]BundledKind{
		etfb.KernelTypesTensor: BundledTensor, etfb.KernelTypesInt: BundledInt,
		etfb.KernelTypesBool: BundledBool, etfb.KernelTypesDouble: BundledDouble,
	}[decl.Type]
	if want == 0 {
		return fmt.Errorf("the method's value %d is a %s, which a bundled program cannot hold", vi, decl.Type)
	}
	if v.Kind != want {
		return fmt.Errorf("a %s for the method's %s value %d", v.Kind, want, vi)
	}
	if v.Kind != BundledTensor {
		return nil
	}
	if v.Tensor == nil {
		return fmt.Errorf("tensor value without its tensor")
	}
	if err := v.Tensor.Check(); err != nil {
		return err
	}
	t := decl.Value.(*etfb.TensorT)
	if v.Tensor.ScalarType != t.ScalarType || len(v.Tensor.Sizes) != len(t.Sizes) {
		return fmt.Errorf("%s for the method's %s (value %d)", v.Tensor, tensorType(t), vi)
	}
	return nil
}

func packSuite(b *flatbuffers.Builder, s BundledSuite) flatbuffers.UOffsetT {
	cases := make([]flatbuffers.UOffsetT, len(s.Cases))
	for i, c := range s.Cases {
		ins := packValues(b, c.Inputs)
		outs := packValues(b, c.ExpectedOutputs)
		bpfb.BundledMethodTestCaseStart(b)
		bpfb.BundledMethodTestCaseAddInputs(b, ins)
		bpfb.BundledMethodTestCaseAddExpectedOutputs(b, outs)
		cases[i] = bpfb.BundledMethodTestCaseEnd(b)
	}
	name := b.CreateString(s.Method)
	casesVec := offsetVector(b, cases)
	bpfb.BundledMethodTestSuiteStart(b)
	bpfb.BundledMethodTestSuiteAddMethodName(b, name)
	bpfb.BundledMethodTestSuiteAddTestCases(b, casesVec)
	return bpfb.BundledMethodTestSuiteEnd(b)
}

func packValues(b *flatbuffers.Builder, vs []BundledValue) flatbuffers.UOffsetT {
	offs := make([]flatbuffers.UOffsetT, len(vs))
	for i, v := range vs {
		var val flatbuffers.UOffsetT
		switch v.Kind {
		case BundledTensor:
			val = packTensor(b, v.Tensor)
		case BundledInt:
			bpfb.IntStart(b)
			bpfb.IntAddIntVal(b, v.Int)
			val = bpfb.IntEnd(b)
		case BundledBool:
			bpfb.BoolStart(b)
			bpfb.BoolAddBoolVal(b, v.Bool)
			val = bpfb.BoolEnd(b)
		case BundledDouble:
			bpfb.DoubleStart(b)
			bpfb.DoubleAddDoubleVal(b, v.Double)
			val = bpfb.DoubleEnd(b)
		default:
			// Unreachable through EncodeBundled, which checks kinds; an
			// empty table keeps the buffer well formed.
			bpfb.IntStart(b)
			val = bpfb.IntEnd(b)
		}
		bpfb.ValueStart(b)
		bpfb.ValueAddValType(b, bpfb.ValueUnion(v.Kind))
		bpfb.ValueAddVal(b, val)
		offs[i] = bpfb.ValueEnd(b)
	}
	return offsetVector(b, offs)
}

func packTensor(b *flatbuffers.Builder, t *BundledTensorData) flatbuffers.UOffsetT {
	bpfb.TensorStartSizesVector(b, len(t.Sizes))
	for i := len(t.Sizes) - 1; i >= 0; i-- {
		b.PrependInt32(t.Sizes[i])
	}
	sizes := b.EndVector(len(t.Sizes))
	data := alignedByteVector(b, t.Data, bundledTensorAlignment)
	dimOrder := b.CreateByteVector(t.DimOrder)
	bpfb.TensorStart(b)
	bpfb.TensorAddScalarType(b, t.ScalarType)
	bpfb.TensorAddSizes(b, sizes)
	bpfb.TensorAddData(b, data)
	bpfb.TensorAddDimOrder(b, dimOrder)
	return bpfb.TensorEnd(b)
}

// offsetVector writes a vector of table offsets.
func offsetVector(b *flatbuffers.Builder, offs []flatbuffers.UOffsetT) flatbuffers.UOffsetT {
	b.StartVector(4, len(offs), 4)
	for i := len(offs) - 1; i >= 0; i-- {
		b.PrependUOffsetT(offs[i])
	}
	return b.EndVector(len(offs))
}

// alignedByteVector writes a [ubyte] vector whose first element sits at a
// multiple of align in the finished buffer: the padding goes in first, so
// that the 4-byte length prefix CreateByteVector adds needs none.
func alignedByteVector(b *flatbuffers.Builder, data []byte, align int) flatbuffers.UOffsetT {
	b.Prep(align, len(data))
	return b.CreateByteVector(data)
}
