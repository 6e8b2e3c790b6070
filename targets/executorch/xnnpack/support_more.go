package xnnpack

import (
	"fmt"

	"github.com/fxport/fxport/ir"
)

// Support rules for pooling, padding, slicing, batched matmul and ELU
// (pte-format.md §8.6); their visitors are in nodes_more.go.

func init() {
	addRule(ir.OpAtenMaxPool2d, "MaxPool2dConfig", checkMaxPool)
	addRule(ir.OpAtenConstantPadNd, "ConstantPadConfig", checkPad)
	addRule(ir.OpAtenSliceCopyTensor, "SliceCopyConfig", checkSlice)
	addRule(ir.OpAtenBmm, "BMMConfig", func(c *checker, n *ir.Node) string {
		if n.Args[0].Value.Tensor().Rank() != 3 || n.Args[1].Value.Tensor().Rank() != 3 {
			return "bmm operands must be rank 3"
		}
		return ""
	})
	addRule(ir.OpAtenElu, "ELUConfig", func(c *checker, n *ir.Node) string {
		for _, k := range []string{"scale", "input_scale"} {
			if a, ok := number(n.Arg(k)); !ok || a != 1 {
				return k + " must be 1 (XNNELU has alpha only)"
			}
		}
		if _, ok := number(n.Arg("alpha")); !ok {
			return "alpha must be a literal"
		}
		return ""
	})
}

// checkMaxPool: rank 4, static window, no ceil_mode, stride ≤ kernel (exir's
// MaxPool2dConfig), dilation ≥ 1.
func checkMaxPool(c *checker, n *ir.Node) string {
	if why := checkQPool(n); why != "" { // quant_pool.go
		return why
	}
	if n.Args[0].Value.Tensor().Rank() != 4 {
		return "rank-4 input only"
	}
	if n.Arg("ceil_mode").Bool() {
		return "ceil_mode"
	}
	k, ok1 := ints(n.Arg("kernel_size"), 2)
	pad, ok2 := ints(n.Arg("padding"), 2)
	dil, ok3 := ints(n.Arg("dilation"), 2)
	if !ok1 || !ok2 || !ok3 {
		return "kernel, padding and dilation must be static"
	}
	st, ok := ints(n.Arg("stride"), 2)
	if !ok {
		if len(n.Arg("stride").List) != 0 {
			return "stride must be static"
		}
		st = k
	}
	for i := 0; i < 2; i++ {
		if k[i] < 1 || st[i] < 1 || dil[i] < 1 || pad[i] < 0 {
			return "kernel, stride and dilation must be positive, padding non-negative"
		}
		if st[i] > k[i] {
			return "stride larger than the kernel"
		}
	}
	return ""
}

// checkPad: static, non-negative padding of at most rank dims.
func checkPad(c *checker, n *ir.Node) string {
	pad, ok := ints(n.Arg("pad"), 0)
	if !ok {
		return "padding must be static ints"
	}
	if len(pad)%2 != 0 || len(pad)/2 > n.Args[0].Value.Tensor().Rank() {
		return fmt.Sprintf("padding list of %d entries", len(pad))
	}
	for _, p := range pad {
		if p < 0 {
			return "negative padding"
		}
	}
	if _, ok := number(n.Arg("value")); !ok {
		return "padding value must be a literal"
	}
	return ""
}

// checkSlice: step 1, literal bounds, static non-empty input and output.
func checkSlice(c *checker, n *ir.Node) string {
	if a := n.Arg("step"); a.Kind != ir.ArgInt || a.Int != 1 {
		return "step must be 1"
	}
	for _, k := range []string{"start", "end"} {
		if a := n.Arg(k); a.Kind != ir.ArgInt && !a.IsNone() {
			return k + " must be a literal int or None"
		}
	}
	if _, ok := n.Args[0].Value.Tensor().StaticShape(); !ok {
		return "input shape must be static"
	}
	if _, ok := n.Results[0].Tensor().StaticShape(); !ok {
		return "output shape must be static"
	}
	return ""
}
