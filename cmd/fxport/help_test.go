package main

import (
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestEveryCommandHasHelp runs "fxport --help", "-h", "help" and every
// command's --help, -h and "fxport help COMMAND": each exits 0 and prints a
// synopsis ("usage: fxport COMMAND"), and each command's help its flags
// and at least one example of that command. (capture's help is its Python
// front door's argparse help: same synopsis and examples, argparse's layout.)
func TestEveryCommandHasHelp(t *testing.T) {
	for _, args := range [][]string{{"--help"}, {"-h"}, {"help"}} {
		out, errOut, code := fxport(t, args...)
		require.Equal(t, 0, code, "%v: %s", args, errOut)
		require.Contains(t, out, "usage: fxport COMMAND", args)
		for _, c := range commands() {
			require.Contains(t, out, "  "+c.name+" ", args)
		}
	}
	for _, c := range commands() {
		var helps []string
		for _, args := range [][]string{{c.name, "--help"}, {c.name, "-h"}, {"help", c.name}, {c.name, "x.pt2", "--help"}} {
			out, errOut, code := fxport(t, args...)
			require.Equal(t, 0, code, "%v: %s", args, errOut)
			helps = append(helps, out)
		}
		for _, h := range helps[1:] {
			require.Equal(t, helps[0], h, c.name)
		}
		out := helps[0]
		require.True(t, strings.HasPrefix(out, "usage: fxport "+c.name), "%s --help: no synopsis:\n%s", c.name, out)
		require.Regexp(t, regexp.MustCompile(`(?mi)^Examples:\n  fxport `+regexp.QuoteMeta(c.name)+`( |$)`), out, c.name)
	}
	for _, f := range []string{"target", "o", "report-json", "exclude-patch", "time"} {
		require.Contains(t, commandFlags(t, "export"), f)
	}
	for name := range commandHelp {
		found := false
		for _, c := range commands() {
			found = found || c.name == name
		}
		require.True(t, found, "commandHelp has %q, which is no command", name)
	}
}

// commandFlags lists the flags a command's help shows, with their kind.
func commandFlags(t *testing.T, name string) map[string]string {
	t.Helper()
	out, _, _ := fxport(t, name, "--help")
	flags := map[string]string{}
	for _, m := range regexp.MustCompile(`(?m)^  --?([a-z0-9-]+)( [a-z0-9]+)?$`).FindAllStringSubmatch(out, -1) {
		flags[m[1]] = strings.TrimSpace(m[2])
	}
	return flags
}

// TestFlagNamesAreConsistent checks the flags across commands: one
// concept, one name. Names that differ only in a plural or in dashes
// (--exclude-patch, --exclude-patches) are the same concept; so are the
// known synonyms below. A name means one kind of value everywhere.
func TestFlagNamesAreConsistent(t *testing.T) {
	// Synonyms that must not both be visible: the first is the name.
	synonyms := map[string]string{"tol": "atol", "inputs-dir": "inputs", "out": "o", "output": "o", "exclude": "exclude-patch", "include": "include-patch", "fixture": "io"}
	kinds := map[string]string{}
	where := map[string][]string{}
	norm := map[string]string{}
	var names []string
	for _, c := range commands() {
		for f, kind := range commandFlags(t, c.name) {
			if canonical, ok := synonyms[f]; ok {
				t.Errorf("%s --%s: the project's name for this is --%s", c.name, f, canonical)
			}
			if k, ok := kinds[f]; ok && k != kind {
				t.Errorf("--%s takes %q on %v but %q on %s", f, k, where[f], kind, c.name)
			}
			if _, ok := kinds[f]; !ok {
				names = append(names, f)
			}
			kinds[f] = kind
			where[f] = append(where[f], c.name)
		}
	}
	sort.Strings(names)
	for _, f := range names {
		n := strings.TrimSuffix(strings.ReplaceAll(f, "-", ""), "s")
		if other, ok := norm[n]; ok {
			t.Errorf("--%s (%v) and --%s (%v) name the same thing differently", other, where[other], f, where[f])
		}
		norm[n] = f
	}
	// The patch selection flags are the same on export, explore and bisect, and the
	// old plural names still work (hidden).
	for _, f := range []string{"exclude-patch", "include-patch"} {
		require.ElementsMatch(t, []string{"export", "explore", "bisect"}, where[f], f)
	}
	_, errOut, code := fxport(t, "bisect", example, "--exclude-patches", "ONNX-P01", "--target", "nope")
	require.Equal(t, 2, code)
	require.Contains(t, errOut, `unknown target "nope"`, "the hidden alias parses")
}
