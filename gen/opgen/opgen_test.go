package main

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

const (
	specPath   = "../ops.spec"
	kernelPath = "../etkernels.spec"
	tagsPath   = "../torchtags.spec"
	outPath    = "../../ir/opgen.go"
	rulesGlob  = "../../ir/infer_*.go"
	staleHint  = "run go generate ./ir"
	testHeader = "[test] functional infer=same\n"
)

// TestGeneratedFileIsFresh regenerates ir/opgen.go in memory and compares.
func TestGeneratedFileIsFresh(t *testing.T) {
	src, err := os.ReadFile(specPath)
	if err != nil {
		t.Fatal(err)
	}
	funcs, err := FindRules(rulesGlob)
	if err != nil {
		t.Fatal(err)
	}
	ksrc, err := os.ReadFile(kernelPath)
	if err != nil {
		t.Fatal(err)
	}
	tsrc, err := os.ReadFile(tagsPath)
	if err != nil {
		t.Fatal(err)
	}
	want, err := GenerateWithData("ops.spec", src, "etkernels.spec", ksrc, "torchtags.spec", tsrc, funcs)
	if err != nil {
		t.Fatalf("generating: %v", err)
	}
	got, err := os.ReadFile(outPath)
	if err != nil {
		t.Fatalf("%v: %s", err, staleHint)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("ir/opgen.go is stale: %s", staleHint)
	}
	if !bytes.HasPrefix(got, []byte(Header+"\n")) {
		t.Fatalf("ir/opgen.go must start with %q", Header)
	}
	// Deterministic: a second run gives the same bytes.
	again, err := GenerateWithData("ops.spec", src, "etkernels.spec", ksrc, "torchtags.spec", tsrc, funcs)
	if err != nil || !bytes.Equal(again, want) {
		t.Fatalf("generation is not deterministic")
	}
}

// TestRulesAllUsedAndDefined: every infer= in the spec names a rule function
// and every rule function is used (Validate reports both).
func TestRulesAllUsedAndDefined(t *testing.T) {
	src, err := os.ReadFile(specPath)
	if err != nil {
		t.Fatal(err)
	}
	funcs, err := FindRules(rulesGlob)
	if err != nil {
		t.Fatal(err)
	}
	spec, err := ParseSpec("ops.spec", src)
	if err != nil {
		t.Fatal(err)
	}
	ksrc, err := os.ReadFile(kernelPath)
	if err != nil {
		t.Fatal(err)
	}
	ks, err := ParseKernels("etkernels.spec", ksrc)
	if err != nil {
		t.Fatal(err)
	}
	if err := spec.MergeKernels("etkernels.spec", ks); err != nil {
		t.Fatal(err)
	}
	used := map[string]bool{}
	for _, op := range spec.Ops {
		if op.Infer == NoRule {
			continue
		}
		used[RuleFunc(op.Infer)] = true
		if !funcs[RuleFunc(op.Infer)] {
			t.Errorf("%s: rule %s has no func %s", op.Name, op.Infer, RuleFunc(op.Infer))
		}
	}
	for f := range funcs {
		if !used[f] {
			t.Errorf("rule func %s is used by no op", f)
		}
	}
}

func gen(t *testing.T, spec string, rules ...string) error {
	t.Helper()
	funcs := map[string]bool{}
	for _, r := range rules {
		funcs[RuleFunc(r)] = true
	}
	if len(rules) == 0 {
		funcs = nil
	}
	_, err := Generate("t.spec", []byte(spec), funcs)
	return err
}

