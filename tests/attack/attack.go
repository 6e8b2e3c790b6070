// Package attack generates the hostile-input corpus: forged and broken
// .pte, .pt2 (zip), JSON, FX text, IR text and .npy files, one per class of
// attack fxport must refuse cleanly (docs/reliability.md). Small cases are
// committed under tests/attack/cases (go run ./tests/attack/gen writes
// them; a test checks they are fresh); big ones (a zip bomb, deep nesting,
// a 10 MB line) are generated at test time. cmd/fxport's TestAttackCorpus
// runs every case through the command line's code path.
package attack

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"fmt"
	"strings"

	flatbuffers "github.com/google/flatbuffers/go"

	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/pm"
	"github.com/fxport/fxport/targets/executorch/emit"
	etfb "github.com/fxport/fxport/targets/executorch/fb/executorch_flatbuffer"
	"github.com/fxport/fxport/targets/executorch/pte"
)

// Case is one hostile input and the command that reads it.
type Case struct {
	Name string // file name (its extension picks the reader)
	Data []byte
	Big  bool // generated at test time, not committed
	// Args are the fxport command line; "FILE" is replaced by the case's
	// path, "OUT" by the output path, "PTE" by BasePTE's file and "DIR" by
	// a folder holding the case as input_0.npy.
	Args []string
	// Want is a phrase the refusal must contain (besides the file name);
	// "" means the input is legal and must be accepted.
	Want string
}

// Cases returns every case, small and big, in a fixed order.
func Cases() ([]Case, error) {
	var cs []Case
	ptes, err := pteCases()
	if err != nil {
		return nil, err
	}
	cs = append(cs, ptes...)
	cs = append(cs, zipCases()...)
	cs = append(cs, textCases()...)
	cs = append(cs, bigCases()...)
	return cs, nil
}

// baseSrc is a small program lowered to a .pte (no constants, so the
// program is the whole file) that the forged cases break one field at a
// time, packed raw: pte.Encode would refuse to write them.
const baseSrc = `graph forward(%x: f32[2], %y: f32[2]) {
  %a: f32[2] = aten.add.Tensor(%x, %y)
  %m: f32[2] = aten.mul.Tensor(%a, %a)
  return %m
}
`

func basePTE() (*pte.File, error) {
	p, err := ir.Parse([]byte(baseSrc), "base.fxir")
	if err != nil {
		return nil, err
	}
	pl, err := pm.Build(pm.TargetExecuTorch, "executorch.portable")
	if err != nil {
		return nil, err
	}
	if _, err := pm.Run(p, pl, nil, pm.Config{}); err != nil {
		return nil, err
	}
	f, err := emit.Program(p, emit.Options{})
	if err != nil {
		return nil, err
	}
	b, err := pte.Encode(f)
	if err != nil {
		return nil, err
	}
	return pte.Decode("base.pte", b)
}

// BasePTE is the intact program the forged .pte cases start from, encoded:
// the program the .npy cases are run with ("PTE" in Args).
func BasePTE() ([]byte, error) {
	f, err := basePTE()
	if err != nil {
		return nil, err
	}
	return pte.Encode(f)
}

// firstTensor returns the index of the first tensor value of plan that
// matches ok.
func firstTensor(plan *etfb.ExecutionPlanT, ok func(*etfb.TensorT) bool) int {
	for i, v := range plan.Values {
		if t, isT := v.Val.Value.(*etfb.TensorT); isT && ok(t) {
			return i
		}
	}
	return -1
}

func planned(t *etfb.TensorT) bool { return t.AllocationInfo != nil }

