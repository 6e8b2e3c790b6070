// Package progress draws one status line for long work — the passes of a
// large export, weights streaming into an artifact, an ONNX Runtime run —
// on a terminal, and nothing at all when its writer is not one (a pipe, a
// file, a test's buffer): output meant for programs stays clean.
package progress

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"
)

// Delay is how long work runs before its line appears, so that quick
// commands print nothing; Interval is the least time between redraws.
var (
	Delay    = 500 * time.Millisecond
	Interval = 100 * time.Millisecond
)

// Line is a status line redrawn in place ("\r", erase to the end). The
// zero value and a Line for a writer that is not a terminal do nothing.
// Its methods may be called from several goroutines.
type Line struct {
	mu    sync.Mutex
	w     io.Writer
	start time.Time
	last  time.Time
	shown bool
}

// New returns a Line drawing on w when w is a terminal, and a Line that
// does nothing otherwise.
func New(w io.Writer) *Line {
	if !IsTerminal(w) {
		return &Line{}
	}
	return &Line{w: w, start: time.Now()}
}

// Set replaces the line's text (drawn when Delay has passed since New and
// Interval since the last draw; anything else is dropped, the next Set
// draws the newest text).
func (l *Line) Set(format string, args ...any) {
	if l == nil || l.w == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	now := time.Now()
	if now.Sub(l.start) < Delay || l.shown && now.Sub(l.last) < Interval {
		return
	}
	text := fmt.Sprintf(format, args...)
	if len(text) > 100 {
		text = text[:97] + "..."
	}
	fmt.Fprintf(l.w, "\r%s\x1b[K", text)
	l.last, l.shown = now, true
}

// Clear erases the line if it was drawn; the cursor is left at the start
// of the empty line, where the command's own output continues.
func (l *Line) Clear() {
	if l == nil || l.w == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.shown {
		io.WriteString(l.w, "\r\x1b[K")
		l.shown = false
	}
}

// Bytes formats a byte count for the line ("12.3 MB").
func Bytes(n int64) string {
	switch {
	case n >= 1e9:
		return fmt.Sprintf("%.2f GB", float64(n)/1e9)
	case n >= 1e6:
		return fmt.Sprintf("%.1f MB", float64(n)/1e6)
	case n >= 1e3:
		return fmt.Sprintf("%.1f kB", float64(n)/1e3)
	}
	return fmt.Sprintf("%d B", n)
}

// IsTerminal reports whether w is an *os.File open on a terminal.
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && f != nil && isTerminal(f)
}

// Counter wraps w, calling report with the number of bytes written so far
// after every write (report nil: w itself).
func Counter(w io.Writer, report func(written int64)) io.Writer {
	if report == nil {
		return w
	}
	return &counter{w: w, report: report}
}

type counter struct {
	w      io.Writer
	n      int64
	report func(int64)
}

func (c *counter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	c.report(c.n)
	return n, err
}

// ReadFrom keeps io.Copy's large reads going through the count.
func (c *counter) ReadFrom(r io.Reader) (int64, error) {
	return io.CopyBuffer(struct{ io.Writer }{c}, r, make([]byte, 1<<20))
}