func TestSpecErrors(t *testing.T) {
	cases := []struct {
		name, spec string
		rules      []string
		want       string
	}{
		{"duplicate", testHeader + "aten::relu(Tensor self) -> Tensor\naten::relu(Tensor self) -> Tensor\n", nil, "t.spec:3:1: aten.relu.default declared twice (first at line 2)"},
		{"schema error", testHeader + "aten::relu(Tensr self) -> Tensor\n", nil, `t.spec:2:12: unknown type "Tensr"`},
		{"indented schema error", testHeader + "  aten::relu(Tensr self) -> Tensor\n", nil, `t.spec:2:14: unknown type "Tensr"`},
		{"no namespace", testHeader + "relu(Tensor self) -> Tensor\n", nil, "has no namespace"},
		{"unknown attr", testHeader + "aten::relu(Tensor self) -> Tensor | fast\n", nil, `t.spec:2:37: unknown attribute "fast"`},
		{"missing infer", "[s] functional\naten::relu(Tensor self) -> Tensor\n", nil, "has no infer= rule"},
		{"unknown rule", testHeader + "aten::relu(Tensor self) -> Tensor | infer=nope\n", []string{"same"}, `unknown infer rule "nope" (no func inferNope`},
		{"unused rule", testHeader + "aten::relu(Tensor self) -> Tensor\n", []string{"same", "extra"}, `rule "extra" (func inferExtra) is used by no op`},
		{"missing twin", testHeader + "aten::relu(Tensor self) -> Tensor | inplace=aten::relu_\n", nil, "inplace twin aten.relu_.default is not in the spec"},
		{"twin without flag", testHeader + "aten::relu(Tensor self) -> Tensor | inplace=aten::relu_\naten::relu_(Tensor(a!) self) -> Tensor(a!) | -functional\n", nil, "lacks the inplace flag"},
		{"inplace not mutating", testHeader + "aten::relu_(Tensor self) -> Tensor | -functional inplace\n", nil, "first argument is not mutated"},
		{"twin schemas disagree", testHeader + "aten::add.Tensor(Tensor self, Tensor other) -> Tensor | inplace=aten::add_.Tensor\naten::add_.Tensor(Tensor(a!) self, Scalar other) -> Tensor(a!) | -functional inplace\n", nil, "disagree on argument 1"},
		{"twin arg count", testHeader + "aten::add.Tensor(Tensor self, Tensor other) -> Tensor\naten::add_.Tensor(Tensor(a!) self) -> Tensor(a!) | -functional inplace functional=aten::add.Tensor\n", nil, "different argument counts"},
		{"out twin extra arg", testHeader + "aten::abs(Tensor self) -> Tensor | out=aten::abs.out\naten::abs.out(Tensor self, int x, *, Tensor(a!) out) -> Tensor(a!) | -functional out\n", nil, `has argument "x" that its functional twin`},
		{"out twin count", testHeader + "aten::abs(Tensor self) -> (Tensor, Tensor) | out=aten::abs.out\naten::abs.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!) | -functional out\n", nil, "has 1 out arguments for the 2 results"},
		{"conflicting twins", testHeader + "aten::relu(Tensor self) -> Tensor | inplace=aten::relu_\naten::gelu(Tensor self) -> Tensor | inplace=aten::relu_\naten::relu_(Tensor(a!) self) -> Tensor(a!) | -functional inplace\n", nil, "claims it as its inplace twin"},
		{"commutative side effects", testHeader + "aten::add(Tensor self, Tensor other) -> Tensor | commutative side_effects\n", nil, "commutative ops cannot have side effects"},
		{"view without alias", testHeader + "aten::view(Tensor self, int[] size) -> Tensor | -functional view\n", nil, "is a view but its schema has no alias annotation"},
		{"functional mutates", testHeader + "aten::foo(Tensor(a!) self) -> Tensor\n", nil, `is functional but mutates argument "self"`},
		{"drop unset flag", testHeader + "aten::foo(Tensor self) -> Tensor | -core\n", nil, "drops flag core, which the section does not set"},
		{"python overload", testHeader + "operator::add.Tensor(Any a, Any b) -> Any\n", nil, "operator ops have no overloads"},
		{"out not kwarg", testHeader + "aten::abs.out(Tensor self, Tensor(a!) out) -> Tensor(a!) | -functional out\n", nil, `out argument "out" must be keyword-only`},
		{"bad section attr", "[s] functional out=aten::x\naten::foo(Tensor self) -> Tensor | infer=same\n", nil, "only flags and infer= are allowed"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := gen(t, c.spec, c.rules...)
			if err == nil {
				t.Fatalf("no error, want %q", c.want)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v\nwant %q", err, c.want)
			}
		})
	}
}