func pteCases() ([]Case, error) {
	type forge struct {
		name, want string
		args       []string
		edit       func(p *etfb.ProgramT) error
	}
	inspect, run := []string{"inspect", "FILE"}, []string{"run", "FILE"}
	forges := []forge{
		{"pte_tensorlist_lists_itself.pte", "is not a Tensor", run, func(p *etfb.ProgramT) error {
			plan := p.ExecutionPlan[0]
			self := int32(len(plan.Values))
			plan.Values = append(plan.Values, &etfb.EValueT{Val: &etfb.KernelTypesT{Type: etfb.KernelTypesTensorList, Value: &etfb.TensorListT{Items: []int32{self}}}})
			return nil
		}},
		{"pte_negative_size.pte", "negative", inspect, func(p *etfb.ProgramT) error {
			plan := p.ExecutionPlan[0]
			i := firstTensor(plan, planned)
			plan.Values[i].Val.Value.(*etfb.TensorT).Sizes[0] = -28
			return nil
		}},
		{"pte_overflowing_size.pte", "overflows", inspect, func(p *etfb.ProgramT) error {
			plan := p.ExecutionPlan[0]
			t := plan.Values[firstTensor(plan, planned)].Val.Value.(*etfb.TensorT)
			t.Sizes = []int32{1 << 30, 1 << 30, 1 << 30}
			t.DimOrder = []byte{0, 1, 2}
			return nil
		}},
		{"pte_window_past_arena.pte", "overrun buffer", inspect, func(p *etfb.ProgramT) error {
			plan := p.ExecutionPlan[0]
			t := plan.Values[firstTensor(plan, planned)].Val.Value.(*etfb.TensorT)
			t.AllocationInfo.MemoryOffsetLow = 0xfffffff0
			return nil
		}},
		{"pte_memory_id_out_of_range.pte", "memory_id", inspect, func(p *etfb.ProgramT) error {
			plan := p.ExecutionPlan[0]
			plan.Values[firstTensor(plan, planned)].Val.Value.(*etfb.TensorT).AllocationInfo.MemoryId = 7
			return nil
		}},
		{"pte_huge_arena.pte", "--max-arena-bytes", run, func(p *etfb.ProgramT) error {
			plan := p.ExecutionPlan[0]
			plan.NonConstBufferSizes = append(plan.NonConstBufferSizes, 1<<40)
			return nil
		}},
		{"pte_jump_forever.pte", "instructions run", run, func(p *etfb.ProgramT) error {
			plan := p.ExecutionPlan[0]
			f := int32(len(plan.Values))
			plan.Values = append(plan.Values, &etfb.EValueT{Val: &etfb.KernelTypesT{Type: etfb.KernelTypesBool, Value: &etfb.BoolT{BoolVal: false}}})
			ch := plan.Chains[0]
			ch.Instructions = append([]*etfb.InstructionT{{InstrArgs: &etfb.InstructionArgumentsT{Type: etfb.InstructionArgumentsJumpFalseCall, Value: &etfb.JumpFalseCallT{CondValueIndex: f, DestinationInstruction: 0}}}}, ch.Instructions...)
			return nil
		}},
		{"pte_op_index_out_of_range.pte", "op_index", inspect, func(p *etfb.ProgramT) error {
			for _, in := range p.ExecutionPlan[0].Chains[0].Instructions {
				if k, ok := in.InstrArgs.Value.(*etfb.KernelCallT); ok {
					k.OpIndex = 99
					return nil
				}
			}
			return fmt.Errorf("no KernelCall")
		}},
		{"pte_value_index_out_of_range.pte", "out of range", inspect, func(p *etfb.ProgramT) error {
			p.ExecutionPlan[0].Outputs = []int32{1 << 20}
			return nil
		}},
		{"pte_constant_index_out_of_range.pte", "data_buffer_idx", inspect, func(p *etfb.ProgramT) error {
			plan := p.ExecutionPlan[0]
			t := plan.Values[firstTensor(plan, planned)].Val.Value.(*etfb.TensorT)
			t.AllocationInfo, t.DataBufferIdx = nil, 1<<20
			return nil
		}},
		{"pte_dim_order_not_a_permutation.pte", "not a permutation", inspect, func(p *etfb.ProgramT) error {
			plan := p.ExecutionPlan[0]
			t := plan.Values[firstTensor(plan, planned)].Val.Value.(*etfb.TensorT)
			t.Sizes, t.DimOrder = []int32{1, 2}, []byte{1, 1}
			return nil
		}},
	}
	var cs []Case
	for _, fg := range forges {
		f, err := basePTE()
		if err != nil {
			return nil, fmt.Errorf("base program: %w", err)
		}
		if err := fg.edit(f.Program); err != nil {
			return nil, fmt.Errorf("%s: %w", fg.name, err)
		}
		b := flatbuffers.NewBuilder(1024)
		b.FinishWithFileIdentifier(f.Program.Pack(b), []byte("ET12"))
		cs = append(cs, Case{Name: fg.name, Data: b.FinishedBytes(), Args: fg.args, Want: fg.want})
	}
	// A truncated program and one whose header claims more than the file.
	f, err := basePTE()
	if err != nil {
		return nil, err
	}
	good, err := pte.Encode(f)
	if err != nil {
		return nil, err
	}
	cs = append(cs, Case{Name: "pte_truncated.pte", Data: good[:len(good)/2], Args: inspect, Want: "pte"})
	cs = append(cs, Case{Name: "pte_garbage.pte", Data: []byte("\x10\x00\x00\x00ET12\x00\xff\xff\xff\xff\xff\xff\xff"), Args: run, Want: "pte"})
	return cs, nil
}

