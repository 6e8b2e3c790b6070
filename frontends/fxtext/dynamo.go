package fxtext

import (
	"fmt"
	"sort"
	"strings"

	"github.com/fxport/fxport/ir"
)

// Dynamo-level graphs (what torch.compile hands a backend, make_fx before
// decomposition, symbolic_trace) call torch functions (torch.sin,
// torch._C._nn.linear, torch.nn.functional.gelu), tensor methods
// (l_x_.view(-1)) and Python operators on tensors (l_x_ * l_y_). They are
// mapped to the ATen op of the same name whose schema the arguments bind
// to; what has no mapping is kept as an opaque call (opaque.call.default)
// with a note, and calls that only set up tracing state (grad mode, guards)
// are dropped with a note.

// Program metadata keys fxtext writes.
const (
	// MetaDropped lists the calls fxtext dropped, one "line: call" per line.
	MetaDropped = "fxtext.dropped"
	// MetaNote on a node says why it is opaque.
	MetaNote = "fxtext.note"
)

// edgePrefixes are the module paths ExecuTorch prints before an op's
// namespace (edge-dialect ops).
var edgePrefixes = []string{"executorch.exir.dialects.edge._ops.", "torch._ops."}

// normalizeTarget strips printing artefacts from a call target.
func normalizeTarget(t string) string {
	for _, p := range edgePrefixes {
		if strings.HasPrefix(t, p) {
			return "torch.ops." + strings.TrimPrefix(t, p)
		}
	}
	return t
}

// droppedCalls are calls that set tracing state and compute nothing.
var droppedCalls = map[string]bool{
	"torch._C._set_grad_enabled": true, "torch._C._log_api_usage_once": true,
	"torch.autograd.grad_mode.set_grad_enabled": true, "torch._functorch.predispatch._add_batch_dim": false,
	"torch._C._set_autograd_fallback_mode": true, "torch.amp.autocast_mode._enter_autocast": true,
	"torch.amp.autocast_mode._exit_autocast": true, "torch._C._autograd._saved_tensors_hooks_disable": true,
	"torch._C._autograd._saved_tensors_hooks_enable": true, "torch._C._functorch._vmap_increment_nesting": false,
	"torch._assert_async": false, "torch.fx.experimental.symbolic_shapes._check": false,
}

// pythonLevel handles targets that are not in the op table but name a
// Python-level callable torch prints: dropped state calls, guard calls,
// tensor methods, torch functions. done is false when target is none of these.
func (gb *gbuild) pythonLevel(st *fxStmt, target string, posE []*expr, keys []string, kwE []*expr) (bool, error) {
	if droppedCalls[target] || target == "self._guards_fn" || strings.HasPrefix(target, "torch._dynamo.") && strings.Contains(target, "guard") {
		gb.drop(st, target)
		return true, nil
	}
	// A method call: "l_x_.view(-1)" (code form) or call_method (graph form,
	// rewritten to "Tensor.<name>" with the object first).
	if i := strings.LastIndexByte(target, '.'); i > 0 {
		recv, meth := target[:i], target[i+1:]
		if b, ok := gb.scope[recv]; ok && b.kind == bValue {
			self := &expr{kind: eName, name: recv, pos: st.pos}
			return true, gb.method(st, meth, append([]*expr{self}, posE...), keys, kwE)
		}
		if recv == "Tensor" || recv == "torch.Tensor" {
			return true, gb.method(st, meth, posE, keys, kwE)
		}
	}
	switch target {
	case "executorch.exir.memory.alloc", "executorch_exir_memory_alloc":
		return true, gb.memoryAlloc(st, target, posE, keys, kwE)
	case "executorch.exir.memory.view", "executorch_exir_memory_view":
		// The aliasing view memory planning makes of a view_copy.
		return true, gb.call(st, ir.MustLookupOp("executorch_prim.et_view.default"), posE, keys, kwE)
	case "module:_guards_fn":
		gb.drop(st, target)
		return true, nil
	}
	if strings.HasPrefix(target, mangledEdge) {
		if op, ok := mangledOp(strings.TrimPrefix(target, mangledEdge)); ok {
			return true, gb.call(st, op, posE, keys, kwE)
		}
	}
	for _, p := range torchFunctionPrefixes {
		if strings.HasPrefix(target, p) && !strings.Contains(target[len(p):], ".") {
			name := target[len(p):]
			if fn, ok := functionAdapters[name]; ok && p != "torch." || ok && fn.torchToo {
				posE, keys, kwE = fn.adapt(posE, keys, kwE)
				name = fn.aten
			}
			return true, gb.atenByName(st, target, name, posE, keys, kwE, false)
		}
	}
	return false, nil
}

