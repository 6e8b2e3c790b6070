package xnnpack

import (
	"fmt"
	"sort"

	"github.com/fxport/fxport/ir"
)

// rule is one op's support rule: the partitioner config it belongs to
// (exir's ALL_PARTITIONER_CONFIGS name) and its constraint check, which
// returns "" when the node is supported and the reason otherwise.
type rule struct {
	config string
	check  func(c *checker, n *ir.Node) string
}

// rules maps each delegable op to its rule; see pte-format.md §8.6.
var rules = ir.NewOpTable[rule]("XNNPACK support rules")

// ruleOf is op's rule, the zero rule when it has none.
func ruleOf(op ir.Op) rule {
	r, _ := rules.Lookup(op)
	return r
}

func addRule(o ir.Op, config string, check func(c *checker, n *ir.Node) string) {
	if check == nil {
		check = func(*checker, *ir.Node) string { return "" }
	}
	rules.Add(rule{config, check}, o)
}

func init() {
	addRule(ir.OpAtenSubTensor, "SubConfig", checkAdd) // quant_add.go
	addRule(ir.OpAtenAddTensor, "AddConfig", checkAdd)
	addRule(ir.OpAtenMulTensor, "MulConfig", checkMul)
	for op, cfg := range map[ir.Op]string{
		ir.OpAtenDivTensor: "DivConfig",
		ir.OpAtenMaximum:   "MaximumConfig", ir.OpAtenMinimum: "MinimumConfig",
	} {
		addRule(op, cfg, nil)
	}
	for op, cfg := range map[ir.Op]string{
		ir.OpAtenRelu: "ReLUConfig", ir.OpAtenHardtanh: "HardtanhConfig", ir.OpAtenClamp: "ClampConfig",
		ir.OpAtenSigmoid: "SigmoidConfig", ir.OpAtenTanh: "TanhConfig", ir.OpAtenNeg: "NegConfig",
		ir.OpAtenAbs: "AbsConfig", ir.OpAtenSqrt: "SquareRootConfig", ir.OpAtenRsqrt: "ReciprocalSquareRootConfig",
		ir.OpAtenExp: "ExpConfig", ir.OpAtenLog: "LogConfig", ir.OpAtenCeil: "CeilConfig",
		ir.OpAtenFloor: "FloorConfig", ir.OpAtenHardswish: "HardswishConfig", ir.OpAtenSin: "SinConfig",
		ir.OpAtenCos: "CosConfig", ir.OpAtenLeakyRelu: "LeakyReLUConfig", ir.OpAtenPermuteCopy: "PermuteConfig",
	} {
		addRule(op, cfg, nil)
	}
	addRule(ir.OpAtenGelu, "GeluConfig", func(c *checker, n *ir.Node) string {
		// XNNGelu computes the exact (erf) gelu: the tanh approximation
		// differs by up to ~2e-4 and stays portable.
		if a := n.Arg("approximate"); a.Kind == ir.ArgString && a.Str != "none" {
			return fmt.Sprintf("approximate=%q (XNNGelu is the exact erf form)", a.Str)
		}
		if n.Results[0].Tensor().DType != ir.Float32 {
			return "gelu is fp32 only"
		}
		return ""
	})
	addRule(ir.OpAtenPowTensorScalar, "PowConfig", func(c *checker, n *ir.Node) string {
		if e, ok := number(n.Arg("exponent")); !ok || e != 2 {
			return "only exponent 2 (XNNSquare)"
		}
		return ""
	})
	addRule(ir.OpAten_Softmax, "SoftmaxConfig", func(c *checker, n *ir.Node) string {
		rank := n.Args[0].Value.Tensor().Rank()
		d := n.Arg("dim").Int
		if d < 0 {
			d += int64(rank)
		}
		if d != int64(rank-1) {
			return "softmax must be over the last dim"
		}
		if n.Arg("half_to_float").Bool() {
			return "half_to_float"
		}
		return ""
	})
	addRule(ir.OpAtenAddmm, "AddmmConfig", checkAddmm)
	addRule(ir.OpAtenMm, "MMConfig", checkAddmm)
	addRule(ir.OpAtenConvolution, "ConvolutionConfig", checkConv)
	addRule(ir.OpAtenAvgPool2d, "AvgPoolingConfig", checkAvgPool)
	addRule(ir.OpAtenMeanDim, "MeanDimConfig", checkMeanDim)
	addRule(ir.OpAtenViewCopy, "ViewCopyConfig", checkView)
	addRule(ir.OpAtenSqueezeCopyDim, "SqueezeCopyConfig", checkView)
	addRule(ir.OpAtenSqueezeCopyDims, "SqueezeCopyConfig", checkView)
	addRule(ir.OpAtenUnsqueezeCopy, "UnsqueezeCopyConfig", checkView)
	addRule(ir.OpAtenCat, "CatConfig", func(c *checker, n *ir.Node) string {
		k := len(n.Args[0].List)
		if k < 2 {
			return fmt.Sprintf("cat of %d inputs (XNNPACK concatenates 2 to 5, longer lists chained)", k)
		}
		return ""
	})
	addRule(ir.OpAtenPrelu, "PreluConfig", checkPrelu)
	addRule(ir.OpAten_PreluKernel, "PreluConfig", checkPrelu)
	// _clone_dim_order and _to_dim_order_copy: dimorder_copy.go
}

