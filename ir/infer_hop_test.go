package ir_test

import (
	"strings"
	"testing"

	"github.com/fxport/fxport/ir"
)

// checkAnnotated parses a program and checks that re-inferring every node
// (regions included) gives exactly the annotated result types.
func checkAnnotated(t *testing.T, src string) *ir.Program {
	t.Helper()
	p, err := ir.Parse([]byte(src), "test.fxir")
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range p.Graphs() {
		for _, n := range g.Nodes() {
			types, err := ir.InferTypes(n)
			if err != nil {
				t.Fatalf("%s: %v", n.Short(), err)
			}
			if len(types) != len(n.Results) {
				t.Fatalf("%s: inferred %d results, annotated %d", n.Short(), len(types), len(n.Results))
			}
			for i, ty := range types {
				if !ir.TypeEqual(ty, n.Results[i].Type) {
					t.Errorf("%s result %d: inferred %s, annotated %s", n.Short(), i, ty, n.Results[i].Type)
				}
			}
		}
	}
	if err := ir.VerifyWith(p, ir.VerifyOptions{Types: true}); err != nil {
		t.Fatalf("verify: %v", err)
	}
	return p
}

func TestInferCond(t *testing.T) {
	checkAnnotated(t, `graph forward(%pred: b8[], %x: f32[s0, 4]) {
  %cond: f32[s0, 4] = higher_order.cond(%pred, ^true_graph_0, ^false_graph_0, [%x])
  ^true_graph_0(%a: f32[s0, 4]) {
    %sin: f32[s0, 4] = aten.sin.default(%a)
    return %sin
  }
  ^false_graph_0(%a: f32[s0, 4]) {
    %neg: f32[s0, 4] = aten.neg.default(%a)
    return %neg
  }
  return %cond
}
`)
}

func TestInferCondMergesDims(t *testing.T) {
	p, err := ir.Parse([]byte(`graph forward(%pred: b8[], %x: f32[s0, 4]) {
  %cond: f32[u0, 4] = higher_order.cond(%pred, ^true_graph_0, ^false_graph_0, [%x])
  ^true_graph_0(%a: f32[s0, 4]) {
    %slice: f32[s0 - 1, 4] = aten.slice.Tensor(%a, 0, 1)
    return %slice
  }
  ^false_graph_0(%a: f32[s0, 4]) {
    return %a
  }
  return %cond
}
`), "t.fxir")
	if err != nil {
		t.Fatal(err)
	}
	n := p.Main.First()
	types, err := ir.InferTypes(n)
	if err != nil {
		t.Fatal(err)
	}
	got := types[0].String()
	if !strings.HasPrefix(got, "f32[u") || !strings.HasSuffix(got, ", 4]") {
		t.Fatalf("want a fresh unbacked dim, got %s", got)
	}
}

func TestInferCondBranchMismatch(t *testing.T) {
	src := `graph forward(%pred: b8[], %x: f32[4]) {
  %cond: f32[4] = higher_order.cond(%pred, ^true_graph_0, ^false_graph_0, [%x])
  ^true_graph_0(%a: f32[4]) {
    return %a
  }
  ^false_graph_0(%a: f32[4]) {
    %c: f64[4] = aten._to_copy.default(%a, dtype=torch.float64)
    return %c
  }
  return %cond
}
`
	p, err := ir.Parse([]byte(src), "t.fxir")
	if err == nil {
		_, err = ir.InferTypes(p.Main.First())
	}
	if err == nil || !strings.Contains(err.Error(), "differs between branches") {
		t.Fatalf("want a branch mismatch error, got %v", err)
	}
}

func TestInferLoopsAndMaps(t *testing.T) {
	checkAnnotated(t, `graph forward(%i: i64[], %x: f32[4], %xs: f32[s0, 3], %x3: f32[3]) {
  %while_loop: i64[], %while_loop_1: f32[4] = higher_order.while_loop(^cond_graph_0, ^body_graph_0, [%i, %x], [])
  ^cond_graph_0(%c: i64[], %y: f32[4]) {
    %lt: b8[] = aten.lt.Scalar(%c, 10)
    return %lt
  }
  ^body_graph_0(%c: i64[], %y: f32[4]) {
    %add: i64[] = aten.add.Tensor(%c, %c)
    %neg: f32[4] = aten.neg.default(%y)
    return %add, %neg
  }
  %map_impl: f32[s0, 3] = higher_order.map_impl(^body_graph_1, [%xs], [])
  ^body_graph_1(%row: f32[3]) {
    %sin: f32[3] = aten.sin.default(%row)
    return %sin
  }
  %scan: f32[3], %scan_1: f32[s0, 2, 3] = higher_order.scan(^combine_graph_0, [%x3], [%xs], [])
  ^combine_graph_0(%carry: f32[3], %row: f32[3]) {
    %add: f32[3] = aten.add.Tensor(%carry, %row)
    %stack: f32[2, 3] = aten.stack.default([%add, %row])
    return %add, %stack
  }
  return %while_loop_1, %map_impl, %scan_1
}
`)
}

func TestInferWrappers(t *testing.T) {
	checkAnnotated(t, `graph forward(%tok: token, %x: f32[s0], %y: f32[s0]) {
  %with_effects: token, %with_effects_1: f32[s0] = higher_order.with_effects(%tok, op(aten.relu.default), %x)
  %auto: f32[s0], %auto_1: f32[s0] = higher_order.auto_functionalized(op(aten.add_.Tensor), %x, %y)
  %wrap: f32[s0] = higher_order.wrap_with_set_grad_enabled(False, ^wrapped_0, %x)
  ^wrapped_0(%a: f32[s0]) {
    %cos: f32[s0] = aten.cos.default(%a)
    return %cos
  }
  %sub: f32[s0] = higher_order.invoke_subgraph(^subgraph_0, "sub", %y)
  ^subgraph_0(%a: f32[s0]) {
    %exp: f32[s0] = aten.exp.default(%a)
    return %exp
  }
  return %with_effects, %with_effects_1, %auto_1, %wrap, %sub
}
`)
}

func TestInferFlexAttention(t *testing.T) {
	checkAnnotated(t, `graph forward(%q: bf16[2, 8, s0, 64], %k: bf16[2, 2, s1, 64], %v: bf16[2, 2, s1, 32]) {
  %flex: bf16[2, 8, s0, 32], %flex_1: f32[2, 8, s0] = higher_order.flex_attention(%q, %k, %v, ^score_mod_0, [], 0.125, None)
  ^score_mod_0(%score: f32[], %b: i32[], %h: i32[], %m: i32[], %n: i32[]) {
    return %score
  }
  return %flex
}
`)
}