type zentry struct {
	name   string
	data   []byte
	method uint16
}

func buildZip(entries []zentry) []byte {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, e := range entries {
		w, err := zw.CreateHeader(&zip.FileHeader{Name: e.name, Method: e.method})
		if err != nil {
			panic(err) // names and methods here are fixed and valid for the writer
		}
		w.Write(e.data)
	}
	zw.Close()
	return buf.Bytes()
}

// patchCentral sets a 4-byte field (offset field from the start of the
// central directory header) of entry name.
func patchCentral(data []byte, name string, field int, value uint32) []byte {
	out := bytes.Clone(data)
	sig := []byte{'P', 'K', 1, 2}
	for i := 0; i+46 <= len(out); i++ {
		if !bytes.Equal(out[i:i+4], sig) {
			continue
		}
		n := int(binary.LittleEndian.Uint16(out[i+28:]))
		if i+46+n <= len(out) && string(out[i+46:i+46+n]) == name {
			binary.LittleEndian.PutUint32(out[i+field:], value)
		}
	}
	return out
}

func zipCases() []Case {
	parse := []string{"parse", "FILE"}
	pt2 := func(extra ...zentry) []byte {
		return buildZip(append([]zentry{{name: "m/archive_format", data: []byte("pt2")}}, extra...))
	}
	claims := patchCentral(buildZip([]zentry{{name: "m/archive_format", data: []byte("pt2")}, {name: "m/models/model.json", data: []byte("{}")}}), "m/models/model.json", 24, 0xfffffff0)
	flipped := buildZip([]zentry{{name: "m/archive_format", data: []byte("pt2")}, {name: "m/models/model.json", data: []byte(`{"graph_module": {}}`)}})
	if i := bytes.Index(flipped, []byte(`"graph_module"`)); i >= 0 {
		flipped[i+1] ^= 0x20 // the stored JSON no longer matches its CRC
	}
	return []Case{
		{Name: "zip_slip.pt2", Data: pt2(zentry{name: "../../evil.json", data: []byte("{}")}), Args: parse, Want: "unsafe name"},
		{Name: "zip_absolute_name.pt2", Data: pt2(zentry{name: "/etc/evil", data: []byte("x")}), Args: parse, Want: "absolute path"},
		{Name: "zip_duplicate_entries.pt2", Data: pt2(zentry{name: "m/models/model.json", data: []byte("{}")}, zentry{name: "m/models/model.json", data: []byte("{}")}), Args: parse, Want: "appears twice"},
		{Name: "zip_claims_4gb.pt2", Data: claims, Args: parse, Want: "model.json"},
		{Name: "zip_truncated.pt2", Data: pt2(zentry{name: "m/models/model.json", data: []byte("{}")})[:40], Args: parse, Want: "zip"},
		{Name: "zip_crc_mismatch.pt2", Data: flipped, Args: parse, Want: "checksum"},
		{Name: "zip_no_program.pt2", Data: pt2(), Args: parse, Want: "no program"},
	}
}

