package opt

import (
	"math"

	pb "github.com/fxport/fxport/targets/onnx/onnxpb"
)

// neverFold lists ops the folder must not evaluate even when every input is
// constant: Resize (ONNX-P24: reference-evaluator folding took minutes per
// node), fills (ConstantOfShape materializes a large tensor; ONNX-P13 keeps
// it typed in the graph), random ops and quantization.
var neverFold = map[string]string{
	"Resize":            "ONNX-P24: folding Resize is slow and grows the model",
	"ConstantOfShape":   "fills stay in the graph (size, ONNX-P13)",
	"RandomUniform":     "random",
	"RandomNormal":      "random",
	"RandomUniformLike": "random",
	"RandomNormalLike":  "random",
	"Multinomial":       "random",
	"Bernoulli":         "random",
	"Dropout":           "random in training mode",
	"QuantizeLinear":    "quantization is kept for the backend",
	"DequantizeLinear":  "quantization is kept for the backend",
}

// NeverFolded reports whether op is excluded from folding, with the reason.
func NeverFolded(op string) (string, bool) {
	why, ok := neverFold[op]
	return why, ok
}

// evaluator computes a node's single output from its inputs (nil entries:
// omitted optional inputs). It returns nil when it declines (an unsupported
// dtype, an out-of-range index, a division by zero): declining is never an
// error, the node just stays.
type evaluator func(n *pb.NodeProto, in []*tensor) *tensor

// evaluators is the folder's op set: every entry has exact semantics.
var evaluators = map[string]evaluator{
	"Size":      evalSize,
	"Gather":    evalGather,
	"Concat":    evalConcat,
	"Unsqueeze": evalUnsqueeze,
	"Squeeze":   evalSqueeze,
	"Reshape":   evalReshape,
	"Slice":     evalSlice,
	"Cast":      evalCast,
	"Add":       intBinary(func(a, b int64) (int64, bool) { return a + b, true }),
	"Sub":       intBinary(func(a, b int64) (int64, bool) { return a - b, true }),
	"Mul":       intBinary(func(a, b int64) (int64, bool) { return a * b, true }),
	"Div": intBinary(func(a, b int64) (int64, bool) {
		if b == 0 || (b == -1 && (a == math.MinInt64 || a == math.MinInt32)) {
			return 0, false
		}
		return a / b, true // truncation, as ONNX integer Div
	}),
	"Min": intBinary(func(a, b int64) (int64, bool) { return min(a, b), true }),
	"Max": intBinary(func(a, b int64) (int64, bool) { return max(a, b), true }),
}

func attrInt(n *pb.NodeProto, name string, def int64) int64 {
	for _, a := range n.Attribute {
		if a.GetName() == name {
			return a.GetI()
		}
	}
	return def
}

func hasAttr(n *pb.NodeProto, name string) bool {
	for _, a := range n.Attribute {
		if a.GetName() == name {
			return true
		}
	}
	return false
}

func normAxis(a int64, rank int) (int, bool) {
	if a < 0 {
		a += int64(rank)
	}
	if a < 0 || a >= int64(rank) {
		return 0, false
	}
	return int(a), true
}

func evalSize(_ *pb.NodeProto, in []*tensor) *tensor {
	if len(in) != 1 || in[0] == nil {
		return nil
	}
	return int64Tensor(nil, []int64{in[0].numel()})
}

// evalShape folds Shape from a static shape (the input's value need not be
// known), honouring start/end (opset 15).
func evalShape(n *pb.NodeProto, dims []int64) *tensor {
	r := int64(len(dims))
	clamp := func(v int64) int64 {
		if v < 0 {
			v += r
		}
		return max(0, min(v, r))
	}
	start := clamp(attrInt(n, "start", 0))
	end := r
	if hasAttr(n, "end") {
		end = clamp(attrInt(n, "end", r))
	}
	var out []int64
	if start < end {
		out = append(out, dims[start:end]...)
	}
	return int64Tensor([]int64{int64(len(out))}, out)
}

func evalGather(n *pb.NodeProto, in []*tensor) *tensor {
	if len(in) != 2 || in[0] == nil || in[1] == nil || !isIndex(in[1].dt) {
		return nil
	}
	data, idx := in[0], in[1]
	axis, ok := normAxis(attrInt(n, "axis", 0), len(data.dims))
	if !ok {
		return nil
	}
	es := int64(elemSize(data.dt))
	dim := data.dims[axis]
	outer := numel(data.dims[:axis])
	inner := numel(data.dims[axis+1:])
	ids := idx.ints()
	for i, v := range ids {
		if v < 0 {
			v += dim
		}
		if v < 0 || v >= dim {
			return nil
		}
		ids[i] = v
	}
	dims := append(append(append([]int64{}, data.dims[:axis]...), idx.dims...), data.dims[axis+1:]...)
	raw := make([]byte, 0, outer*int64(len(ids))*inner*es)
	for o := int64(0); o < outer; o++ {
		for _, v := range ids {
			off := ((o*dim + v) * inner) * es
			raw = append(raw, data.raw[off:off+inner*es]...)
		}
	}
	return &tensor{dt: data.dt, dims: dims, raw: raw}
}

