package pt2

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/fxport/fxport/ir"
)

// jprog builds a small ExportedProgram JSON document. By default it has one
// user input x: f32[2, 3] and returns what the nodes compute.
type jprog struct {
	schema   string   // "8, 20" unless set
	inputs   []string // graph.inputs members
	specsIn  []string // signature.input_specs members
	nodes    []string
	outputs  []string
	specsOut []string
	tv       map[string]string // tensor_values
	tables   string            // extra graph fields, ", "-prefixed
	top      string            // extra top-level fields, ", "-prefixed
	ranges   string            // range_constraints body
}

func tmeta(dtype int, sizes ...string) string {
	var s, st []string
	for _, d := range sizes {
		if strings.HasPrefix(d, "{") {
			s = append(s, d)
		} else {
			s = append(s, `{"as_int": `+d+`}`)
		}
		st = append(st, `{"as_int": 1}`)
	}
	return fmt.Sprintf(`{"dtype": %d, "sizes": [%s], "requires_grad": false, "device": {"type": "cpu", "index": null}, "strides": [%s], "storage_offset": {"as_int": 0}, "layout": 7}`,
		dtype, strings.Join(s, ", "), strings.Join(st, ", "))
}

func tref(name string) string { return `{"as_tensor": {"name": "` + name + `"}}` }

func jnode(target, inputs, outputs string) string {
	return `{"target": "` + target + `", "inputs": [` + inputs + `], "outputs": [` + outputs + `], "metadata": {}}`
}

func jin(name, arg string, kind int) string {
	return fmt.Sprintf(`{"name": %q, "arg": %s, "kind": %d}`, name, arg, kind)
}

func (j jprog) String() string {
	if j.schema == "" {
		j.schema = "8, 20"
	}
	if j.inputs == nil {
		j.inputs = []string{tref("x")}
		j.specsIn = []string{`{"user_input": {"arg": ` + tref("x") + `}}`}
	}
	if j.tv == nil {
		j.tv = map[string]string{}
	}
	if _, ok := j.tv["x"]; !ok {
		j.tv["x"] = tmeta(7, "2", "3")
	}
	if j.specsOut == nil {
		for _, o := range j.outputs {
			j.specsOut = append(j.specsOut, `{"user_output": {"arg": `+o+`}}`)
		}
	}
	var tv []string
	for k, v := range j.tv {
		tv = append(tv, fmt.Sprintf("%q: %s", k, v))
	}
	major, minor, _ := strings.Cut(j.schema, ", ")
	return fmt.Sprintf(`{"graph_module": {"graph": {"inputs": [%s], "outputs": [%s], "nodes": [%s], "tensor_values": {%s}%s},
 "signature": {"input_specs": [%s], "output_specs": [%s]}, "module_call_graph": []},
 "opset_version": {"aten": 10}, "range_constraints": {%s}, "schema_version": {"major": %s, "minor": %s}%s}`,
		strings.Join(j.inputs, ", "), strings.Join(j.outputs, ", "), strings.Join(j.nodes, ", "), strings.Join(tv, ", "), j.tables,
		strings.Join(j.specsIn, ", "), strings.Join(j.specsOut, ", "), j.ranges, major, minor, j.top)
}

// readJSON reads a program JSON document as a file named prog.json would be.
func readJSON(doc string) (*ir.Program, error) {
	return readFrom(bytes.NewReader([]byte(doc)), int64(len(doc)), "prog.json", "")
}

var relu = jnode("torch.ops.aten.relu.default", jin("self", tref("x"), 1), tref("relu"))