func textCases() []Case {
	parse := []string{"parse", "FILE"}
	onnx := []string{"export", "FILE", "--target", "onnx", "-o", "OUT"}
	const g = "graph forward(%x: f32[s0, 4]) {\n  %y: f32[s0, 4] = aten.add.Tensor(%x, %x)\n  return %y\n}\n"
	const wg = "input p_w: parameter \"w\"\ninput x: user_input\noutput user_output\ngraph forward(%p_w: f32[2], %x: f32[2]) {\n  %y: f32[2] = aten.add.Tensor(%x, %p_w)\n  return %y\n}\n"
	return []Case{
		{Name: "json_not_json.pt2", Data: []byte("this is not JSON {"), Args: parse, Want: "JSON"},
		{Name: "ir_symbol_min_over_max.fxir", Data: []byte("symbol s0: [64, 2]\n" + g), Args: onnx, Want: "min > max"},
		{Name: "ir_hint_outside_range.fxir", Data: []byte("symbol s0: [2, 64] hint 100\n" + g), Args: onnx, Want: "outside its range"},
		{Name: "ir_negative_size_symbol.fxir", Data: []byte("symbol s0: [-4, 64]\n" + g), Args: onnx, Want: "negative sizes"},
		{Name: "ir_negative_dim.fxir", Data: []byte("graph forward(%x: f32[-2, 4]) {\n  return %x\n}\n"), Args: onnx, Want: "negative"},
		{Name: "ir_weight_2p62_with_8_bytes.fxir", Data: []byte(strings.ReplaceAll("weight \"w\": f32[4611686018427387904] = inline(\"0000803f00000040\")\n"+wg, "f32[2]", "f32[4611686018427387904]")), Args: onnx, Want: "overflows"},
		{Name: "ir_inline_weight_too_long.fxir", Data: []byte("weight \"w\": f32[2] = inline(\"0000803f000000400000\")\n" + wg), Args: onnx, Want: "longer than"},
		{Name: "ir_cond_operand_count.fxir", Data: []byte("graph forward(%x: f32[4]) {\n  %c: f32[4] = higher_order.cond(True, ^t, ^e, [%x, %x])\n  ^t(%a: f32[4]) {\n    return %a\n  }\n  ^e(%a: f32[4]) {\n    return %a\n  }\n  return %c\n}\n"), Args: onnx, Want: "operands"},
		{Name: "ir_cond_branch_types.fxir", Data: []byte("graph forward(%x: f32[4]) {\n  %c: f32[4] = higher_order.cond(True, ^t, ^e, [%x])\n  ^t(%a: f32[4]) {\n    return %a\n  }\n  ^e(%a: i64[4]) {\n    return %a\n  }\n  return %c\n}\n"), Args: onnx, Want: "branch ^e"},
		{Name: "ir_undefined_value.fxir", Data: []byte("graph forward(%x: f32[4]) {\n  %y: f32[4] = aten.add.Tensor(%x, %nope)\n  return %y\n}\n"), Args: parse, Want: "nope"},
		{Name: "ir_unknown_op.fxir", Data: []byte("graph forward(%x: f32[4]) {\n  %y: f32[4] = aten.no_such_op.default(%x)\n  return %y\n}\n"), Args: parse, Want: "no_such_op"},
		{Name: "ir_control_chars.fxir", Data: []byte("graph forward(%x\x00\x1b[31m: f32[4]) {\n  return %x\n}\n"), Args: parse, Want: "fxir"},
		// Unicode and control characters in an FX dump: read (an unknown op
		// becomes an opaque call), never a crash.
		{Name: "fx_unicode_garbage.fx", Data: []byte("graph():\n    %x : [num_users=1] = placeholder[target=x\u202e\u0000]\n    %y : = call_function[target=torch.ops.aten.\u00e9\u00e9.default](args = (%x,), kwargs = {})\n    return y\n"), Args: parse},
		{Name: "npy_hostile_header.npy", Data: append([]byte("\x93NUMPY\x01\x00\xff\xff{'descr': '<f4', 'fortran_order': False, 'shape': (4611686018427387904, 4), }"), bytes.Repeat([]byte(" "), 16)...), Args: []string{"run", "PTE", "--inputs", "DIR"}, Want: "npy"},
	}
}