var torchFunctionPrefixes = []string{"torch.nn.functional.", "torch._C._nn.", "torch._C._VariableFunctions.",
	"torch.functional.", "torch.special.", "torch.linalg.", "torch.fft.", "torch._C._linalg.", "torch._C._special.", "torch."}

func (gb *gbuild) drop(st *fxStmt, target string) {
	prev, _ := gb.prog.Meta.Get(MetaDropped)
	line := fmt.Sprintf("%d: %s", st.pos.line, target)
	if prev != "" {
		line = prev + "\n" + line
	}
	gb.prog.Meta.Set(MetaDropped, line)
	gb.bind(st, binding{kind: bNone})
}

// methodAliases map tensor methods to an ATen base name and fixed keywords.
var dtypeMethods = map[string]string{
	"float": "torch.float32", "double": "torch.float64", "half": "torch.float16", "bfloat16": "torch.bfloat16",
	"int": "torch.int32", "long": "torch.int64", "short": "torch.int16", "bool": "torch.bool", "byte": "torch.uint8", "char": "torch.int8",
}

// method maps a tensor method call (args[0] is the tensor).
func (gb *gbuild) method(st *fxStmt, meth string, args []*expr, keys []string, kwE []*expr) error {
	label := "Tensor." + meth
	if len(args) == 0 {
		return gb.opaque(st, label, args, keys, kwE, "a method call without its object")
	}
	switch meth {
	case "size":
		if len(args) == 2 && len(keys) == 0 {
			return gb.atenByName(st, label, "sym_size", args, keys, kwE, true)
		}
	case "dim", "ndimension":
		return gb.atenByName(st, label, "dim", args, keys, kwE, true)
	case "contiguous":
		return gb.atenByName(st, label, "clone", args[:1], keys, kwE, true)
	case "type_as":
		// x.type_as(y) converts to y's dtype: known only when y is typed.
		if len(args) == 2 && len(keys) == 0 {
			if b, ok := gb.lookup(args[1]); ok && b.kind == bValue {
				if tt := ir.AsTensor(b.value.Type); tt != nil {
					dt := &expr{kind: eName, name: "torch." + tt.DType.String(), pos: st.pos}
					return gb.atenByName(st, label, "_to_copy", args[:1], []string{"dtype"}, []*expr{dt}, true)
				}
			}
		}
		return gb.opaque(st, label, args, keys, kwE, "type_as needs the other tensor's dtype, which the dump does not type")
	}
	if dt, ok := dtypeMethods[meth]; ok && len(args) == 1 {
		return gb.atenByName(st, label, "_to_copy", args, append(keys, "dtype"), append(kwE, &expr{kind: eName, name: dt, pos: st.pos}), true)
	}
	return gb.atenByName(st, label, meth, args, keys, kwE, true)
}

// functionAdapter rewrites a torch.nn.functional call into its ATen op's argument order.
type functionAdapter struct {
	aten     string
	torchToo bool // also for torch.<name>
	// order lists, for each ATen positional argument, the index of the
	// Python argument that fills it (-1: leave out).
	order []int
	// rename maps Python keyword names to ATen ones ("" drops the keyword).
	rename map[string]string
	// extra are keywords ATen requires that the Python function does not take.
	extra map[string]string
}

func (f functionAdapter) adapt(posE []*expr, keys []string, kwE []*expr) ([]*expr, []string, []*expr) {
	if f.order != nil {
		var out []*expr
		for _, j := range f.order {
			if j < 0 || j >= len(posE) {
				break
			}
			out = append(out, posE[j])
		}
		posE = out
	}
	var k2 []string
	var v2 []*expr
	for i, k := range keys {
		if r, ok := f.rename[k]; ok {
			if r == "" {
				continue
			}
			k = r
		}
		k2 = append(k2, k)
		v2 = append(v2, kwE[i])
	}
	var extra []string
	for k := range f.extra {
		extra = append(extra, k)
	}
	sort.Strings(extra)
	for _, k := range extra {
		k2 = append(k2, k)
		v2 = append(v2, &expr{kind: eName, name: f.extra[k]})
	}
	return posE, k2, v2
}

