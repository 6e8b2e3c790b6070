package pt2

// The torch side of the unpickler: storage records and the callables
// torch.save uses to rebuild tensors and dicts.

import (
	"fmt"
	"strconv"
	"strings"
)

// persistent resolves a persistent id: only torch's storage records.
func (u *unpickler) persistent(pid any) (any, error) {
	t, ok := pid.(pyTuple)
	if !ok || len(t) != 5 || t[0] != "storage" {
		return nil, u.errorf("persistent id %v is not a ('storage', type, key, location, numel) record", describe(pid))
	}
	g, ok := t[1].(*pyGlobal)
	if !ok {
		return nil, u.errorf("storage type is a %T, not a class", t[1])
	}
	dt, known := storageDTypes[g.name]
	if !known || g.module != "torch" {
		return nil, u.errorf("unsupported storage type %s", g)
	}
	key, ok1 := t[2].(string)
	loc, ok2 := t[3].(string)
	numel, ok3 := t[4].(int64)
	if !ok1 || !ok2 || !ok3 || numel < 0 {
		return nil, u.errorf("malformed storage record %v", describe(pid))
	}
	if s, seen := u.storages[key]; seen && s.dtype == dt {
		return s, nil
	}
	s := &pyStorage{dtype: dt, key: key, location: loc, numel: numel}
	u.storages[key] = s
	return s, nil
}

// call interprets the few callables torch.save uses for tensors and dicts.
func (u *unpickler) call(fn, args any) (any, error) {
	g, ok := fn.(*pyGlobal)
	if !ok {
		return nil, u.errorf("call of a %T", fn)
	}
	a, ok := args.(pyTuple)
	if !ok {
		return nil, u.errorf("call of %s with %T arguments", g, args)
	}
	switch g.String() {
	case "collections.OrderedDict", "builtins.dict", "__builtin__.dict":
		if len(a) != 0 {
			return nil, u.errorf("%s with arguments is not supported", g)
		}
		return &pyDict{}, nil
	case "torch._utils._rebuild_tensor_v2", "torch._utils._rebuild_tensor":
		return u.rebuildTensor(g, a)
	case "torch._utils._rebuild_parameter", "torch._utils._rebuild_parameter_with_state":
		if len(a) < 2 {
			return nil, u.errorf("%s needs (data, requires_grad, ...)", g)
		}
		t, ok := a[0].(*pyTensor)
		if !ok {
			return nil, u.errorf("%s of a %T", g, a[0])
		}
		p := *t
		p.param = true
		if rg, ok := a[1].(bool); ok {
			p.requiresGrad = rg
		}
		return &p, nil
	}
	return nil, u.errorf("call to %s is not supported (only tensors and dicts are read)", g)
}

func (u *unpickler) rebuildTensor(g *pyGlobal, a pyTuple) (any, error) {
	if len(a) < 4 {
		return nil, u.errorf("%s needs (storage, offset, size, stride, ...)", g)
	}
	s, ok := a[0].(*pyStorage)
	if !ok {
		return nil, u.errorf("%s of a %T, not a storage", g, a[0])
	}
	off, ok := a[1].(int64)
	if !ok || off < 0 {
		return nil, u.errorf("%s: bad storage offset %v", g, describe(a[1]))
	}
	size, err := u.intTuple(a[2], "size")
	if err != nil {
		return nil, err
	}
	stride, err := u.intTuple(a[3], "stride")
	if err != nil {
		return nil, err
	}
	if len(size) != len(stride) {
		return nil, u.errorf("%s: %d sizes but %d strides", g, len(size), len(stride))
	}
	t := &pyTensor{storage: s, offset: off, size: size, stride: stride}
	if len(a) > 4 {
		if rg, ok := a[4].(bool); ok {
			t.requiresGrad = rg
		}
	}
	return t, nil
}

func (u *unpickler) intTuple(v any, what string) ([]int64, error) {
	t, ok := v.(pyTuple)
	if !ok {
		return nil, u.errorf("tensor %s is a %T, not a tuple", what, v)
	}
	out := make([]int64, len(t))
	for i, x := range t {
		n, ok := x.(int64)
		if !ok {
			return nil, u.errorf("tensor %s element %d is a %T", what, i, x)
		}
		out[i] = n
	}
	return out, nil
}

// describe spells a pickled value for an error message (nesting and
// length cut short).
func describe(v any) string { return describeDepth(v, 0) }

func describeDepth(v any, depth int) string {
	switch v := v.(type) {
	case pyTuple:
		if depth > 3 {
			return "(…)"
		}
		var parts []string
		for i, x := range v {
			if i == 8 {
				parts = append(parts, "…")
				break
			}
			parts = append(parts, describeDepth(x, depth+1))
		}
		return "(" + strings.Join(parts, ", ") + ")"
	case string:
		if len(v) > 64 {
			v = v[:64] + "…"
		}
		return strconv.Quote(v)
	case *pyGlobal:
		return v.String()
	case nil:
		return "None"
	case bool, int64, float64:
		return fmt.Sprint(v)
	default:
		return fmt.Sprintf("a %T", v)
	}
}
