package provenance

import (
	"runtime/debug"
	"testing"
)

func TestBuildString(t *testing.T) {
	rev := []debug.BuildSetting{{Key: "vcs.revision", Value: "0123456789abcdef0123"}, {Key: "vcs.modified", Value: "true"}}
	cases := []struct {
		name string
		bi   debug.BuildInfo
		want string
	}{
		{"checkout, dirty", debug.BuildInfo{Main: debug.Module{Path: Module, Version: "(devel)"}, Settings: rev}, "devel+0123456789ab-dirty"},
		{"checkout, clean", debug.BuildInfo{Main: debug.Module{Path: Module, Version: "(devel)"}, Settings: rev[:1]}, "devel+0123456789ab"},
		{"release", debug.BuildInfo{Main: debug.Module{Path: Module, Version: "v1.4.0"}}, "v1.4.0"},
		{"dependency", debug.BuildInfo{Main: debug.Module{Path: "example.com/app", Version: "v0.1.0"}, Deps: []*debug.Module{{Path: "other/x", Version: "v9.9.9"}, {Path: Module, Version: "v1.2.3"}}}, "v1.2.3"},
		{"no info", debug.BuildInfo{}, "devel"},
	}
	for _, c := range cases {
		if got := fromInfo(&c.bi).String(); got != c.want {
			t.Errorf("%s: got %q, want %q", c.name, got, c.want)
		}
	}
	if b := fromInfo(&cases[0].bi); !b.Dirty || b.Revision != "0123456789abcdef0123" {
		t.Errorf("dirty checkout read as %+v", b)
	}
}

func TestRecordNames(t *testing.T) {
	r := Record{Workarounds: []Workaround{{ID: "ONNX-P01", Name: "where-promote", Kind: "patch", Count: 2}, {Name: "dce", Kind: "pass", Count: 1}}}
	if got, want := r.Names(), "ONNX-P01 where-promote, dce"; got != want {
		t.Fatalf("Names() = %q, want %q", got, want)
	}
}
