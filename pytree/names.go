package pytree

import (
	"fmt"
	"strings"
)

// BareOutputName names the output of a program whose out_spec is a single
// leaf (a model returning one tensor), as the Python exporter does.
const BareOutputName = "output"

// IsArgsKwargs reports whether s is the root of an export's in_spec: the
// pair (args tuple, kwargs dict).
func (s *Spec) IsArgsKwargs() bool {
	if s.Type != TypeTuple || len(s.Children) != 2 {
		return false
	}
	a, k := s.Children[0], s.Children[1]
	return (a.Type == TypeTuple || a.Type == TypeList) && (k.Type == TypeDict || k.Type == TypeOrderedDict || k.Type == TypeImmutableDict)
}

// InputNames names the leaves of an export's in_spec, one name per leaf in
// flattening order. placeholders are the names of the graph inputs the
// leaves became (the program's user inputs, in order); their number must
// equal the number of leaves.
//
// Keyword arguments are named by their dotted path ("input_ids",
// "past_key_values.layers.0.keys"). Positional arguments are not named by
// the spec: a tensor argument keeps its placeholder's name (torch.export
// names it after the forward parameter); the leaves of a container
// argument are named "<parameter>.<path>", the parameter name being
// recovered from the first leaf's placeholder, which torch.export spells
// "<parameter>_<key>_<key>" (lower case); when that fails each leaf keeps
// its placeholder's name. A spec that is not an (args, kwargs) pair is named
// like an output, a bare leaf by its placeholder.
func InputNames(s *Spec, placeholders []string) ([]string, error) {
	leaves := s.Leaves()
	if len(leaves) != len(placeholders) {
		return nil, fmt.Errorf("the spec has %d leaves for %d user inputs", len(leaves), len(placeholders))
	}
	var names []string
	if !s.IsArgsKwargs() {
		for i, l := range leaves {
			if n := l.Name(); n != "" {
				names = append(names, n)
			} else {
				names = append(names, placeholders[i])
			}
		}
		return names, checkUnique(names)
	}
	args, kwargs := s.Children[0], s.Children[1]
	next := 0
	for _, arg := range args.Children {
		sub := arg.Leaves()
		ph := placeholders[next : next+len(sub)]
		next += len(sub)
		if arg.IsLeaf() {
			names = append(names, ph[0])
			continue
		}
		if len(sub) == 0 {
			continue
		}
		base, ok := parameterName(ph[0], sub[0].TorchPath)
		for j, l := range sub {
			if ok {
				names = append(names, base+"."+l.Name())
			} else {
				names = append(names, ph[j])
			}
		}
	}
	for _, l := range kwargs.Leaves() {
		names = append(names, l.Name())
	}
	return names, checkUnique(names)
}

// parameterName strips torch.export's key suffix from a placeholder name:
// "x_0_key" with the key path [0, key] gives "x".
func parameterName(placeholder string, torchPath []Key) (string, bool) {
	var b strings.Builder
	for _, k := range torchPath {
		b.WriteByte('_')
		b.WriteString(strings.ToLower(torchKeyText(k)))
	}
	suffix := b.String()
	if suffix == "" || len(placeholder) <= len(suffix) || !strings.HasSuffix(placeholder, suffix) {
		return "", false
	}
	return placeholder[:len(placeholder)-len(suffix)], true
}

// torchKeyText is how torch.export spells a key in a placeholder name:
// indices as numbers, dict keys with every character outside
// [A-Za-z0-9_] replaced by '_', attribute names as they are.
func torchKeyText(k Key) string {
	switch k.Kind {
	case SequenceKey:
		return k.String()
	case MappingKey:
		return strings.Map(func(r rune) rune {
			if r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
				return r
			}
			return '_'
		}, k.Name)
	}
	return k.Name
}

// OutputNames names the leaves of an out_spec, one name per leaf in
// flattening order: dotted paths ("logits", "past_key_values.layers.0.keys",
// "0" for the first element of a returned tuple), and BareOutputName when
// the whole output is one leaf.
func OutputNames(s *Spec) ([]string, error) {
	if s.IsLeaf() {
		return []string{BareOutputName}, nil
	}
	var names []string
	for _, l := range s.Leaves() {
		names = append(names, l.Name())
	}
	return names, checkUnique(names)
}

// checkUnique rejects two leaves with the same name (dict keys 1 and "1").
func checkUnique(names []string) error {
	seen := make(map[string]int, len(names))
	for i, n := range names {
		if j, dup := seen[n]; dup {
			return fmt.Errorf("leaves %d and %d are both named %q", j, i, n)
		}
		seen[n] = i
	}
	return nil
}
