package onnx

import (
	"fmt"

	"github.com/fxport/fxport/ir"
	pb "github.com/fxport/fxport/targets/onnx/onnxpb"
)

// ONNX-TR03 / ONNX-TR04: grouped matrix products unrolled per expert (the
// expert count G must be static; code size is O(G)).

// groupedRows lowers the 2-D × 3-D form: rows [offs[g-1], offs[g]) of a
// times w[g] (+ bias[g]), concatenated; rows past offs[G-1] are zero.
func groupedRows(b *Builder, a, w, offs, bias string, dt, offsDT ir.DType, g int64) (string, error) {
	o, err := b.CastTo(offs, offsDT, ir.Int64)
	if err != nil {
		return "", err
	}
	axis0 := b.I64s(0)
	var parts []string
	start := b.I64s(0)
	for i := int64(0); i < g; i++ {
		end := b.Tmp("Slice", []string{o, b.I64s(i), b.I64s(i + 1)})
		rows := b.Tmp("Slice", []string{a, start, end, axis0})
		p := b.Tmp("MatMul", []string{rows, b.Tmp("Gather", []string{w, b.I64(i)}, AttrInt("axis", 0))})
		if bias != "" {
			p = b.Tmp("Add", []string{p, b.Tmp("Gather", []string{bias, b.I64(i)}, AttrInt("axis", 0))})
		}
		parts = append(parts, p)
		start = end
	}
	// Zero rows after the last group: ConstantOfShape([M - offs[G-1], N]).
	m := b.Tmp("Slice", []string{b.Tmp("Shape", []string{a}), b.I64s(0), b.I64s(1)})
	n := b.Tmp("Slice", []string{b.Tmp("Shape", []string{w}), b.I64s(2), b.I64s(3)})
	shape := b.Tmp("Concat", []string{b.Tmp("Sub", []string{m, start}), n}, AttrInt("axis", 0))
	et, err := elemType(dt)
	if err != nil {
		return "", err
	}
	zero, err := encodeScalar(dt, 0)
	if err != nil {
		return "", err
	}
	parts = append(parts, b.Tmp("ConstantOfShape", []string{shape},
		AttrTensor("value", &pb.TensorProto{Dims: []int64{1}, DataType: int32Ptr(int32(et)), RawData: zero})))
	return b.Tmp("Concat", parts, AttrInt("axis", 0)), nil
}

// staticGroups is the static expert count of a 3-D weight.
func staticGroups(r *argReader, name string) (int64, error) {
	s := r.Shape(name)
	if r.err != nil {
		return 0, r.err
	}
	if len(s) != 3 {
		return 0, fmt.Errorf("argument %q: want a 3-D [G, K, N] tensor, got rank %d", name, len(s))
	}
	g, ok := s[0].Const()
	if !ok {
		return 0, fmt.Errorf("argument %q: the expert count %s must be static to unroll the grouped product", name, s[0])
	}
	return g, nil
}

func lowerGroupedMm(b *Builder, n *ir.Node) error {
	r := reader(b, n)
	out := r.out(0).DType
	dt := r.DT("self")
	a, w := r.In("self", dt), r.In("mat2", dt)
	ra, rb := r.Rank("self"), r.Rank("mat2")
	var bias string
	if r.Has("bias") && !r.Arg("bias").IsNone() {
		bias = r.In("bias", dt)
	}
	if r.err != nil {
		return r.err
	}
	var res string
	switch {
	case ra == 3 && rb == 3:
		res = b.Tmp("MatMul", []string{a, w})
		if bias != "" {
			res = b.Tmp("Add", []string{res, b.Tmp("Unsqueeze", []string{bias, b.I64s(1)})})
		}
	case ra == 2 && rb == 3:
		if !r.Has("offs") || r.Arg("offs").IsNone() {
			return fmt.Errorf("_grouped_mm of a 2-D and a 3-D operand needs offs")
		}
		g, err := staticGroups(r, "mat2")
		if err != nil {
			return err
		}
		odt := r.DT("offs")
		if res, err = groupedRows(b, a, w, r.In("offs", odt), bias, dt, odt, g); err != nil {
			return err
		}
	default:
		return fmt.Errorf("_grouped_mm of a %d-D and a %d-D operand is not lowered (2-D × 3-D and 3-D × 3-D are)", ra, rb)
	}
	if r.err != nil {
		return r.err
	}
	res, err := b.CastTo(res, dt, out)
	if err != nil {
		return err
	}
	b.Bind(n.Results[0], res)
	return nil
}

func lowerGroupedMmFallback(b *Builder, n *ir.Node) error {
	r := reader(b, n)
	dt := r.out(0).DType
	a, w := r.In("input", dt), r.In("weight", dt)
	if r.Rank("input") != 2 {
		return fmt.Errorf("grouped_mm_fallback: input must be 2-D [T, K]")
	}
	g, err := staticGroups(r, "weight")
	if err != nil {
		return err
	}
	odt := r.DT("offs")
	o := r.In("offs", odt)
	if r.err != nil {
		return r.err
	}
	res, err := groupedRows(b, a, w, o, "", dt, odt, g)
	if err != nil {
		return err
	}
	b.Bind(n.Results[0], res)
	return nil
}

func init() {
	translation("ONNX-TR03", "translate-grouped-mm",
		"_grouped_mm unrolled per expert\n\n2-D × 3-D: for each of the G experts (G static), Slice the rows between consecutive offs, MatMul by mat2[g], add bias[g]; Concat, with zero rows after offs[G-1]. 3-D × 3-D is one batched MatMul. bias and out_dtype are honoured. Code size is O(G).",
		lowerGroupedMm, ir.OpAten_GroupedMm)
	translation("ONNX-TR04", "translate-grouped-mm-fallback",
		"transformers grouped_mm_fallback as ONNX-TR03\n\ninput [T, K], weight [E, K, N], E cumulative offsets: the same unrolled per-expert lowering.",
		lowerGroupedMmFallback, ir.OpTransformersGroupedMmFallback)
}