var functionAdapters = map[string]functionAdapter{
	// F.embedding(input, weight, padding_idx, ...): ATen takes weight first.
	"embedding": {aten: "embedding", order: []int{1, 0}, rename: map[string]string{"input": "indices", "max_norm": "", "norm_type": "", "scale_grad_by_freq": "scale_grad_by_freq", "sparse": "sparse"}},
	// F.batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps).
	"batch_norm":  {aten: "batch_norm", order: []int{0, 3, 4, 1, 2, 5, 6, 7}, extra: map[string]string{"cudnn_enabled": "True"}},
	"dropout":     {aten: "dropout", rename: map[string]string{"training": "train", "inplace": ""}},
	"relu":        {aten: "relu", rename: map[string]string{"inplace": ""}},
	"silu":        {aten: "silu", rename: map[string]string{"inplace": ""}},
	"hardswish":   {aten: "hardswish", rename: map[string]string{"inplace": ""}},
	"hardsigmoid": {aten: "hardsigmoid", rename: map[string]string{"inplace": ""}},
	"relu6":       {aten: "hardtanh", rename: map[string]string{"inplace": ""}},
	"softmax":     {aten: "softmax", torchToo: true, order: []int{0, 1}, rename: map[string]string{"_stacklevel": ""}},
	"log_softmax": {aten: "log_softmax", torchToo: true, order: []int{0, 1}, rename: map[string]string{"_stacklevel": ""}},
}

// atenByName emits the aten.<name> overload the arguments bind to (trying
// .default, then the others by name), or an opaque call when none does.
func (gb *gbuild) atenByName(st *fxStmt, label, name string, posE []*expr, keys []string, kwE []*expr, method bool) error {
	cands := atenOverloads(name)
	if len(cands) == 0 {
		return gb.opaque(st, label, posE, keys, kwE, fmt.Sprintf("no ATen op %s in the op table", name))
	}
	var firstErr error
	for _, op := range cands {
		args := packVarSizes(gb, op, posE)
		kk, kv := keysFor(op, keys, kwE)
		bound, pending, err := gb.bindCall(st, op, args, kk, kv)
		if err != nil {
			if firstErr == nil {
				firstErr = err
			}
			continue
		}
		if !gb.operandsFit(op, bound) {
			continue
		}
		return gb.finishCall(st, op, bound, pending)
	}
	return gb.opaque(st, label, posE, keys, kwE, fmt.Sprintf("the arguments bind to no overload of aten.%s (%v)", name, firstErr))
}

func keysFor(op ir.Op, keys []string, kwE []*expr) ([]string, []*expr) {
	var kk []string
	var kv []*expr
	for i, k := range keys {
		if op.ArgIndex(k) < 0 {
			switch {
			case k == "input" && op.ArgIndex("self") >= 0:
				k = "self"
			case k == "other" && op.ArgIndex("exponent") >= 0:
				k = "exponent"
			}
		}
		kk = append(kk, k)
		kv = append(kv, kwE[i])
	}
	return kk, kv
}

// atenOverloads lists aten.<name>.* in the order tried: default, then by
// name (Tensor before Scalar, so that a value operand prefers a tensor slot).
func atenOverloads(name string) []ir.Op {
	overloadIndex.once()
	ops := overloadIndex.byBase[name]
	return ops
}

var overloadIndex = struct {
	done   bool
	byBase map[string][]ir.Op
	once   func()
}{}

func init() {
	overloadIndex.once = func() {
		if overloadIndex.done {
			return
		}
		overloadIndex.done = true
		m := map[string][]ir.Op{}
		for _, op := range ir.AllOps() {
			info := op.Info()
			if info.Namespace != "aten" || op.Has(ir.PropOutVariant) {
				continue
			}
			m[info.Base] = append(m[info.Base], op)
		}
		rank := func(o string) int {
			switch o {
			case "default":
				return 0
			case "Tensor", "int", "dim", "using_ints", "dim_IntList", "self", "Tensor_Tensor":
				return 1
			case "Scalar", "Tensor_Scalar", "Scalar_Tensor":
				return 3
			}
			return 2
		}
		for _, ops := range m {
			sort.SliceStable(ops, func(i, j int) bool {
				a, b := ops[i].Info(), ops[j].Info()
				if ra, rb := rank(a.Overload), rank(b.Overload); ra != rb {
					return ra < rb
				}
				return a.Overload < b.Overload
			})
		}
		overloadIndex.byBase = m
	}
}

