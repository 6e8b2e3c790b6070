package ir_test

import (
	"bufio"
	"os"
	"strings"
	"testing"

	"github.com/fxport/fxport/ir"
)

// noRuleOps reads the list of ops without a shape/dtype rule from
// gen/README.md (section "Ops without a rule", one "- `name`" per line).
func noRuleOps(t *testing.T) map[string]bool {
	t.Helper()
	f, err := os.Open("../gen/README.md")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]bool{}
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "## ") {
			in = strings.HasPrefix(line, "## Ops without a rule")
			continue
		}
		if in && strings.HasPrefix(line, "- `") {
			name := strings.TrimPrefix(line, "- `")
			name = name[:strings.IndexByte(name, '`')]
			out[name] = true
		}
	}
	return out
}

// TestEveryOpHasARule: each op has a rule, or is listed in gen/README.md as
// having none (then InferTypes fails naming it).
func TestEveryOpHasARule(t *testing.T) {
	documented := noRuleOps(t)
	for _, op := range ir.AllOps() {
		info := op.Info()
		switch {
		case info.Infer == nil && info.InferRule != "none":
			t.Errorf("%s: rule %q has no function attached", info.Name, info.InferRule)
		case info.Infer == nil && !documented[info.Name]:
			t.Errorf("%s has no rule and is not listed in gen/README.md", info.Name)
		case info.Infer != nil && documented[info.Name]:
			t.Errorf("%s has a rule but gen/README.md lists it as having none", info.Name)
		}
		delete(documented, info.Name)
	}
	for name := range documented {
		t.Errorf("gen/README.md lists %s, which is not an op", name)
	}
}

// TestSchemaDefaultsParse: every default in the table reads with ParseDefault.
func TestSchemaDefaultsParse(t *testing.T) {
	for _, op := range ir.AllOps() {
		for _, a := range op.Info().Schema.Args {
			if !a.HasDefault() {
				continue
			}
			if _, err := ir.ParseDefault(a.Type, a.Default); err != nil {
				t.Errorf("%s: argument %s: %v", op, a.Name, err)
			}
		}
	}
}

func TestOpTable(t *testing.T) {
	ops := ir.AllOps()
	if len(ops) < 500 {
		t.Errorf("only %d ops", len(ops))
	}
	core := 0
	for _, op := range ops {
		info := op.Info()
		name := info.Namespace + "." + info.Base
		if info.Overload != "" {
			name += "." + info.Overload
		}
		if name != info.Name {
			t.Errorf("%s: parts give %s", info.Name, name)
		}
		if got, ok := ir.LookupOp(info.Name); !ok || got != op {
			t.Errorf("LookupOp(%s) = %v, %v", info.Name, got, ok)
		}
		if op.Has(ir.PropCore) {
			core++
		}
		for _, a := range info.Schema.Args {
			if k, ok := ir.BaseKindFromName(a.Type.Base.String()); !ok || k != a.Type.Base {
				t.Errorf("%s: argument %s has base kind %v", info.Name, a.Name, a.Type.Base)
			}
		}
		if op.Has(ir.PropInplace) && !info.Schema.Args[0].Mutates() {
			t.Errorf("%s is inplace but does not mutate its first argument", info.Name)
		}
		// Twins resolve and point back.
		for _, tw := range []struct {
			name string
			back func(*ir.OpInfo) string
		}{
			{info.Inplace, func(i *ir.OpInfo) string { return i.Functional }},
			{info.Out, func(i *ir.OpInfo) string { return i.Functional }},
		} {
			if tw.name == "" {
				continue
			}
			twin, ok := ir.LookupOp(tw.name)
			if !ok {
				t.Errorf("%s: twin %s is not an op", info.Name, tw.name)
				continue
			}
			if back := tw.back(twin.Info()); back != info.Name {
				t.Errorf("%s: twin %s points back to %q", info.Name, tw.name, back)
			}
		}
		// The typed twins are the named ones.
		for _, tw := range []struct {
			name string
			op   ir.Op
		}{{info.Functional, op.FunctionalTwin()}, {info.Inplace, op.InplaceTwin()}, {info.Out, op.OutTwin()}} {
			if tw.op.Valid() != (tw.name != "") || (tw.op.Valid() && tw.op.String() != tw.name) {
				t.Errorf("%s: twin %q, typed twin %s", info.Name, tw.name, tw.op)
			}
		}
		if info.Functional != "" {
			fn, ok := ir.LookupOp(info.Functional)
			if !ok {
				t.Errorf("%s: functional twin %s is not an op", info.Name, info.Functional)
			} else if fi := fn.Info(); fi.Inplace != info.Name && fi.Out != info.Name {
				t.Errorf("%s: functional twin %s does not name it", info.Name, info.Functional)
			}
		}
	}
	if core < 150 {
		t.Errorf("only %d core ops", core)
	}
	t.Logf("%d ops, %d core", len(ops), core)
}

func TestOpConstantsAndAccessors(t *testing.T) {
	for _, c := range []struct {
		op   ir.Op
		name string
	}{
		{ir.OpAtenAddTensor, "aten.add.Tensor"},
		{ir.OpAtenRelu, "aten.relu.default"},
		{ir.OpAten_Softmax, "aten._softmax.default"},
		{ir.OpAtenAdd_Tensor, "aten.add_.Tensor"},
		{ir.OpOperatorAdd, "operator.add"},
		{ir.OpHigherOrderCond, "higher_order.cond"},
		{ir.OpMathCeil, "math.ceil"},
		{ir.OpTorchSymMax, "torch.sym_max"},
		{ir.OpExecutorchPrimAddScalar, "executorch_prim.add.Scalar"},
		{ir.OpDimOrderOps_ToDimOrderCopy, "dim_order_ops._to_dim_order_copy.default"},
		{ir.OpPrimsConvertElementType, "prims.convert_element_type.default"},
	} {
		if c.op.String() != c.name {
			t.Errorf("%s is %s", c.name, c.op)
		}
	}
	for _, c := range []struct {
		op   ir.Op
		arg  string
		want int
	}{
		{ir.OpAtenAddTensor, "alpha", ir.ArgAtenAddTensorAlpha},
		{ir.OpAtenConvolution, "groups", ir.ArgAtenConvolutionGroups},
		{ir.OpAtenNativeLayerNorm, "eps", ir.ArgAtenNativeLayerNormEps},
		{ir.OpHigherOrderCond, "operands", ir.ArgHigherOrderCondOperands},
	} {
		if got := c.op.ArgIndex(c.arg); got != c.want {
			t.Errorf("%s.%s: ArgIndex %d, constant %d", c.op, c.arg, got, c.want)
		}
	}
	if !ir.OpOperatorAdd.Info().Schema.VarArgs || ir.OpAtenAddTensor.Info().Schema.VarArgs {
		t.Errorf("operator ops are positional-only, aten ops are not")
	}
	if !ir.OpHigherOrderWithEffects.Info().Schema.VarArgs {
		t.Errorf("with_effects takes the wrapped op's arguments positionally")
	}
}