// Configs lists the partitioner config names, sorted (the values
// partition_exclude accepts).
func Configs() []string {
	seen := map[string]bool{}
	var out []string
	for _, op := range rules.Ops() {
		if r := ruleOf(op); !seen[r.config] {
			seen[r.config] = true
			out = append(out, r.config)
		}
	}
	sort.Strings(out)
	return out
}

// ConfigOf returns the partitioner config (Configs) whose rule covers op,
// or false when no rule does.
func ConfigOf(op ir.Op) (string, bool) {
	r, ok := rules.Lookup(op)
	return r.config, ok
}

// checker evaluates support rules against one program.
type checker struct {
	p       *ir.Program
	consts  map[*ir.Value]bool // main-graph placeholders holding constants
	exclude map[string]bool
}

func newChecker(p *ir.Program, exclude map[string]bool) *checker {
	c := &checker{p: p, consts: map[*ir.Value]bool{}, exclude: exclude}
	for i, v := range p.Main.Inputs {
		if i < len(p.Signature.Inputs) && IsConstantKind(p.Signature.Inputs[i].Kind) {
			c.consts[v] = true
		}
	}
	return c
}

// IsConstantKind reports whether a placeholder of this kind holds a
// constant the delegate may bake in (parameters, buffers, lifted constants).
func IsConstantKind(k ir.InputKind) bool {
	return k == ir.Parameter || k == ir.Buffer || k == ir.ConstantTensor
}

// supported returns "" when n may be delegated, else the reason.
func (c *checker) supported(n *ir.Node) string {
	r, ok := rules.Lookup(n.Op)
	if !ok {
		return "no XNNPACK rule for " + n.Op.Info().Name
	}
	if c.exclude[r.config] {
		return r.config + " is excluded"
	}
	if dynQOp(n.Op) { // non-fp32 parameter tensors; checked by their rules (quant_dynamic.go)
		return r.check(c, n)
	}
	if why := checkChannelsLast(n); why != "" { // dimorder_copy.go
		return why
	}
	if len(n.Results) != 1 && !multiResult[n.Op] { // argmax_pool.go
		return "multiple results"
	}
	for i, as := range n.Op.Info().Schema.Args {
		if as.Type.Base == ir.KTensor && !as.Type.Optional && !as.Type.List && i < len(n.Args) && n.Args[i].Kind != ir.ArgValue {
			return "a literal in tensor slot " + as.Name + " (wrapped scalar)"
		}
	}
	// quantize/dequantize have an int8 side (checked by their rules).
	int8OK := n.Op == opQuant || n.Op == opDequant || n.Op == opDequantCh
	operands := n.Operands()
	if n.Op == opDequantCh { // its scales and zero points are checked by its rule
		operands = operands[:1]
	}
	for _, v := range operands {
		if why := c.tensorOKAs(v, int8OK); why != "" {
			return "operand " + v.String() + ": " + why
		}
	}
	if why := c.tensorOKAs(n.Results[0], int8OK); why != "" {
		return "result: " + why
	}
	return r.check(c, n)
}

