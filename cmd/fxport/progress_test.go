package main

import (
	"bytes"
	"io"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fxport/fxport/internal/ort"
	"github.com/fxport/fxport/internal/progress"
	"github.com/fxport/fxport/internal/testenv"
)

// runOnTerminal runs fxport with stderr on a pseudo-terminal and returns
// what the terminal received.
func runOnTerminal(t *testing.T, args ...string) (stdout, term string, code int) {
	t.Helper()
	master, slave := testenv.PTY(t)
	var got bytes.Buffer
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); io.Copy(&got, master) }()
	var out bytes.Buffer
	code = run(args, &out, slave)
	slave.Close() // the reader sees the end
	wg.Wait()
	return out.String(), got.String(), code
}

// On a terminal, export and verify draw a status line on stderr (the
// passes, the bytes written, the ONNX Runtime run) and erase it; with
// stderr not a terminal they print nothing there.
func TestProgressOnlyOnATerminal(t *testing.T) {
	defer func(d, i time.Duration) { progress.Delay, progress.Interval = d, i }(progress.Delay, progress.Interval)
	progress.Delay, progress.Interval = 0, 0
	dir := t.TempDir()
	args := []string{"export", "../../examples/cnn/program.pt2", "--target", "executorch-portable", "-o", filepath.Join(dir, "m.pte")}
	stdout, term, code := runOnTerminal(t, args...)
	require.Equal(t, 0, code, term)
	require.Empty(t, stdout)
	require.Contains(t, term, "\rexecutorch-portable: pass 1/")
	require.Contains(t, term, "executorch-portable: writing m.pte: ")
	require.True(t, strings.HasSuffix(term, "\r\x1b[K"), "the line is erased at the end: %q", term)

	stdout, stderr, code := fxport(t, args...)
	require.Equal(t, 0, code, stderr)
	require.Empty(t, stdout)
	require.Empty(t, stderr, "no progress when stderr is not a terminal")

	// IR dumps on stderr: no line in between them.
	_, term, code = runOnTerminal(t, append(args, "--print-after-change")...)
	require.Equal(t, 0, code, term)
	require.NotContains(t, term, "\x1b[K")

	if ok, _ := ort.Available(); ok {
		stdout, term, code = runOnTerminal(t, "verify", "../../examples/cnn/program.pt2", "--target", "onnx")
		require.Equal(t, 0, code, term)
		require.Contains(t, term, "verify: running the model in ONNX Runtime")
		require.Contains(t, stdout, "1 outputs match")
		require.NotContains(t, stdout, "\r")
	}
}