func evalConcat(n *pb.NodeProto, in []*tensor) *tensor {
	if len(in) == 0 {
		return nil
	}
	for _, t := range in {
		if t == nil || t.dt != in[0].dt || len(t.dims) != len(in[0].dims) {
			return nil
		}
	}
	rank := len(in[0].dims)
	axis, ok := normAxis(attrInt(n, "axis", 0), rank)
	if !ok {
		return nil
	}
	dims := append([]int64{}, in[0].dims...)
	dims[axis] = 0
	for _, t := range in {
		for d := range rank {
			if d != axis && t.dims[d] != in[0].dims[d] {
				return nil
			}
		}
		dims[axis] += t.dims[axis]
	}
	es := int64(elemSize(in[0].dt))
	outer := numel(dims[:axis])
	var raw []byte
	for o := int64(0); o < outer; o++ {
		for _, t := range in {
			chunk := numel(t.dims[axis:]) * es
			raw = append(raw, t.raw[o*chunk:(o+1)*chunk]...)
		}
	}
	if raw == nil {
		raw = []byte{}
	}
	return &tensor{dt: in[0].dt, dims: dims, raw: raw}
}

func evalUnsqueeze(_ *pb.NodeProto, in []*tensor) *tensor {
	if len(in) != 2 || in[0] == nil || in[1] == nil || !isIndex(in[1].dt) {
		return nil
	}
	axes := in[1].ints()
	rank := len(in[0].dims) + len(axes)
	mark := make([]bool, rank)
	for _, a := range axes {
		ax, ok := normAxis(a, rank)
		if !ok || mark[ax] {
			return nil
		}
		mark[ax] = true
	}
	var dims []int64
	src := 0
	for d := range rank {
		if mark[d] {
			dims = append(dims, 1)
		} else {
			dims = append(dims, in[0].dims[src])
			src++
		}
	}
	return &tensor{dt: in[0].dt, dims: dims, raw: in[0].raw}
}

func evalSqueeze(_ *pb.NodeProto, in []*tensor) *tensor {
	if len(in) == 0 || len(in) > 2 || in[0] == nil {
		return nil
	}
	rank := len(in[0].dims)
	drop := make([]bool, rank)
	if len(in) == 2 && in[1] != nil {
		if !isIndex(in[1].dt) {
			return nil
		}
		for _, a := range in[1].ints() {
			ax, ok := normAxis(a, rank)
			if !ok || in[0].dims[ax] != 1 {
				return nil
			}
			drop[ax] = true
		}
	} else {
		for d, v := range in[0].dims {
			drop[d] = v == 1
		}
	}
	var dims []int64
	for d, v := range in[0].dims {
		if !drop[d] {
			dims = append(dims, v)
		}
	}
	return &tensor{dt: in[0].dt, dims: dims, raw: in[0].raw}
}

func evalReshape(n *pb.NodeProto, in []*tensor) *tensor {
	if len(in) != 2 || in[0] == nil || in[1] == nil || in[1].dt != tInt64 {
		return nil
	}
	shape := in[1].ints()
	allowZero := attrInt(n, "allowzero", 0) != 0
	infer := -1
	known := int64(1)
	dims := make([]int64, len(shape))
	for i, s := range shape {
		switch {
		case s == -1:
			if infer >= 0 {
				return nil
			}
			infer = i
			continue
		case s == 0 && !allowZero:
			if i >= len(in[0].dims) {
				return nil
			}
			s = in[0].dims[i]
		case s < 0:
			return nil
		}
		dims[i] = s
		known *= s
	}
	total := in[0].numel()
	if infer >= 0 {
		if known == 0 || total%known != 0 {
			return nil
		}
		dims[infer] = total / known
	} else if known != total {
		return nil
	}
	return &tensor{dt: in[0].dt, dims: dims, raw: in[0].raw}
}

