package pm

import (
	"github.com/fxport/fxport/provenance"
)

// ReportJSON is a Report as the JSON document of `fxport export
// --report-json` (one entry of its "targets" list; the schema is in
// docs/report-json.md). Field names and meanings are stable: new fields
// may be added, none renamed or removed.
type ReportJSON struct {
	Target   string           `json:"target"`
	Backend  string           `json:"backend"`
	Pipeline string           `json:"pipeline"`
	Passes   []PassReportJSON `json:"passes"`
	Fired    []FiringJSON     `json:"fired"`
	Unrun    []UnrunPatchJSON `json:"unrun_patches"`
}

// PassReportJSON is one pass instance; TimeNS is present when durations
// were measured (--time), AllocBytes and Mallocs when allocations were
// (--mem).
type PassReportJSON struct {
	Index      int              `json:"index"`
	Name       string           `json:"name"`
	Kind       string           `json:"kind"`
	Stage      string           `json:"stage"`
	Disabled   bool             `json:"disabled"`
	Changed    bool             `json:"changed"`
	TimeNS     *int64           `json:"time_ns,omitempty"`
	AllocBytes *uint64          `json:"alloc_bytes,omitempty"`
	Mallocs    *uint64          `json:"mallocs,omitempty"`
	Stats      map[string]int64 `json:"stats"`
}

// FiringJSON is one Firing: which pass ran which entry (and its catalog
// ID) on which node.
type FiringJSON struct {
	Pass   string `json:"pass"`
	Kind   string `json:"kind"`
	Entry  string `json:"entry"`
	ID     string `json:"id,omitempty"`
	Graph  string `json:"graph,omitempty"`
	Node   string `json:"node,omitempty"`
	Detail string `json:"detail,omitempty"`
}

// UnrunPatchJSON is an installed patch whose stage driver the pipeline lacks.
type UnrunPatchJSON struct {
	Patch string `json:"patch"`
	Stage string `json:"stage"`
}

// JSON returns the report as its JSON document; timeNS and mem say which
// measurements to include (those Config.Time and Config.Mem took).
func (r *Report) JSON(time, mem bool) ReportJSON {
	out := ReportJSON{Target: r.Target, Backend: r.Backend, Pipeline: r.Pipeline,
		Passes: []PassReportJSON{}, Fired: []FiringJSON{}, Unrun: []UnrunPatchJSON{}}
	for i, p := range r.Passes {
		pj := PassReportJSON{Index: i + 1, Name: p.Name, Kind: p.Kind.String(), Stage: p.Stage,
			Disabled: p.Disabled, Changed: p.Changed, Stats: map[string]int64{}}
		if time && !p.Disabled {
			ns := p.Duration.Nanoseconds()
			pj.TimeNS = &ns
		}
		if mem && !p.Disabled {
			a, m := p.Alloc, p.Mallocs
			pj.AllocBytes, pj.Mallocs = &a, &m
		}
		for _, s := range p.Stats {
			pj.Stats[s.Name] = s.Value
		}
		out.Passes = append(out.Passes, pj)
	}
	for _, f := range r.Fired {
		out.Fired = append(out.Fired, FiringJSON{Pass: f.Pass, Kind: f.Kind.String(), Entry: f.Entry, ID: f.ID, Graph: f.Graph, Node: f.Node, Detail: f.Detail})
	}
	for _, u := range r.Unrun {
		out.Unrun = append(out.Unrun, UnrunPatchJSON{Patch: u.Patch, Stage: u.Stage})
	}
	return out
}

// Provenance is what an artifact of this run records: version, the
// pipeline text and the distinct workarounds that fired (in the order
// they first fired, with how often).
func (r *Report) Provenance(version string) provenance.Record {
	rec := provenance.Record{Version: version, Pipeline: r.Pipeline, Workarounds: []provenance.Workaround{}}
	index := map[[3]string]int{}
	for _, f := range r.Fired {
		k := [3]string{f.Kind.String(), f.Entry, f.ID}
		if i, ok := index[k]; ok {
			rec.Workarounds[i].Count++
			continue
		}
		index[k] = len(rec.Workarounds)
		rec.Workarounds = append(rec.Workarounds, provenance.Workaround{ID: f.ID, Name: f.Entry, Kind: f.Kind.String(), Count: 1})
	}
	return rec
}
