// Package goldenfile reads fxport's golden test inputs: IR text files whose
// leading comment lines configure a run (see package tests for the format),
// possibly holding several cases separated by a "# -----" line. The golden
// harness (tests/golden_test.go) and the differential harness (difftest)
// both read cases through it, so they agree on what each case runs.
package goldenfile

import (
	"fmt"
	"strings"

	"github.com/fxport/fxport/pm"
)

// Separator is the line between two cases of one file.
const Separator = "# -----"

// Case is one program with its run configuration.
type Case struct {
	// File is the file the case comes from; Name is "<file> case <n>".
	File, Name string
	// Header holds the recognised header lines (key: value); keys from the
	// first case apply to every case of the file unless a case overrides them.
	Header map[string]string
	// Src is the case's text (header comments included), as ir.Parse reads it.
	Src string
}

// HeaderKeys are the header keys a case may set.
var HeaderKeys = []string{"target", "backend", "passes", "pipeline", "exclude-patches", "error"}

// IsHeaderKey reports whether k is a recognised header key.
func IsHeaderKey(k string) bool {
	for _, h := range HeaderKeys {
		if h == k {
			return true
		}
	}
	return false
}

// Split splits a file's text on separator lines and reads each case's header.
func Split(file, text string) []Case {
	var cases []Case
	common := map[string]string{}
	for i, part := range strings.Split(text, Separator+"\n") {
		h := map[string]string{}
		for k, v := range common {
			h[k] = v
		}
		for _, line := range strings.Split(part, "\n") {
			if !strings.HasPrefix(line, "#") {
				break
			}
			if k, v, ok := strings.Cut(strings.TrimSpace(strings.TrimPrefix(line, "#")), ":"); ok && IsHeaderKey(k) {
				h[k] = strings.TrimSpace(v)
				if i == 0 {
					common[k] = h[k]
				}
			}
		}
		cases = append(cases, Case{File: file, Name: fmt.Sprintf("%s case %d", file, i+1), Header: h, Src: part})
	}
	return cases
}

// Pipeline builds the pipeline the case asks for: an explicit "pipeline",
// or the default pipeline of "target"/"backend" (dynamo by default),
// restricted to "passes" when given.
func (c Case) Pipeline() (*pm.Pipeline, error) {
	if text, ok := c.Header["pipeline"]; ok {
		return pm.ParsePipeline(text)
	}
	target := c.Header["target"]
	if target == "" {
		target = pm.TargetDynamo
	}
	pl, err := pm.Build(target, c.Header["backend"])
	if err != nil {
		return nil, err
	}
	if names, ok := c.Header["passes"]; ok {
		var list []string
		for _, n := range strings.Split(names, ",") {
			if n = strings.TrimSpace(n); n != "" {
				list = append(list, n)
			}
		}
		pl = pl.Only(list...)
		if err := pl.Validate(); err != nil {
			return nil, err
		}
	}
	return pl, nil
}

// ExportOptions are the export options the case's header asks for.
func (c Case) ExportOptions() []pm.ExportOption {
	var opts []pm.ExportOption
	if ex := c.Header["exclude-patches"]; ex != "" {
		opts = append(opts, pm.ExcludePatches(strings.Split(ex, ",")...))
	}
	return opts
}

// WantsError reports whether the case expects the run to fail (and the
// substring the error must contain).
func (c Case) WantsError() (string, bool) {
	s, ok := c.Header["error"]
	return s, ok
}
