package fxtext

import (
	"fmt"
	"strings"

	"github.com/fxport/fxport/ir"
)

// ParseInputTypes reads "x=f32[2,3],y=i64[4]" (IR type spellings, the
// annotations torch prints: "f32[s0, 4]", "Sym(s0)", "i64[]") into a map for
// Options.InputTypes or Retype.
func ParseInputTypes(s string) (map[string]ir.Type, error) {
	out := map[string]ir.Type{}
	for _, part := range splitTop(s) {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		eq := strings.IndexByte(part, '=')
		if eq <= 0 {
			return nil, fmt.Errorf("input type %q: want NAME=TYPE", part)
		}
		name, text := strings.TrimSpace(part[:eq]), strings.TrimSpace(part[eq+1:])
		t, _, ok, err := annotType(text)
		if err == nil && !ok {
			err = fmt.Errorf("not a type")
		}
		if err != nil {
			return nil, fmt.Errorf("input type of %s (%q): %v", name, text, err)
		}
		if _, dup := out[name]; dup {
			return nil, fmt.Errorf("input %s is given two types", name)
		}
		out[name] = t
	}
	return out, nil
}

// splitTop splits at commas outside brackets.
func splitTop(s string) []string {
	var out []string
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '[', '(', '<', '{':
			depth++
		case ']', ')', '>', '}':
			depth--
		case ',':
			if depth == 0 {
				out = append(out, s[start:i])
				start = i + 1
			}
		}
	}
	return append(out, s[start:])
}
