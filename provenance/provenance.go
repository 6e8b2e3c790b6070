// Package provenance says which fxport built an artifact and how: the
// module version and VCS revision from the Go build info, and the record
// (version, pipeline, workarounds that fired) that emitters store in
// ONNX metadata_props and in the ExecuTorch export-metadata method.
package provenance

import (
	"runtime/debug"
	"strings"
)

// Module is the module path whose version Build reports.
const Module = "github.com/fxport/fxport"

// Build is what the Go toolchain recorded about the running binary.
type Build struct {
	// Version is the module version ("v1.2.0"; "(devel)" for a build
	// from a checkout; "" when the binary has no build info).
	Version string
	// Revision is the VCS commit ("" when not recorded, as in go test).
	Revision string
	// Dirty reports uncommitted changes in the checkout at build time.
	Dirty bool
	// GoVersion is the toolchain that built the binary.
	GoVersion string
}

// ReadBuild returns the build info of fxport in the running binary: the
// main module when fxport is the command, the dependency otherwise.
func ReadBuild() Build {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return Build{}
	}
	return fromInfo(bi)
}

func fromInfo(bi *debug.BuildInfo) Build {
	b := Build{GoVersion: bi.GoVersion}
	switch {
	case bi.Main.Path == Module:
		b.Version = bi.Main.Version
	default:
		for _, d := range bi.Deps {
			if d.Path == Module {
				b.Version = d.Version
				if d.Replace != nil && d.Replace.Version != "" {
					b.Version = d.Replace.Version
				}
			}
		}
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			b.Revision = s.Value
		case "vcs.modified":
			b.Dirty = s.Value == "true"
		}
	}
	return b
}

// String is the version as artifacts record it: the module version when it
// is a release ("v1.2.0"), else "devel"; then "+" and the first 12 digits
// of the revision, and "-dirty" for a build from a modified checkout
// ("devel+0123456789ab-dirty").
func (b Build) String() string {
	v := b.Version
	if v == "" || v == "(devel)" {
		v = "devel"
	}
	if b.Revision != "" {
		r := b.Revision
		if len(r) > 12 {
			r = r[:12]
		}
		v += "+" + r
		if b.Dirty {
			v += "-dirty"
		}
	}
	return v
}

// Version is ReadBuild().String(): what artifacts record as the producer
// version.
func Version() string { return ReadBuild().String() }

// Record is what an artifact records of how it was made.
type Record struct {
	// Version is the fxport version (Version()).
	Version string `json:"fxport_version"`
	// Pipeline is the pipeline text that ran.
	Pipeline string `json:"pipeline"`
	// Workarounds are the distinct workarounds that fired, in the order
	// they first fired.
	Workarounds []Workaround `json:"workarounds"`
}

// Workaround is one patch, fix or pass that acted on the program, with the
// number of nodes (or program-level actions) it acted on.
type Workaround struct {
	ID    string `json:"id,omitempty"`
	Name  string `json:"name"`
	Kind  string `json:"kind"`
	Count int    `json:"count"`
}

// Names lists the workarounds as "ID name" (or the name alone), joined by
// ", "; "" when none fired.
func (r Record) Names() string {
	var s []string
	for _, w := range r.Workarounds {
		if w.ID != "" {
			s = append(s, w.ID+" "+w.Name)
		} else {
			s = append(s, w.Name)
		}
	}
	return strings.Join(s, ", ")
}
