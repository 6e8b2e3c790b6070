package main

import (
	"encoding/json"
	"fmt"

	fxapi "github.com/fxport/fxport"
	"github.com/fxport/fxport/internal/atomicfile"
	"github.com/fxport/fxport/pm"
	"github.com/fxport/fxport/provenance"
)

// reportSchema names the --report-json document's schema (docs/report-json.md).
const reportSchema = "fxport.report/v1"

// reportDoc is the --report-json document: one entry per target exported.
type reportDoc struct {
	Schema  string         `json:"schema"`
	Version string         `json:"fxport_version"`
	Input   string         `json:"input"`
	Targets []targetReport `json:"targets"`
}

// targetReport is one target's report, the files it wrote and, when it
// failed, the error.
type targetReport struct {
	Name string `json:"name"`
	pm.ReportJSON
	Outputs []string `json:"outputs"`
	Error   string   `json:"error,omitempty"`
}

func newReportDoc(input string) *reportDoc {
	return &reportDoc{Schema: reportSchema, Version: provenance.Version(), Input: input, Targets: []targetReport{}}
}

func (d *reportDoc) add(t exportTarget, res *fxapi.Result, err error, rf runFlags) {
	tr := targetReport{Name: t.String(), Outputs: []string{}}
	if res != nil && res.Report != nil {
		tr.ReportJSON = res.Report.JSON(rf.timePasses, rf.memPasses)
		tr.Outputs = append(tr.Outputs, res.Files...)
	} else {
		tr.Target, tr.Backend = t.Kind(), t.Backend()
		tr.Passes, tr.Fired, tr.Unrun = []pm.PassReportJSON{}, []pm.FiringJSON{}, []pm.UnrunPatchJSON{}
	}
	if err != nil {
		tr.Error = err.Error()
		tr.Outputs = []string{}
	}
	d.Targets = append(d.Targets, tr)
}

// writeWith writes the document to path (nothing when path is empty) and
// returns err, or the write's error when err is nil.
func (d *reportDoc) writeWith(path string, err error) error {
	if path == "" {
		return err
	}
	b, merr := json.MarshalIndent(d, "", "  ")
	if merr != nil {
		return fmt.Errorf("--report-json: %w", merr)
	}
	if werr := atomicfile.WriteBytes(path, append(b, '\n')); werr != nil && err == nil {
		return fmt.Errorf("--report-json: %w", werr)
	}
	return err
}