// tensorOKAs applies the common constraints: fp32/fp16 tensors (int8
// too when int8OK), rank ≤ 6, not empty, no unbacked symbolic sizes, on
// the CPU.
func (c *checker) tensorOKAs(v *ir.Value, int8OK bool) string {
	t := v.Tensor()
	if t == nil {
		return "not a tensor (" + v.Type.String() + ")"
	}
	if t.DType != ir.Float32 && t.DType != ir.Float16 && !(int8OK && t.DType == ir.Int8) {
		return "dtype " + t.DType.String() + " (fp32/fp16 only)"
	}
	if t.Rank() > 6 {
		return "rank > 6"
	}
	if t.Device != "" && t.Device != "cpu" {
		return "device " + t.Device
	}
	for _, d := range t.Shape {
		if k, ok := d.Const(); ok {
			if k == 0 {
				return "empty tensor"
			}
			continue
		}
		for _, s := range d.Symbols() {
			if c.p.Env == nil || c.p.Env.IsUnbacked(s) {
				return "unbacked symbolic size " + s
			}
		}
		if c.p.Env == nil || !c.p.Env.UpperBound(d).IsFinite() {
			return "unbounded dim " + d.String()
		}
	}
	return ""
}

// needs lists the nodes n's serialization reads as part of itself, which
// must be claimed into n's own partition (Run releases n otherwise): a node
// is claimed only if what its serialization needs is claimed with it or
// is a constant. Constants are region inputs and need nothing; beyond the
// quantized patterns (quantNeeds), an fp32 fully-connected op needs the
// permute_copy of its constant weight, which it folds into its filter (a
// transpose computed outside would reach it as a runtime value: "weight is
// not static").
func (c *checker) needs(n *ir.Node) []*ir.Node {
	if out, ok := c.quantNeeds(n); ok { // quant_support.go
		return out
	}
	if isFC(n) {
		if w := n.Arg("mat2").Value; !c.consts[w] && c.isConst(w) {
			return []*ir.Node{w.Def}
		}
	}
	return nil
}

func checkAlphaOne(c *checker, n *ir.Node) string {
	if a, ok := number(n.Arg("alpha")); !ok || a != 1 {
		return "alpha must be 1"
	}
	return ""
}

// isConst reports whether v is a constant placeholder or a permute_copy of
// one (the weight transpose decompose-to-core writes for linear).
func (c *checker) isConst(v *ir.Value) bool {
	if c.consts[v] {
		return true
	}
	return v.Def != nil && v.Def.Op == opPermute && c.consts[v.Def.Args[0].Value]
}

func checkAddmm(c *checker, n *ir.Node) string {
	var mat1, mat2 *ir.Value
	if n.Op == opAddmm {
		mat1, mat2 = n.Arg("mat1").Value, n.Arg("mat2").Value
		for _, k := range []string{"beta", "alpha"} {
			if a, ok := number(n.Arg(k)); !ok || a != 1 {
				return k + " must be 1"
			}
		}
		b := n.Arg("self").Value
		bt := b.Tensor()
		if !c.consts[b] || bt.Rank() != 1 {
			return "bias must be a constant vector"
		}
	} else {
		mat1, mat2 = n.Arg("self").Value, n.Arg("mat2").Value
	}
	if mat1.Tensor().Rank() != 2 || mat2.Tensor().Rank() != 2 {
		return "operands must be matrices"
	}
	if dynFC(n) { // quant_dynamic.go
		if why := c.checkDynFC(n); why != "" {
			return why
		}
	} else if quantFC(n) {
		if _, why := matchQFC(n, func(v *ir.Value) bool { return c.consts[v] }); why != "" {
			return why
		}
	} else if !c.isConst(mat2) {
		return "weight must be static (a constant or its transpose)"
	}
	if _, ok := mat2.Tensor().StaticShape(); !ok {
		return "weight shape must be static"
	}
	return ""
}

func checkConv(c *checker, n *ir.Node) string {
	in := n.Arg("input").Value.Tensor()
	if in.Rank() != 4 {
		return "only 2-D convolution (rank-4 input)"
	}
	if n.Arg("transposed").Bool() {
		return checkDeconv(c, n)
	}
	if dynConv(n) { // quant_dynamic_conv.go
		if why := c.checkDynConv(n); why != "" {
			return why
		}
	} else if quantConv(n) {
		if _, why := matchQConv(n, func(v *ir.Value) bool { return c.consts[v] }); why != "" {
			return why
		}
	} else if !c.consts[n.Arg("weight").Value] {
		return "weight must be a constant"
	}
	if b := n.Arg("bias"); b.Kind == ir.ArgValue && !c.consts[b.Value] {
		return "bias must be a constant"
	}
	for _, k := range []string{"stride", "padding", "dilation"} {
		if _, ok := ints(n.Arg(k), 2); !ok {
			return k + " must be two static ints"
		}
	}
	if _, ok := in.StaticShape(); !ok {
		if !in.Shape[1].IsConst() {
			return "channels must be static"
		}
	}
	return ""
}