// operandsFit rejects an overload whose Tensor slots got non-tensor values
// (a SymInt passed to add.Tensor's other belongs in add.Scalar... the IR's
// wrapped numbers aside) and whose scalar slots got tensors.
func (gb *gbuild) operandsFit(op ir.Op, bound []ir.Arg) bool {
	s := &op.Info().Schema
	for i, a := range bound {
		if i >= len(s.Args) || a.Kind != ir.ArgValue {
			continue
		}
		t := a.Value.Type
		if ir.IsUnknown(t) {
			continue
		}
		_, isTensor := t.(*ir.TensorType)
		switch s.Args[i].Type.Base {
		case ir.KTensor:
			if !isTensor && !s.Args[i].Type.List {
				return false
			}
		case ir.KScalar, ir.KInt, ir.KSymInt, ir.KFloat, ir.KSymFloat, ir.KBool, ir.KSymBool:
			if isTensor {
				return false
			}
		}
	}
	return true
}

// packVarSizes packs torch's "*size" varargs (x.view(2, -1), x.permute(0,
// 2, 1)) into the list the ATen schema takes at that position.
func packVarSizes(gb *gbuild, op ir.Op, posE []*expr) []*expr {
	s := &op.Info().Schema
	at := -1
	for i := 0; i < 2 && i < len(s.Args); i++ {
		if a := s.Args[i]; a.Type.List && (a.Type.Base == ir.KInt || a.Type.Base == ir.KSymInt) {
			at = i
			break
		}
	}
	if at < 0 || len(posE)-at < 2 {
		return posE
	}
	rest := posE[at:]
	for _, e := range rest {
		if !gb.intLike(e) {
			return posE
		}
	}
	tuple := &expr{kind: eTuple, pos: rest[0].pos, elems: rest}
	return append(append([]*expr{}, posE[:at]...), tuple)
}

// intLike reports an int literal or a name bound to an int or SymInt.
func (gb *gbuild) intLike(e *expr) bool {
	switch e.kind {
	case eInt:
		return true
	case eUnary:
		return e.name == "-" && len(e.elems) == 1 && e.elems[0].kind == eInt
	case eName, eRef, eWord:
		if b, ok := gb.lookup(e); ok && b.kind == bValue {
			switch t := b.value.Type.(type) {
			case *ir.SymIntType:
				return true
			case *ir.ScalarType:
				return t.Kind == ir.IntKind
			case *ir.UnknownType:
				// Untyped: a SymInt when a scalar op made it (sym_size, operator.mul).
				return scalarProducer(b.value) || b.value.Def != nil && b.value.Def.Op.Has(ir.PropSymbolic)
			}
			return false
		}
		if e.kind == eWord {
			var v int64
			_, err := fmt.Sscan(e.name, &v)
			return err == nil
		}
	}
	return false
}

// tensorInfix maps Python operators on tensors to ATen.
var tensorInfix = map[string]string{
	"operator.add": "add", "operator.sub": "sub", "operator.mul": "mul", "operator.truediv": "div",
	"operator.floordiv": "floor_divide", "operator.mod": "remainder", "operator.pow": "pow",
	"operator.eq": "eq", "operator.ne": "ne", "operator.lt": "lt", "operator.le": "le",
	"operator.gt": "gt", "operator.ge": "ge", "operator.and_": "bitwise_and", "operator.or_": "bitwise_or",
	"operator.xor": "bitwise_xor", "operator.matmul": "matmul", "operator.neg": "neg",
	"operator.invert": "bitwise_not", "operator.lshift": "bitwise_left_shift", "operator.rshift": "bitwise_right_shift",
	"operator.iadd": "add_", "operator.isub": "sub_", "operator.imul": "mul_", "operator.itruediv": "div_",
}