func TestProgramJSON(t *testing.T) {
	f32 := tmeta(7, "2", "3")
	for _, c := range []struct {
		name string
		prog jprog
		want []string // substrings of the IR text
	}{
		{"plain", jprog{nodes: []string{relu}, outputs: []string{tref("relu")}, tv: map[string]string{"relu": f32}},
			[]string{"%relu: f32[2, 3] = aten.relu.default(%x)", "return %relu"}},
		{"srepr and str() expressions", jprog{
			tv: map[string]string{
				"x":    tmeta(7, `{"as_expr": {"expr_str": "Symbol('s0', integer=True, positive=True)", "hint": {"as_int": 5}}}`, "3"),
				"relu": tmeta(7, `{"as_expr": {"expr_str": "s0", "hint": null}}`, "3"),
				"view": tmeta(7, `{"as_expr": {"expr_str": "Mul(Integer(3), Symbol('s0', integer=True, positive=True))", "hint": {"as_int": 15}}}`),
			},
			nodes: []string{relu,
				jnode("torch.ops.aten.sym_size.int", jin("self", tref("x"), 1)+", "+jin("dim", `{"as_int": 0}`, 1), `{"as_sym_int": {"as_name": "sym_size_int"}}`),
				jnode("_operator.mul", jin("a", `{"as_sym_int": {"as_name": "sym_size_int"}}`, 1)+", "+jin("b", `{"as_int": 3}`, 1), `{"as_sym_int": {"as_name": "mul"}}`),
				jnode("torch.ops.aten.view.default", jin("self", tref("relu"), 1)+", "+jin("size", `{"as_sym_ints": [{"as_name": "mul"}]}`, 1), tref("view")),
			},
			outputs: []string{tref("view")},
			ranges:  `"s0": {"min_val": 2, "max_val": 64}`,
			tables:  `, "sym_int_values": {"sym_size_int": {"as_expr": {"expr_str": "s0", "hint": {"as_int": 5}}}, "mul": {"as_expr": {"expr_str": "3*s0", "hint": null}}}`,
		}, []string{"symbol s0: [2, 64] hint 5\n", "%x: f32[s0, 3]", "%relu: f32[s0, 3]", "%view: f32[3*s0] = aten.view.default(%relu, [%mul])"}},
		{"infinity, enum names, union nulls, unknown fields", jprog{
			tv: map[string]string{"x": strings.Replace(f32, `"dtype": 7`, `"dtype": "FLOAT", "future": [1]`, 1), "full": f32},
			nodes: []string{`{"target": "torch.ops.aten.full.default", "future_field": {"a": null}, "inputs": [` +
				jin("size", `{"as_ints": [2, 3]}`, 1) + `, ` +
				`{"name": "fill_value", "arg": {"as_none": null, "as_float": "-Infinity", "as_int": null}, "kind": 1, "future": 2}, ` +
				jin("dtype", `{"as_scalar_type": "ScalarType.FLOAT"}`, 2) + `], "outputs": [` + tref("full") + `], "metadata": {"k": "v"}, "name": "full"}`},
			outputs: []string{tref("full")},
			top:     `, "future_top": {"x": [1, {"y": null}]}, "torch_version": "2.99.0"`,
		}, []string{`aten.full.default([2, 3], -inf, dtype=torch.float32) {k = "v"}`, `meta "pt2.torch_version" = "2.99.0"`}},
		{"omitted defaults are filled", jprog{
			tv:      map[string]string{"mean": tmeta(7, "3")},
			nodes:   []string{jnode("torch.ops.aten.mean.dim", jin("self", tref("x"), 1)+", "+jin("dim", `{"as_ints": [0]}`, 1), tref("mean"))},
			outputs: []string{tref("mean")},
		}, []string{"aten.mean.dim(%x, [0])"}},
		{"missing result types are inferred", jprog{nodes: []string{relu}, outputs: []string{tref("relu")}},
			[]string{"%relu: f32[2, 3] = aten.relu.default(%x)"}},
		{"none and literal outputs get names", jprog{
			tv: map[string]string{"values": tmeta(7, "2")},
			nodes: []string{jnode("torch.ops.aten.max.dim", jin("self", tref("x"), 1)+", "+jin("dim", `{"as_int": 1}`, 1),
				tref("values")+`, {"as_none": true}`)},
			outputs: []string{tref("values")},
		}, []string{"%values: f32[2], %max: none = aten.max.dim(%x, 1)"}},
		{"literal user input is a constant input", jprog{
			inputs:  []string{tref("x"), `{"as_int": 3}`},
			specsIn: []string{`{"user_input": {"arg": ` + tref("x") + `}}`, `{"user_input": {"arg": {"as_int": 3}}}`},
			nodes:   []string{relu}, outputs: []string{tref("relu")},
		}, []string{"input const_input: constant_input = 3", "%const_input: int"}},
		{"constant input", jprog{
			inputs:  []string{tref("x"), `{"as_none": true}`},
			specsIn: []string{`{"user_input": {"arg": ` + tref("x") + `}}`, `{"constant_input": {"name": "scale", "value": {"as_float": 0.5}}}`},
			nodes:   []string{relu}, outputs: []string{tref("relu")},
		}, []string{"input scale: constant_input = 0.5", "%scale: float"}},
		{"tokens and with_effects", jprog{
			inputs:   []string{tref("token"), tref("x")},
			specsIn:  []string{`{"token": {"arg": {"name": "token"}}}`, `{"user_input": {"arg": ` + tref("x") + `}}`},
			tv:       map[string]string{"token": tmeta(7, "0"), "tok2": tmeta(7, "0"), "r": f32},
			nodes:    []string{jnode("torch.ops.higher_order.with_effects", jin("", tref("token"), 1)+", "+jin("", `{"as_operator": "torch.ops.aten.relu.default"}`, 1)+", "+jin("", tref("x"), 1), tref("tok2")+", "+tref("r"))},
			outputs:  []string{tref("tok2"), tref("r")},
			specsOut: []string{`{"token": {"arg": {"name": "tok2"}}}`, `{"user_output": {"arg": ` + tref("r") + `}}`},
		}, []string{"input token: token", "%token: token", "%tok2: token, %r: f32[2, 3] = higher_order.with_effects(%token, op(aten.relu.default), %x)", "output token\n"}},
		{"auto_functionalized binds the wrapped op", jprog{
			inputs:  []string{tref("x"), tref("y")},
			specsIn: []string{`{"user_input": {"arg": ` + tref("x") + `}}`, `{"user_input": {"arg": ` + tref("y") + `}}`},
			tv:      map[string]string{"y": f32, "r": f32, "x1": f32},
			nodes: []string{jnode("torch.ops.higher_order.auto_functionalized",
				jin("", `{"as_operator": "torch.ops.aten.add_.Tensor"}`, 1)+", "+jin("other", tref("y"), 2)+", "+jin("self", tref("x"), 2),
				tref("r")+", "+tref("x1"))},
			outputs: []string{tref("r"), tref("x1")},
		}, []string{"= higher_order.auto_functionalized(op(aten.add_.Tensor), %x, %y, 1)"}},
		{"optional tensors, devices, formats, python ops", jprog{
			inputs:  []string{tref("x"), tref("i")},
			specsIn: []string{`{"user_input": {"arg": ` + tref("x") + `}}`, `{"user_input": {"arg": ` + tref("i") + `}}`},
			tv:      map[string]string{"i": tmeta(5, "2"), "idx": tmeta(7, "2", "2"), "c": f32, "d": tmeta(7, "2", "3")},
			nodes: []string{
				jnode("torch.ops.aten.index.Tensor", jin("self", tref("x"), 1)+", "+jin("indices", `{"as_optional_tensors": [{"as_none": true}, {"as_tensor": {"name": "i"}}]}`, 1), tref("idx")),
				jnode("torch.ops.aten.clone.default", jin("self", tref("x"), 1)+", "+jin("memory_format", `{"as_memory_format": 2}`, 2), tref("c")),
				jnode("torch.ops.aten._to_copy.default", jin("self", tref("c"), 1)+", "+jin("layout", `{"as_layout": 7}`, 2)+", "+jin("device", `{"as_device": {"type": "cuda", "index": 1}}`, 2), tref("d")),
				jnode("torch.ops.aten.sym_size.int", jin("self", tref("x"), 1)+", "+jin("dim", `{"as_int": 0}`, 1), `{"as_sym_int": {"as_name": "n"}}`),
				jnode("torch.sym_max", jin("a", `{"as_sym_int": {"as_name": "n"}}`, 1)+", "+jin("b", `{"as_int": 4}`, 1), `{"as_sym_int": {"as_name": "m"}}`),
				jnode("torch.sym_float", jin("a", `{"as_sym_int": {"as_name": "m"}}`, 1), `{"as_sym_float": {"as_name": "fl"}}`),
				jnode("math.ceil", jin("x", `{"as_sym_float": {"as_name": "fl"}}`, 1), `{"as_sym_int": {"as_name": "ce"}}`),
			},
			outputs: []string{tref("idx"), tref("d"), `{"as_sym_int": {"as_name": "ce"}}`},
			tables:  `, "sym_int_values": {"n": {"as_int": 2}, "m": {"as_int": 4}, "ce": {"as_expr": {"expr_str": "Max(4, u7)", "hint": null}}}, "sym_float_values": {"fl": {"as_expr": {"expr_str": "ToFloat(4)", "hint": null}}}`,
		}, []string{"aten.index.Tensor(%x, [None, %i])", "aten.clone.default(%x, memory_format=torch.channels_last)",
			`aten._to_copy.default(%c, layout=torch.strided, device=device("cuda:1"))`, "%m: Sym(4) = torch.sym_max(%n, 4)",
			"%fl: SymFloat = torch.sym_float(%m)", "%ce: Sym(Max(4, u7)) = math.ceil(%fl)", "symbol u7: [-inf, inf] unbacked"}},
		{"custom objects are opaque", jprog{
			inputs:  []string{`{"as_custom_obj": {"name": "obj", "class_fqn": "__torch__.torch.classes.my.Foo"}}`, tref("x")},
			specsIn: []string{`{"custom_obj": {"arg": {"name": "obj", "class_fqn": "__torch__.torch.classes.my.Foo"}, "custom_obj_name": "foo"}}`, `{"user_input": {"arg": ` + tref("x") + `}}`},
			nodes:   []string{relu}, outputs: []string{tref("relu")},
		}, []string{`input obj: custom_obj "foo"`, "%obj: opaque<__torch__.torch.classes.my.Foo>"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			p, err := readJSON(c.prog.String())
			if err != nil {
				t.Fatalf("%v\n%s", err, c.prog)
			}
			text := ir.Print(p)
			for _, w := range c.want {
				if !strings.Contains(text, w) {
					t.Errorf("missing %q in\n%s", w, text)
				}
			}
		})
	}
}