func checkAvgPool(c *checker, n *ir.Node) string {
	if n.Args[0].Value.Tensor().Rank() != 4 {
		return "rank-4 input only"
	}
	if n.Arg("ceil_mode").Bool() {
		return "ceil_mode"
	}
	k, ok1 := ints(n.Arg("kernel_size"), 2)
	pad, ok2 := ints(n.Arg("padding"), 2)
	if !ok1 || !ok2 {
		return "kernel and padding must be static"
	}
	if _, ok := ints(n.Arg("stride"), 2); !ok && len(n.Arg("stride").List) != 0 {
		return "stride must be static"
	}
	if n.Arg("count_include_pad").Bool() && (pad[0] != 0 || pad[1] != 0) {
		return "count_include_pad with non-zero padding"
	}
	if d := n.Arg("divisor_override"); d.Kind == ir.ArgInt && d.Int != k[0]*k[1] {
		return "divisor_override differs from the window size"
	}
	return ""
}

func checkMeanDim(c *checker, n *ir.Node) string {
	if why := checkQPool(n); why != "" { // quant_pool.go
		return why
	}
	t := n.Args[0].Value.Tensor()
	if t.Rank() != 4 {
		return "rank-4 input only"
	}
	d, ok := ints(n.Arg("dim"), 2)
	if !ok {
		return "dims must be [2, 3]"
	}
	a, b := d[0]%4, d[1]%4
	if a < 0 {
		a += 4
	}
	if b < 0 {
		b += 4
	}
	if !(a == 2 && b == 3 || a == 3 && b == 2) {
		return "dims must be [2, 3]"
	}
	if !n.Arg("keepdim").Bool() {
		return "keepdim must be true"
	}
	if !n.Arg("dtype").IsNone() {
		return "dtype must be None"
	}
	return ""
}

// checkView: XNNStaticReshape infers at most one dim (its 0), for views,
// squeezes and unsqueezes alike: the genuine runtime refuses a new shape
// with two 0s (xnn_status_invalid_parameter, "Propagating input shapes
// failed"), so ET-P16's 0-per-symbolic-dim visitors hold only for one
// dynamic dim (exir's own visitors raise "XNNPACK reshape only supports 1
// dynamic dimension"). Seen on every transformers attention with dynamic
// batch and sequence (docs/models.md).
func checkView(c *checker, n *ir.Node) string {
	dyn := 0
	for _, d := range n.Results[0].Tensor().Shape {
		if !d.IsConst() {
			dyn++
		}
	}
	if dyn > 1 {
		return "more than one dynamic dim"
	}
	return ""
}

// checkPrelu: rank-4 input (ET-P38) and a constant weight.
func checkPrelu(c *checker, n *ir.Node) string {
	if n.Args[0].Value.Tensor().Rank() != 4 {
		return "prelu input must be rank 4 (ET-P38)"
	}
	if !c.consts[n.Args[1].Value] {
		return "prelu weight must be a parameter"
	}
	return ""
}

func sameOrder(a, b []int, rank int) bool {
	at := func(o []int, i int) int {
		if o == nil {
			return i
		}
		return o[i]
	}
	for i := 0; i < rank; i++ {
		if at(a, i) != at(b, i) {
			return false
		}
	}
	return true
}

// number reads a numeric literal.
func number(a ir.Arg) (float64, bool) {
	switch a.Kind {
	case ir.ArgInt, ir.ArgBool:
		return float64(a.Int), true
	case ir.ArgFloat:
		return a.Float, true
	}
	return 0, false
}

// ints reads a list of int literals; a single int is repeated n times; n=0
// accepts any length.
func ints(a ir.Arg, n int) ([]int64, bool) {
	if a.Kind == ir.ArgInt {
		out := make([]int64, n)
		for i := range out {
			out[i] = a.Int
		}
		return out, n > 0
	}
	if a.Kind != ir.ArgList {
		return nil, false
	}
	var out []int64
	for _, e := range a.List {
		if e.Kind != ir.ArgInt {
			return nil, false
		}
		out = append(out, e.Int)
	}
	if n > 0 && len(out) == 1 {
		for len(out) < n {
			out = append(out, out[0])
		}
	}
	return out, n == 0 || len(out) == n
}

var (
	opPermute = ir.OpAtenPermuteCopy
	opAddmm   = ir.OpAtenAddmm
	opView    = ir.OpAtenViewCopy
	// OpCallDelegate is the node a partition becomes.
	OpCallDelegate = ir.OpHigherOrderExecutorchCallDelegate
)
