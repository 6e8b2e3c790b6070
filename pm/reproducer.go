package pm

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/fxport/fxport/ir"
)

// A reproducer file is IR text preceded by comment lines:
//
//	# fxport reproducer
//	# pipeline: onnx: onnx.fx-node-fixes(onnx-node-fixes)
//	# failed-pass: onnx-node-fixes
//	# error: "pass \"onnx-node-fixes\": …"
//	graph forward(...) { ... }
//
// The IR is the program as it was just before the failed pass, and the
// file as a whole parses with ir.Parse.
const (
	reproMagic    = "# fxport reproducer"
	reproPipeline = "# pipeline: "
	reproFailed   = "# failed-pass: "
	reproError    = "# error: "
)

func writeReproducer(path, pipeline, pass, irText string, err error) error {
	var b strings.Builder
	b.WriteString(reproMagic + "\n")
	b.WriteString(reproPipeline + pipeline + "\n")
	b.WriteString(reproFailed + pass + "\n")
	b.WriteString(reproError + strconv.Quote(err.Error()) + "\n")
	return os.WriteFile(path, []byte(b.String()+irText), 0o644)
}

// LoadReproducer reads a reproducer written by Run, against Default.
func LoadReproducer(path string) (*Pipeline, *ir.Program, string, error) {
	return Default.LoadReproducer(path)
}

// LoadReproducer reads a reproducer: the pipeline that was running, the
// program before the failed pass, and that pass's name. Replay the failure
// with Run(prog, pl.Only(failed), nil, cfg).
func (c *Catalog) LoadReproducer(path string) (*Pipeline, *ir.Program, string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, "", fmt.Errorf("pm: load reproducer: %w", err)
	}
	var pipeText, failed string
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, len(data)+1)
	first := true
	for sc.Scan() {
		line := sc.Text()
		if first && line != reproMagic {
			return nil, nil, "", fmt.Errorf("pm: load reproducer %s: not a reproducer (first line %q)", path, line)
		}
		first = false
		if !strings.HasPrefix(line, "#") {
			break
		}
		if s, ok := strings.CutPrefix(line, reproPipeline); ok {
			pipeText = s
		}
		if s, ok := strings.CutPrefix(line, reproFailed); ok {
			failed = s
		}
	}
	if pipeText == "" || failed == "" {
		return nil, nil, "", fmt.Errorf("pm: load reproducer %s: missing pipeline or failed-pass line", path)
	}
	pl, err := c.ParsePipeline(pipeText)
	if err != nil {
		return nil, nil, "", fmt.Errorf("pm: load reproducer %s: %w", path, err)
	}
	if !hasInstance(pl.Instances(), failed) {
		return nil, nil, "", fmt.Errorf("pm: load reproducer %s: failed pass %q is not in its pipeline", path, failed)
	}
	prog, err := ir.Parse(data, path)
	if err != nil {
		return nil, nil, "", fmt.Errorf("pm: load reproducer: %w", err)
	}
	return pl, prog, failed, nil
}