// tensorOperator maps "x * y" on tensors to aten.mul.Tensor: it reports
// false when no operand is a tensor (SymInt arithmetic stays operator.*).
func (gb *gbuild) tensorOperator(st *fxStmt, target string, posE []*expr) (bool, error) {
	name, ok := tensorInfix[strings.Replace(target, "_operator.", "operator.", 1)]
	if !ok {
		return false, nil
	}
	tensorAt := -1
	for i, e := range posE {
		b, ok := gb.lookup(e)
		if !ok || b.kind != bValue {
			continue
		}
		if ir.AsTensor(b.value.Type) != nil || ir.IsUnknown(b.value.Type) && gb.dynamoLevel && !scalarProducer(b.value) {
			tensorAt = i
			break
		}
	}
	if tensorAt < 0 {
		return false, nil
	}
	if tensorAt == 1 && len(posE) == 2 {
		// 2 - x, 2 / x: a number on the left.
		switch name {
		case "add", "mul", "eq", "ne", "bitwise_and", "bitwise_or", "bitwise_xor":
			posE = []*expr{posE[1], posE[0]}
		case "sub":
			name, posE = "rsub", []*expr{posE[1], posE[0]}
		case "lt", "le", "gt", "ge":
			name = map[string]string{"lt": "gt", "le": "ge", "gt": "lt", "ge": "le"}[name]
			posE = []*expr{posE[1], posE[0]}
		case "pow":
			return true, gb.atenByName(st, target, "pow", posE, nil, nil, false)
		}
	}
	return true, gb.atenByName(st, target, name, posE, nil, nil, false)
}

// opaque keeps a call fxtext cannot map as opaque.call.default: the target
// as printed, the keyword names, then the arguments (values where they are
// values, literals where they read as literals, otherwise their text).
func (gb *gbuild) opaque(st *fxStmt, target string, posE []*expr, keys []string, kwE []*expr, why string) error {
	op := ir.MustLookupOp("opaque.call.default")
	names := make([]ir.Arg, len(keys))
	for i, k := range keys {
		names[i] = ir.StringArg(k)
	}
	args := []ir.Arg{ir.StringArg(target), ir.ListArg(names...)}
	for _, e := range append(append([]*expr{}, posE...), kwE...) {
		args = append(args, gb.opaqueArg(e))
	}
	gb.opaqueWhy = why
	defer func() { gb.opaqueWhy = "" }()
	return gb.emitCall(st, op, args)
}

func (gb *gbuild) opaqueArg(e *expr) ir.Arg {
	var pending []pendingRegion
	if b, ok := gb.lookup(e); ok && b.kind == bModule {
		return ir.StringArg("self." + b.attr)
	}
	a, err := gb.convert(e, anyType, &pending)
	if err == nil && len(pending) == 0 {
		return a
	}
	if e.kind == eTuple || e.kind == eList {
		out := make([]ir.Arg, len(e.elems))
		for i, x := range e.elems {
			out[i] = gb.opaqueArg(x)
		}
		return ir.ListArg(out...)
	}
	t := e.text()
	if t == "" {
		t = e.name
	}
	return ir.StringArg(t)
}

// mangledEdge starts the names gm.code gives edge-dialect ops
// (executorch_exir_dialects_edge__ops_aten_add_Tensor).
const mangledEdge = "executorch_exir_dialects_edge__ops_"

var mangled map[string]ir.Op

// mangledOp finds the op whose qualified name, dots as underscores, is m.
func mangledOp(m string) (ir.Op, bool) {
	if mangled == nil {
		mangled = map[string]ir.Op{}
		for _, op := range ir.AllOps() {
			mangled[strings.ReplaceAll(op.Info().Name, ".", "_")] = op
		}
	}
	op, ok := mangled[m]
	return op, ok
}

// memoryAlloc reads ExecuTorch's memory.alloc(((3, 4), torch.float32)): one
// (sizes, dtype) spec. A list of specs (several outputs) stays opaque.
func (gb *gbuild) memoryAlloc(st *fxStmt, target string, posE []*expr, keys []string, kwE []*expr) error {
	if len(posE) == 1 && len(keys) == 0 && posE[0].kind == eTuple && len(posE[0].elems) == 2 {
		spec := posE[0].elems
		if spec[0].kind == eTuple || spec[0].kind == eList {
			op := ir.MustLookupOp("memory.alloc.default")
			return gb.call(st, op, []*expr{spec[0]}, []string{"dtype"}, []*expr{spec[1]})
		}
	}
	return gb.opaque(st, target, posE, keys, kwE, "a memory.alloc of several tensors")
}

// scalarProducer reports a value of unknown type whose op returns a
// Python-level scalar (sym_size, operator.*), not a tensor.
func scalarProducer(v *ir.Value) bool {
	if v.Def == nil {
		return false
	}
	rs := v.Def.Op.Info().Schema.Returns
	if v.Index >= len(rs) {
		return false
	}
	switch rs[v.Index].Type.Base {
	case ir.KSymInt, ir.KInt, ir.KSymFloat, ir.KFloat, ir.KSymBool, ir.KBool, ir.KScalar:
		return !rs[v.Index].Type.List
	}
	return false
}