// bigCases are generated at test time: too large to commit.
func bigCases() []Case {
	parse := []string{"parse", "FILE"}
	// A zip bomb: 64 MiB of zeros deflated to ~64 KiB, as the program JSON.
	var bomb bytes.Buffer
	zw := zip.NewWriter(&bomb)
	af, _ := zw.Create("m/archive_format")
	af.Write([]byte("pt2"))
	w, _ := zw.Create("m/models/model.json")
	w.Write([]byte("{"))
	zero := make([]byte, 1<<20)
	for range 64 {
		w.Write(zero)
	}
	zw.Close()
	deep := `{"schema_version": {"major": 8, "minor": 0}, "graph_module": ` + strings.Repeat("[", 1_000_000) + strings.Repeat("]", 1_000_000) + "}"
	// A 9 MB FX dump whose one node takes a list of three million ints.
	longList := "graph():\n    %x : [num_users=1] = placeholder[target=x]\n    %s : [num_users=1] = call_function[target=torch.ops.aten.sum.dim_IntList](args = (%x, [" +
		strings.Repeat("1, ", 3_000_000) + "1]), kwargs = {})\n    return (s,)\n"
	deepType := "graph forward(%x: " + strings.Repeat("list<", 100_000) + "f32[4]" + strings.Repeat(">", 100_000) + ") {\n  return %x\n}\n"
	return []Case{
		{Name: "big_zip_bomb.pt2", Data: bomb.Bytes(), Big: true, Args: []string{"parse", "FILE", "--max-json-bytes", "16777216"}, Want: "more than the 16777216"},
		{Name: "big_json_nesting.pt2", Data: []byte(deep), Big: true, Args: parse, Want: "nested deeper than"},
		// Legal, deep: parsed, verified and printed at depth 10,000; lowered
		// to ExecuTorch at depth 1,000 (plan-memory is still quadratic in
		// the depth: docs/reliability.md).
		{Name: "big_nested_cond_10000.fxir", Data: NestedCond(10_000), Big: true, Args: []string{"export", "FILE", "--target", "dynamo", "-o", "OUT"}},
		{Name: "big_nested_cond_1000.fxir", Data: NestedCond(1_000), Big: true, Args: []string{"export", "FILE", "--target", "executorch-portable", "-o", "OUT"}},
		{Name: "big_deep_list_type.fxir", Data: []byte(deepType), Big: true, Args: parse, Want: ""},
		{Name: "big_long_list.fx", Data: []byte(longList), Big: true, Args: parse, Want: "more than 100000 elements"},
		{Name: "big_text_over_limit.fx", Data: []byte(longList), Big: true, Args: []string{"parse", "FILE", "--max-text-bytes", "1000000"}, Want: "over the 1000000-byte input limit"},
	}
}

// NestedCond is IR text of a legal program whose cond nests depth deep
// (each true branch holds the next cond).
func NestedCond(depth int) []byte {
	var b strings.Builder
	b.WriteString("graph forward(%x: f32[4]) {\n")
	for i := range depth {
		fmt.Fprintf(&b, "%%c%d: f32[4] = higher_order.cond(True, ^t%d, ^e%d, [%%x])\n^t%d(%%x: f32[4]) {\n", i, i, i, i)
	}
	b.WriteString("return %x\n")
	for i := depth - 1; i >= 0; i-- {
		fmt.Fprintf(&b, "}\n^e%d(%%x: f32[4]) {\nreturn %%x\n}\nreturn %%c%d\n", i, i)
	}
	b.WriteString("}\n")
	return []byte(b.String())
}
