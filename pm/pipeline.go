package pm

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Pipeline is an ordered list of pass instances, grouped by stage, for one
// target and backend. Its text form (see the package documentation) prints
// back exactly: ParsePipeline(pl.String()) rebuilds pl.
type Pipeline struct {
	Target  string
	Backend string
	Groups  []Group
	// Catalog resolves pass names; nil means Default.
	Catalog *Catalog
}

// Group is the run of pass instances of one stage.
type Group struct {
	// Stage is the qualified stage name, "<owner>.<stage>".
	Stage     string
	Instances []Instance
}

// Instance is one occurrence of a pass in a pipeline.
type Instance struct {
	Name    string
	Options Options
	// Pass is the declaration Name resolves to; ParsePipeline and Build
	// fill it in, and Run resolves a copy of a pipeline built by hand.
	Pass *Pass
}

// Option is one key=value pass option from pipeline text.
type Option struct{ Key, Value string }

// Options are sorted by key, without duplicates.
type Options []Option

// Get returns the value of key.
func (o Options) Get(key string) (string, bool) {
	for _, x := range o {
		if x.Key == key {
			return x.Value, true
		}
	}
	return "", false
}

func (pl *Pipeline) catalog() *Catalog {
	if pl.Catalog == nil {
		return Default
	}
	return pl.Catalog
}

// Instances returns the instances in order, with the stage of each.
func (pl *Pipeline) Instances() []Placed {
	var out []Placed
	for _, g := range pl.Groups {
		for _, in := range g.Instances {
			out = append(out, Placed{Stage: g.Stage, Instance: in})
		}
	}
	return out
}

// Placed is an instance with the stage group it sits in.
type Placed struct {
	Stage string
	Instance
}

// Len is the number of instances.
func (pl *Pipeline) Len() int {
	n := 0
	for _, g := range pl.Groups {
		n += len(g.Instances)
	}
	return n
}

// Only returns a copy of pl keeping just the instances of the named passes
// (for replaying a reproducer's failed pass); empty groups are dropped.
func (pl *Pipeline) Only(names ...string) *Pipeline {
	out := &Pipeline{Target: pl.Target, Backend: pl.Backend, Catalog: pl.Catalog}
	for _, g := range pl.Groups {
		var keep []Instance
		for _, in := range g.Instances {
			if contains(names, in.Name) {
				keep = append(keep, in)
			}
		}
		if len(keep) > 0 {
			out.Groups = append(out.Groups, Group{Stage: g.Stage, Instances: keep})
		}
	}
	return out
}

// header is the pipeline text's leading name: the target for dynamo and
// onnx, the backend for ExecuTorch ("executorch.xnnpack").
func header(target, backend string) string {
	if target == TargetExecuTorch {
		return backend
	}
	return target
}

// parseHeader inverts header.
func parseHeader(h string) (target, backend string, err error) {
	switch {
	case h == TargetDynamo || h == TargetONNX:
		b, err := resolveExport(h, "")
		return h, b, err
	case strings.HasPrefix(h, TargetExecuTorch+"."):
		b, err := resolveExport(TargetExecuTorch, h)
		return TargetExecuTorch, b, err
	case h == TargetExecuTorch:
		return "", "", fmt.Errorf("an executorch pipeline names its backend (%s)", strings.Join(exportBackends(TargetExecuTorch), ", "))
	}
	return "", "", fmt.Errorf("unknown pipeline target %q", h)
}

var bareValueRE = regexp.MustCompile(`^[A-Za-z0-9_.:/+-]+$`)

// String renders the pipeline text: "onnx: dynamo.state-cleanup(a),
// onnx.fx-node-fixes(b, dce{aggressive=true})".
func (pl *Pipeline) String() string {
	var b strings.Builder
	b.WriteString(header(pl.Target, pl.Backend) + ":")
	for i, g := range pl.Groups {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(" " + g.Stage + "(")
		for j, in := range g.Instances {
			if j > 0 {
				b.WriteString(", ")
			}
			b.WriteString(in.String())
		}
		b.WriteByte(')')
	}
	return b.String()
}

// String renders one instance: name or name{k=v k2=v2}.
func (in Instance) String() string {
	if len(in.Options) == 0 {
		return in.Name
	}
	var b strings.Builder
	b.WriteString(in.Name + "{")
	for i, o := range in.Options {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(o.Key + "=")
		if bareValueRE.MatchString(o.Value) {
			b.WriteString(o.Value)
		} else {
			b.WriteString(strconv.Quote(o.Value))
		}
	}
	b.WriteByte('}')
	return b.String()
}