func evalSlice(_ *pb.NodeProto, in []*tensor) *tensor {
	if len(in) < 3 || len(in) > 5 || in[0] == nil || in[1] == nil || in[2] == nil {
		return nil
	}
	for _, t := range in[1:] {
		if t != nil && !isIndex(t.dt) {
			return nil
		}
	}
	data := in[0]
	rank := len(data.dims)
	starts, ends := in[1].ints(), in[2].ints()
	if len(starts) != len(ends) {
		return nil
	}
	axes := make([]int64, len(starts))
	for i := range axes {
		axes[i] = int64(i)
	}
	if len(in) > 3 && in[3] != nil {
		axes = in[3].ints()
	}
	steps := make([]int64, len(starts))
	for i := range steps {
		steps[i] = 1
	}
	if len(in) > 4 && in[4] != nil {
		steps = in[4].ints()
	}
	if len(axes) != len(starts) || len(steps) != len(starts) {
		return nil
	}
	st := make([]int64, rank)
	step := make([]int64, rank)
	cnt := append([]int64{}, data.dims...)
	seen := make([]bool, rank)
	for d := range rank {
		step[d] = 1
	}
	for i, a := range axes {
		ax, ok := normAxis(a, rank)
		if !ok || seen[ax] || steps[i] == 0 {
			return nil
		}
		seen[ax] = true
		dim := data.dims[ax]
		s, e, k := starts[i], ends[i], steps[i]
		if s < 0 {
			s += dim
		}
		if e < 0 {
			e += dim
		}
		if k > 0 {
			s, e = max(0, min(s, dim)), max(0, min(e, dim))
		} else {
			s, e = max(-1, min(s, dim-1)), max(-1, min(e, dim-1))
		}
		var c int64
		if k > 0 && e > s {
			c = (e - s + k - 1) / k
		} else if k < 0 && s > e {
			c = (s - e + (-k) - 1) / (-k)
		}
		st[ax], step[ax], cnt[ax] = s, k, c
	}
	es := int64(elemSize(data.dt))
	srcStr := strides(data.dims)
	total := numel(cnt)
	raw := make([]byte, 0, total*es)
	idx := make([]int64, rank)
	for i := int64(0); i < total; i++ {
		off := int64(0)
		for d := range rank {
			off += (st[d] + idx[d]*step[d]) * srcStr[d]
		}
		raw = append(raw, data.raw[off*es:(off+1)*es]...)
		for d := rank - 1; d >= 0; d-- {
			idx[d]++
			if idx[d] < cnt[d] {
				break
			}
			idx[d] = 0
		}
	}
	return &tensor{dt: data.dt, dims: cnt, raw: raw}
}

// evalCast casts integer and bool tensors; float sources are left alone
// (float→int conversion is where runtimes differ on out-of-range values).
func evalCast(n *pb.NodeProto, in []*tensor) *tensor {
	if len(in) != 1 || in[0] == nil {
		return nil
	}
	src := in[0]
	switch src.dt {
	case tInt64, tInt32, tInt16, tInt8, tUint8, tUint16, tUint32, tBool:
	default:
		return nil
	}
	to := int32(attrInt(n, "to", 0))
	es := elemSize(to)
	if es == 0 {
		return nil
	}
	cnt := int(src.numel())
	out := &tensor{dt: to, dims: src.dims, raw: make([]byte, cnt*es)}
	for i := range cnt {
		v := intAt(src.raw, src.dt, i)
		switch to {
		case tFloat:
			math32 := math.Float32bits(float32(v))
			putInt(out.raw, tInt32, i, int64(math32))
		case tDouble:
			putInt(out.raw, tInt64, i, int64(math.Float64bits(float64(v))))
		case tFloat16, tBfloat16:
			return nil
		default:
			putInt(out.raw, to, i, v)
		}
	}
	return out
}

// broadcast returns the numpy-style broadcast shape of a and b.
func broadcast(a, b []int64) ([]int64, bool) {
	r := max(len(a), len(b))
	out := make([]int64, r)
	for i := range r {
		da, db := int64(1), int64(1)
		if j := len(a) - r + i; j >= 0 {
			da = a[j]
		}
		if j := len(b) - r + i; j >= 0 {
			db = b[j]
		}
		switch {
		case da == db, db == 1:
			out[i] = da
		case da == 1:
			out[i] = db
		default:
			return nil, false
		}
	}
	return out, true
}

// bindex maps a flat output index to the flat index of an operand of shape
// dims under broadcasting to out.
func bindex(i int64, out, dims []int64) int64 {
	ostr := strides(out)
	dstr := strides(dims)
	off := int64(0)
	lead := len(out) - len(dims)
	for d := range out {
		c := (i / ostr[d]) % out[d]
		if j := d - lead; j >= 0 && dims[j] != 1 {
			off += c * dstr[j]
		}
	}
	return off
}

// intBinary folds an elementwise binary op on two INT64 or two INT32
// tensors; f declines with ok=false (division by zero, overflow).
func intBinary(f func(a, b int64) (int64, bool)) evaluator {
	return func(_ *pb.NodeProto, in []*tensor) *tensor {
		if len(in) != 2 || in[0] == nil || in[1] == nil || in[0].dt != in[1].dt || !isInt(in[0].dt) {
			return nil
		}
		a, b := in[0], in[1]
		dims, ok := broadcast(a.dims, b.dims)
		if !ok {
			return nil
		}
		cnt := numel(dims)
		out := &tensor{dt: a.dt, dims: dims, raw: make([]byte, cnt*int64(elemSize(a.dt)))}
		for i := int64(0); i < cnt; i++ {
			x := intAt(a.raw, a.dt, int(bindex(i, dims, a.dims)))
			y := intAt(b.raw, b.dt, int(bindex(i, dims, b.dims)))
			v, ok := f(x, y)
			if !ok {
				return nil
			}
			// putInt wraps INT32 results like the runtime's +, -, *;
			// division overflow was declined above.
			putInt(out.raw, a.dt, int(i), v)
		}
		return out
	}
}