func TestTwinsCompletedBothWays(t *testing.T) {
	spec := testHeader + `aten::relu(Tensor self) -> Tensor | out=aten::relu.out
aten::relu_(Tensor(a!) self) -> Tensor(a!) | -functional inplace functional=aten::relu
aten::relu.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!) | -functional out
`
	sp, err := ParseSpec("t.spec", []byte(spec))
	if err != nil {
		t.Fatal(err)
	}
	if err := sp.Validate(nil); err != nil {
		t.Fatal(err)
	}
	relu := sp.byName["aten.relu.default"]
	if relu.Inplace != "aten.relu_.default" || relu.Out != "aten.relu.out" {
		t.Errorf("relu twins: inplace %q out %q", relu.Inplace, relu.Out)
	}
	if ip := sp.byName["aten.relu_.default"]; ip.Functional != "aten.relu.default" {
		t.Errorf("relu_ functional twin %q", ip.Functional)
	}
	if o := sp.byName["aten.relu.out"]; o.Functional != "aten.relu.default" {
		t.Errorf("relu.out functional twin %q", o.Functional)
	}
}

func TestNames(t *testing.T) {
	spec := testHeader + `aten::relu(Tensor self) -> Tensor
aten::_softmax(Tensor self, int dim, bool half_to_float) -> Tensor
aten::add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!) | -functional inplace
aten::sum.dim_IntList(Tensor self, int[1]? dim, bool keepdim=False) -> Tensor
operator::and_(Any a, Any b) -> Any
higher_order::cond(Any pred, GraphModule true_fn, GraphModule false_fn, Any[] operands) -> Any[]
dim_order_ops::_to_dim_order_copy(Tensor self, *, int[]? dim_order=None) -> Tensor
aten::split_with_sizes(Tensor self, SymInt[] split_sizes, int dim=0) -> Tensor[]
aten::split.with_sizes(Tensor self, SymInt[] split_sizes, int dim=0) -> Tensor[]
`
	sp, err := ParseSpec("t.spec", []byte(spec))
	if err != nil {
		t.Fatal(err)
	}
	ids, err := assignIdents(sp.Ops)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"aten.relu.default":                        "AtenRelu",
		"aten._softmax.default":                    "Aten_Softmax",
		"aten.add_.Tensor":                         "AtenAdd_Tensor",
		"aten.sum.dim_IntList":                     "AtenSumDimIntList",
		"operator.and_":                            "OperatorAnd_",
		"higher_order.cond":                        "HigherOrderCond",
		"dim_order_ops._to_dim_order_copy.default": "DimOrderOps_ToDimOrderCopy",
		"aten.split_with_sizes.default":            "Aten_SplitWithSizes_Default",
		"aten.split.with_sizes":                    "Aten_Split_WithSizes",
	}
	for _, op := range sp.Ops {
		if got := ids[op]; got != want[op.Name] {
			t.Errorf("%s: got Op%s, want Op%s", op.Name, got, want[op.Name])
		}
	}
	args, err := argIdents(sp.Ops, ids)
	if err != nil {
		t.Fatal(err)
	}
	if got := args[sp.byName["aten.add_.Tensor"]][2]; got != "ArgAtenAdd_TensorAlpha" {
		t.Errorf("alpha accessor: %s", got)
	}
	if !sp.byName["operator.and_"].VarArgs || sp.byName["aten.relu.default"].VarArgs {
		t.Errorf("VarArgs: python namespaces are positional-only, aten ops are not")
	}
	if op := sp.byName["higher_order.cond"]; op.Overload != "" || op.Name != "higher_order.cond" {
		t.Errorf("HOP names have no overload: %+v", op.Name)
	}
}

func TestCommentsAndQuotes(t *testing.T) {
	spec := testHeader + `# a comment
aten::gelu(Tensor self, *, str approximate="#none") -> Tensor  # trailing
aten::f(Tensor(a|b) self) -> Tensor | infer=same   # alias sets use '|'
`
	sp, err := ParseSpec("t.spec", []byte(spec))
	if err != nil {
		t.Fatal(err)
	}
	if len(sp.Ops) != 2 || sp.Ops[0].Schema.Args[1].Default != `"#none"` || sp.Ops[1].Schema.Args[0].Alias != "a|b" {
		t.Fatalf("got %+v", sp.Ops)
	}
}

func TestCamelAndSnake(t *testing.T) {
	for in, want := range map[string]string{
		"binary_alpha": "BinaryAlpha", "_to_copy": "_ToCopy", "add_": "Add_", "x": "X", "__and__": "__And__", "HxW": "HxW",
	} {
		if got := camel(in); got != want {
			t.Errorf("camel(%q) = %q, want %q", in, got, want)
		}
	}
	if got := snake("BinaryAlpha"); got != "binary_alpha" {
		t.Errorf("snake: %q", got)
	}
}
