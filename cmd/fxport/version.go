package main

import (
	"fmt"
	"io"

	"github.com/fxport/fxport/provenance"
)

// runVersion: fxport version — the version artifacts record, then the
// build info it comes from.
func runVersion(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("version", stderr)
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 0 {
		return usageErr("version takes no arguments")
	}
	printVersion(stdout)
	return nil
}

func printVersion(w io.Writer) {
	b := provenance.ReadBuild()
	fmt.Fprintf(w, "fxport %s\n", b)
	mod := b.Version
	if mod == "" {
		mod = "unknown (no build info)"
	}
	rev := b.Revision
	if rev == "" {
		rev = "unknown (not recorded; build with go build or go install from a git checkout)"
	} else if b.Dirty {
		rev += " (modified checkout)"
	}
	fmt.Fprintf(w, "module:   %s %s\nrevision: %s\ngo:       %s\n", provenance.Module, mod, rev, b.GoVersion)
}