func TestProgramJSONErrors(t *testing.T) {
	f32 := tmeta(7, "2", "3")
	useLater := jnode("torch.ops.aten.relu.default", jin("self", tref("later"), 1), tref("first"))
	self := jnode("torch.ops.aten.relu.default", jin("self", tref("me"), 1), tref("me"))
	deep := strings.Repeat("[", 2000) + strings.Repeat("]", 2000)
	for _, c := range []struct {
		name string
		doc  string
		want string
	}{
		{"unknown union tag", jprog{nodes: []string{jnode("torch.ops.aten.relu.default", jin("self", `{"as_foo": 1}`, 1), tref("r"))}, outputs: []string{tref("r")}}.String(),
			`prog.json: graph_module.graph.nodes[0].inputs[0].arg: unknown Argument tag "as_foo"`},
		{"two union members", jprog{nodes: []string{jnode("torch.ops.aten.relu.default", jin("self", `{"as_tensor": {"name": "x"}, "as_int": 1}`, 1), tref("r"))}, outputs: []string{tref("r")}}.String(),
			`graph_module.graph.nodes[0].inputs[0].arg: Argument has more than one member ("as_tensor" and "as_int")`},
		{"empty union", jprog{nodes: []string{jnode("torch.ops.aten.relu.default", jin("self", `{}`, 1), tref("r"))}, outputs: []string{tref("r")}}.String(),
			`nodes[0].inputs[0].arg: empty Argument`},
		{"dangling name", jprog{nodes: []string{jnode("torch.ops.aten.relu.default", jin("self", tref("nope"), 1), tref("r"))}, outputs: []string{tref("r")}}.String(),
			`graph_module.graph.nodes[0].inputs[0].arg: undefined value "nope"`},
		{"use before definition", jprog{nodes: []string{useLater, jnode("torch.ops.aten.relu.default", jin("self", tref("first"), 1), tref("later"))}, outputs: []string{tref("later")}}.String(),
			`nodes[0].inputs[0].arg: undefined value "later"`},
		{"cycle through itself", jprog{nodes: []string{self}, outputs: []string{tref("me")}}.String(),
			`nodes[0].inputs[0].arg: undefined value "me"`},
		{"dangling output", jprog{nodes: []string{relu}, outputs: []string{tref("ghost")}}.String(),
			`graph_module.graph.outputs[0]: undefined value "ghost"`},
		{"name defined twice", jprog{nodes: []string{relu, relu}, outputs: []string{tref("relu")}}.String(),
			`graph_module.graph.nodes[1].outputs: graph forward: value name %relu defined twice`},
		{"bad value name", jprog{nodes: []string{jnode("torch.ops.aten.relu.default", jin("self", tref("x"), 1), tref("a b"))}, outputs: []string{}}.String(),
			`nodes[0].outputs[0]: "a b" is not a valid value name`},
		{"unknown op", jprog{nodes: []string{jnode("torch.ops.aten.nope.default", jin("self", tref("x"), 1), tref("r"))}, outputs: []string{tref("r")}}.String(),
			`graph_module.graph.nodes[0].target: unknown op "torch.ops.aten.nope.default"`},
		{"extension op", jprog{nodes: []string{jnode("#my_ns:op", "", tref("r"))}, outputs: []string{tref("r")}}.String(),
			`nodes[0].target: unknown op "#my_ns:op"`},
		{"unknown argument", jprog{nodes: []string{jnode("torch.ops.aten.relu.default", jin("self", tref("x"), 1)+", "+jin("foo", `{"as_int": 1}`, 1), tref("r"))}, outputs: []string{tref("r")}}.String(),
			`nodes[0].inputs[1].name: aten.relu.default has no argument "foo"`},
		{"missing argument", jprog{nodes: []string{jnode("torch.ops.aten.max.dim", jin("self", tref("x"), 1), tref("a")+", "+tref("b"))}, outputs: []string{tref("a")}}.String(),
			`nodes[0].inputs: torch.ops.aten.max.dim: aten.max.dim: missing required argument "dim"`},
		{"keyword for a python op", jprog{nodes: []string{
			jnode("torch.ops.aten.sym_size.int", jin("self", tref("x"), 1)+", "+jin("dim", `{"as_int": 0}`, 1), `{"as_sym_int": {"as_name": "n"}}`),
			jnode("_operator.add", jin("a", `{"as_sym_int": {"as_name": "n"}}`, 2)+", "+jin("b", `{"as_int": 1}`, 1), `{"as_sym_int": {"as_name": "m"}}`)},
			outputs: []string{`{"as_sym_int": {"as_name": "m"}}`}, tables: `, "sym_int_values": {"n": {"as_int": 2}, "m": {"as_int": 3}}`}.String(),
			`nodes[1].inputs[0]: _operator.add takes positional arguments only, got keyword "a"`},
		{"auto_functionalized_v2 view metadata", jprog{nodes: []string{jnode("torch.ops.higher_order.auto_functionalized_v2",
			jin("", `{"as_operator": "torch.ops.aten.add_.Tensor"}`, 1)+", "+jin("_all_bases", `{"as_tensors": [{"name": "x"}]}`, 2)+", "+jin("_self_base_index", `{"as_int": 0}`, 2)+", "+jin("other", tref("x"), 2),
			tref("r")+", "+tref("x1"))}, outputs: []string{tref("r")}}.String(),
			`nodes[0].inputs[2].name: aten.add_.Tensor has no argument "_self_base_index"`},
		{"complex literal", jprog{nodes: []string{jnode("torch.ops.aten.fill.Scalar", jin("self", tref("x"), 1)+", "+jin("value", `{"as_complex": {"real": 1.0, "imag": 2.0}}`, 1), tref("r"))}, outputs: []string{tref("r")}}.String(),
			`nodes[0].inputs[1].arg: complex literals (as_complex) are not supported by the IR`},
		{"dict argument", jprog{nodes: []string{jnode("torch.ops.aten.fill.Scalar", jin("self", tref("x"), 1)+", "+jin("value", `{"as_string_to_argument": {"a": {"as_int": 1}}}`, 1), tref("r"))}, outputs: []string{tref("r")}}.String(),
			`dict arguments (as_string_to_argument) are not supported`},
		{"no type and no inference", jprog{nodes: []string{jnode("torch.ops.aten.mm.default", jin("self", tref("x"), 1)+", "+jin("mat2", tref("x"), 1), tref("mm"))}, outputs: []string{tref("mm")}}.String(),
			`graph_module.graph.nodes[0]: value "mm" has no recorded type and inferring it failed`},
		{"untyped input", jprog{tv: map[string]string{"x": f32}, inputs: []string{tref("x"), tref("y")},
			specsIn: []string{`{"user_input": {"arg": ` + tref("x") + `}}`, `{"user_input": {"arg": ` + tref("y") + `}}`}}.String(),
			`graph_module.graph.inputs[1]: input "y" has no type`},
		{"schema major 6", jprog{schema: "6, 3"}.String(), `prog.json: schema_version: schema version 6.3 is not supported`},
		{"schema major 9", jprog{schema: "9, 0"}.String(), `schema version 9.0 is not supported`},
		{"no schema version", `{"graph_module": {}}`, `no schema_version`},
		{"negative size", jprog{tv: map[string]string{"x": tmeta(7, "-2", "3")}}.String(), `graph_module.graph.tensor_values["x"]: sizes[0] is negative (-2)`},
		{"absurd rank", jprog{tv: map[string]string{"x": tmeta(7, strings.Split(strings.Repeat("1,", 65), ",")[:65]...)}}.String(), `tensor_values["x"]: rank 65 exceeds 64`},
		{"unknown dtype", jprog{tv: map[string]string{"x": tmeta(99, "2")}}.String(), `tensor_values["x"]: unknown ScalarType code 99`},
		{"sparse", jprog{tv: map[string]string{"x": strings.Replace(f32, `"layout": 7`, `"layout": 1`, 1)}}.String(), `layout SparseCoo is not supported`},
		{"bad size expression", jprog{tv: map[string]string{"x": tmeta(7, `{"as_expr": {"expr_str": "Symbol('s0'", "hint": null}}`)}}.String(), `tensor_values["x"]: sizes[0]: symbolic expression "Symbol('s0'"`},
		{"bad symbol name", jprog{ranges: `"s 0": {"min_val": 1, "max_val": null}`}.String(), `range_constraints["s 0"]: "s 0" is not a symbol name`},
		{"input count", jprog{inputs: []string{tref("x"), tref("y")}, specsIn: []string{`{"user_input": {"arg": ` + tref("x") + `}}`}}.String(), `graph_module.graph.inputs: 2 graph inputs but the signature has 1 input specs`},
		{"input name", jprog{specsIn: []string{`{"user_input": {"arg": ` + tref("z") + `}}`}, inputs: []string{tref("x")}}.String(),
			`graph_module.graph.inputs[0]: graph input is "x" but graph_module.signature.input_specs[0] names "z"`},
		{"output spec", jprog{nodes: []string{relu}, outputs: []string{tref("relu")}, specsOut: []string{`{"user_output": {"arg": ` + tref("x") + `}}`}}.String(),
			`graph_module.signature.output_specs[0]: names "x" but graph output 0 is "relu"`},
		{"unknown input spec", jprog{inputs: []string{tref("x")}, specsIn: []string{`{"user_inputs": {"arg": ` + tref("x") + `}}`}}.String(),
			`graph_module.signature.input_specs[0]: unknown InputSpec tag "user_inputs"`},
		{"subgraph in outputs", jprog{outputs: []string{`{"as_graph": {"name": "g", "graph": {}}}`}}.String(), `outputs[0]: a subgraph is not allowed here`},
		{"literal subgraph input", jprog{nodes: []string{jnode("torch.ops.higher_order.cond",
			jin("", `{"as_bool": true}`, 1)+", "+jin("", `{"as_graph": {"name": "t", "graph": {"inputs": [{"as_int": 1}], "outputs": [], "nodes": []}}}`, 1)+", "+
				jin("", `{"as_graph": {"name": "f", "graph": {"inputs": [], "outputs": [], "nodes": []}}}`, 1)+", "+jin("", `{"as_tensors": []}`, 1), "")}}.String(),
			`graph_module.graph.nodes[0].inputs[1].arg.as_graph.graph.inputs[0]: subgraph input is a as_int literal, not a value`},
		{"same subgraph name twice", jprog{nodes: []string{jnode("torch.ops.higher_order.cond",
			jin("", `{"as_bool": true}`, 1)+", "+jin("", `{"as_graph": {"name": "t", "graph": {}}}`, 1)+", "+
				jin("", `{"as_graph": {"name": "t", "graph": {}}}`, 1)+", "+jin("", `{"as_tensors": []}`, 1), "")}}.String(),
			`nodes[0].inputs[2].arg: two subgraphs of one node are named "t"`},
		{"trailing data", jprog{}.String() + " {}", `prog.json: unexpected data after the JSON value`},
		{"deep nesting", strings.Replace(jprog{}.String(), `"opset_version"`, `"x": `+deep+`, "opset_version"`, 1), `JSON nested deeper than 1000 levels`},
		{"bad string", `{"schema_version": {"major": 8, "minor": "\q"}}`, `invalid escape`},
		{"not JSON", "hello", `prog.json: not a .pt2 file`},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := readJSON(c.doc)
			if err == nil {
				t.Fatalf("no error; want %q", c.want)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("error\n  %v\nwant it to contain\n  %s", err, c.want)
			}
			if !strings.HasPrefix(err.Error(), "prog.json: ") {
				t.Errorf("error does not name the file: %v", err)
			}
		})
	}
}

