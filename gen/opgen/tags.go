package main

import (
	"fmt"
	"strings"
)

// ParseTags reads the tag list (gen/torchtags.spec, written by
// gen/torchtags/torchtags.py from torch's operator registry): lines of
// `<IR op name> <tag> ...`. It returns the tags of each op.
func ParseTags(file string, src []byte) (map[string][]string, error) {
	out := map[string][]string{}
	var errs ErrorList
	for i, raw := range strings.Split(string(src), "\n") {
		line := strings.TrimSpace(stripComment(raw))
		if line == "" {
			continue
		}
		f := strings.Fields(line)
		if len(f) < 2 {
			errs = append(errs, &SpecError{File: file, Line: i + 1, Msg: fmt.Sprintf("%q: want <op> <tag> ...", line)})
			continue
		}
		for _, tag := range f[1:] {
			if !tagProps[tag] {
				errs = append(errs, &SpecError{File: file, Line: i + 1, Msg: fmt.Sprintf("unknown tag %q", tag)})
			}
		}
		if _, dup := out[f[0]]; dup {
			errs = append(errs, &SpecError{File: file, Line: i + 1, Msg: f[0] + " listed twice"})
		}
		out[f[0]] = f[1:]
	}
	if len(errs) > 0 {
		return nil, errs
	}
	return out, nil
}

// MergeTags sets the flags of the tag list on the spec's ops it names;
// names the spec lacks are torch ops the IR does not know and are skipped.
func (spec *Spec) MergeTags(tags map[string][]string) {
	for _, op := range spec.Ops {
		for _, tag := range tags[op.Name] {
			op.Props[tag] = true
		}
	}
}
