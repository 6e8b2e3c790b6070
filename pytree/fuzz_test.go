package pytree

import (
	"errors"
	"testing"
)

// FuzzDecode checks that Decode never panics, that every failure is an
// *Error with a JSON path, and that a decoded spec is consistent: one path
// and one key per child, and leaf names that can be computed.
func FuzzDecode(f *testing.F) {
	cacheCtx, cacheKids := dynamicCache(1)
	seeds := []string{
		`[1, ` + leaf + `]`,
		`[1, {"type": "builtins.tuple", "context": "null", "children_spec": [{"type": "builtins.tuple", "context": "null", "children_spec": [{"type": null, "context": null, "children_spec": []}]}, {"type": "builtins.dict", "context": "[]", "children_spec": []}]}]`,
		spec(node(TypeDict, `["a", 1, null, true]`, leaves(4)...)),
		spec(node("transformers.cache_utils:DynamicCache", cacheCtx, cacheKids...)),
		spec(node("m.Out", `["logits", "past"]`, leaf, leaf)),
		spec(rawNode(TypeNamedTuple, `"torch.return_types.max"`, leaf, leaf)),
		spec(rawNode(TypeDefaultDict, `{"dict_context": ["k"]}`, leaf)),
		spec(node("m.D", `[["a"], []]`, leaf)),
		`[1, {"type": null}]`,
		`[`,
	}
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		s, err := Decode(in)
		if err != nil {
			var pe *Error
			if !errors.As(err, &pe) || pe.Path == "" {
				t.Fatalf("error without a JSON path: %v", err)
			}
			return
		}
		var check func(n *Spec)
		check = func(n *Spec) {
			if n.IsLeaf() {
				if len(n.Children) != 0 {
					t.Fatal("leaf with children")
				}
				return
			}
			if len(n.ChildPaths) != len(n.Children) || len(n.ChildKeys) != len(n.Children) {
				t.Fatalf("%s: %d children, %d paths, %d keys", n.Type, len(n.Children), len(n.ChildPaths), len(n.ChildKeys))
			}
			for _, c := range n.Children {
				check(c)
			}
		}
		check(s)
		ls := s.Leaves()
		if len(ls) != s.NumLeaves() {
			t.Fatalf("Leaves() = %d, NumLeaves() = %d", len(ls), s.NumLeaves())
		}
		_, _ = OutputNames(s)
		ph := make([]string, len(ls))
		for i := range ph {
			ph[i] = "p"
		}
		_, _ = InputNames(s, ph)
	})
}
