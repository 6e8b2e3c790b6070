package pm

import (
	"fmt"
	"sort"
	"strings"
	"time"
)

// Report is what one Run did.
type Report struct {
	Target, Backend string
	// Pipeline is the pipeline text.
	Pipeline string
	Passes   []PassReport
	// Fired lists what the passes, patches and fixes acted on, in order.
	Fired []Firing
	// Unrun lists installed patches whose stage driver the pipeline lacks.
	Unrun []UnrunPatch
}

// UnrunPatch is an installed patch the pipeline never applies.
type UnrunPatch struct{ Patch, Stage string }

// PassReport is one pass instance's entry in a Report.
type PassReport struct {
	Name  string
	Kind  Kind
	Stage string
	// Disabled passes were skipped by Config.Disable.
	Disabled bool
	Changed  bool
	// Duration is measured when Config.Time is set.
	Duration time.Duration
	// Alloc and Mallocs are runtime.MemStats deltas (TotalAlloc, Mallocs),
	// measured when Config.Mem is set.
	Alloc, Mallocs uint64
	Stats          []Stat
}

// Stat is a statistics counter a pass set with Ctx.Stat.
type Stat struct {
	Name  string
	Value int64
}

func sortedStats(m map[string]int64) []Stat {
	out := make([]Stat, 0, len(m))
	for _, k := range sortedKeys(m) {
		out = append(out, Stat{k, m[k]})
	}
	return out
}

// Stat returns a pass's counter by name.
func (r *PassReport) Stat(name string) int64 {
	i := sort.Search(len(r.Stats), func(i int) bool { return r.Stats[i].Name >= name })
	if i < len(r.Stats) && r.Stats[i].Name == name {
		return r.Stats[i].Value
	}
	return 0
}

// Pass returns the report of the first instance of the named pass.
func (r *Report) Pass(name string) (*PassReport, bool) {
	for i := range r.Passes {
		if r.Passes[i].Name == name {
			return &r.Passes[i], true
		}
	}
	return nil, false
}

// String is the deterministic rendering without timings (Text(false)).
func (r *Report) String() string { return r.Text(false) }

// Text renders the report, one line per pass, statistic and firing. With
// measurements, durations and allocation figures are included; without,
// the text is deterministic and fit for goldens.
func (r *Report) Text(measurements bool) string {
	var b strings.Builder
	fmt.Fprintf(&b, "pipeline %s\n", r.Pipeline)
	for i, p := range r.Passes {
		state := "unchanged"
		switch {
		case p.Disabled:
			state = "disabled"
		case p.Changed:
			state = "changed"
		}
		fmt.Fprintf(&b, "%3d %s [%s, %s] %s", i+1, p.Name, p.Kind, p.Stage, state)
		if measurements && !p.Disabled {
			fmt.Fprintf(&b, " time=%s alloc=%dB mallocs=%d", p.Duration, p.Alloc, p.Mallocs)
		}
		b.WriteByte('\n')
		for _, s := range p.Stats {
			fmt.Fprintf(&b, "      %s = %d\n", s.Name, s.Value)
		}
	}
	for _, f := range r.Fired {
		fmt.Fprintf(&b, "fired %s\n", f)
	}
	for _, u := range r.Unrun {
		fmt.Fprintf(&b, "unrun patch %q: the pipeline has no %s\n", u.Patch, PatchDriverName(u.Stage))
	}
	return b.String()
}
