package xnnpack_test

import (
	"sort"
	"strings"
	"testing"

	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/targets/executorch/xnnpack"
)

// Partitions that share no operand edge merge (exir's horizontal fusion)
// unless the merge would make a path leave the partition and come back:
// relu(x) and tanh(y) merge; sigmoid(cumsum(relu(x))) cannot join them
// (cumsum is portable), and neither can neg(cumsum(tanh(y))), but those two
// merge with each other. The program verifies afterwards. Partitions are
// fused latest-first (the one holding the latest node, as exir's
// capability partitioner numbers them walking the graph backward).
func TestMergeUnrelatedPartitions(t *testing.T) {
	src := `input x: user_input
input y: user_input
output user_output
output user_output
graph forward(%x: f32[4], %y: f32[4]) {
  %u1: f32[4] = aten.relu.default(%x)
  %m1: f32[4] = aten.cumsum.default(%u1, 0)
  %k1: f32[4] = aten.sigmoid.default(%m1)
  %k2: f32[4] = aten.tanh.default(%y)
  %m2: f32[4] = aten.cumsum.default(%k2, 0)
  %u2: f32[4] = aten.neg.default(%m2)
  return %k1, %u2
}
`
	p, err := ir.Parse([]byte(src), "merge.fxir")
	if err != nil {
		t.Fatal(err)
	}
	res, err := xnnpack.Run(p, xnnpack.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := ir.Verify(p); err != nil {
		t.Fatalf("partitioned program does not verify: %v\n%s", err, ir.Print(p))
	}
	var got []string
	for _, part := range res.Partitions {
		var ops []string
		for _, n := range part.Call.Args[0].Graph.Nodes() {
			ops = append(ops, strings.TrimPrefix(n.Op.Info().Name, "aten."))
		}
		sort.Strings(ops)
		got = append(got, strings.Join(ops, "+"))
	}
	want := []string{"neg.default+sigmoid.default", "relu.default+tanh.default"}
	if strings.Join(got, " | ") != strings.Join(want, " | ") {
		t.Fatalf("partitions %q, want %q\n%s", got, want, ir.Print(p))
	}
}