// TestRegionNesting: subgraphs nested beyond the limit are an error, not a
// stack overflow.
func TestRegionNesting(t *testing.T) {
	g := `{"inputs": [], "outputs": [], "nodes": []}`
	for i := 0; i < 70; i++ {
		g = `{"inputs": [], "outputs": [], "nodes": [` + jnode("torch.ops.higher_order.cond",
			jin("", `{"as_bool": true}`, 1)+", "+jin("", `{"as_graph": {"name": "t", "graph": `+g+`}}`, 1)+", "+
				jin("", `{"as_graph": {"name": "f", "graph": {"inputs": [], "outputs": [], "nodes": []}}}`, 1)+", "+jin("", `{"as_tensors": []}`, 1), "") + `]}`
	}
	doc := jprog{nodes: []string{jnode("torch.ops.higher_order.wrap_with_set_grad_enabled",
		jin("", `{"as_bool": false}`, 1)+", "+jin("", `{"as_graph": {"name": "w", "graph": `+g+`}}`, 1), "")}}.String()
	_, err := readJSON(doc)
	if err == nil || !strings.Contains(err.Error(), "subgraphs nested deeper than 64 levels") {
		t.Fatalf("got %v", err)
	}
}

// An op fxport does not know reads as an opaque call that keeps the target,
// the input names and the result types torch recorded; the program prints
// and parses back, and the note says what happened.
func TestUnknownOpKeptOpaque(t *testing.T) {
	f32 := tmeta(7, "2", "3")
	p, err := readJSON(jprog{
		nodes:   []string{jnode("torch.ops.mylib.scale.default", jin("self", tref("x"), 1)+", "+jin("factor", `{"as_float": 2.5}`, 2), tref("r"))},
		outputs: []string{tref("r")},
		tv:      map[string]string{"r": f32},
	}.String())
	if err != nil {
		t.Fatal(err)
	}
	text := ir.Print(p)
	for _, want := range []string{
		`%r: f32[2, 3] = opaque.call.default("torch.ops.mylib.scale.default", ["self", "factor"], %x, 2.5)`,
		`pt2.note = "fxport does not know torch.ops.mylib.scale.default; the node is kept opaque"`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("IR text lacks %s:\n%s", want, text)
		}
	}
	q, err := ir.Parse([]byte(text), "t.fxir")
	if err != nil {
		t.Fatalf("does not parse back: %v", err)
	}
	if ir.Print(q) != text {
		t.Error("IR text changes through parse")
	}
	n := p.Main.Outputs()[0].Value.Def
	if got := n.OpLabel(); got != "torch.ops.mylib.scale.default, unknown to fxport" {
		t.Errorf("OpLabel = %q", got)
	}
}
