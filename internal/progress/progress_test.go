package progress

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fxport/fxport/internal/testenv"
)

func TestIsTerminal(t *testing.T) {
	_, slave := testenv.PTY(t)
	if !IsTerminal(slave) {
		t.Error("a pseudo-terminal is not a terminal")
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	file, err := os.Create(filepath.Join(t.TempDir(), "f"))
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	for name, x := range map[string]any{"pipe": w, "/dev/null": null, "file": file, "buffer": &bytes.Buffer{}, "nil file": (*os.File)(nil)} {
		wr, _ := x.(interface{ Write([]byte) (int, error) })
		if IsTerminal(wr) {
			t.Errorf("%s is taken for a terminal", name)
		}
	}
}

func TestLine(t *testing.T) {
	defer func(d, i time.Duration) { Delay, Interval = d, i }(Delay, Interval)
	var b bytes.Buffer
	// Not a terminal: nothing, ever.
	l := New(&b)
	l.Set("pass %d", 1)
	l.Clear()
	if b.Len() != 0 {
		t.Fatalf("a Line on a buffer wrote %q", b.String())
	}
	// On a terminal (forced here): drawn in place, throttled, cleared.
	Delay, Interval = 0, time.Hour
	l = &Line{w: &b, start: time.Now()}
	l.Set("pass %d of %d", 1, 3)
	l.Set("pass %d of %d", 2, 3) // within Interval: dropped
	if got := b.String(); got != "\rpass 1 of 3\x1b[K" {
		t.Fatalf("drawn %q", got)
	}
	Interval = 0
	l.Set("%s", strings.Repeat("x", 200))
	if !strings.HasSuffix(b.String(), strings.Repeat("x", 97)+"...\x1b[K") {
		t.Errorf("a long line is not cut: %q", b.String())
	}
	l.Clear()
	l.Clear()
	if !strings.HasSuffix(b.String(), "...\x1b[K\r\x1b[K") || strings.Count(b.String(), "\r") != 3 {
		t.Errorf("clear: %q", b.String())
	}
	// Before Delay: nothing.
	b.Reset()
	Delay = time.Hour
	l = &Line{w: &b, start: time.Now()}
	l.Set("quick")
	l.Clear()
	if b.Len() != 0 {
		t.Errorf("quick work drew %q", b.String())
	}
	var zero *Line
	zero.Set("x")
	zero.Clear()
}

func TestBytes(t *testing.T) {
	for n, want := range map[int64]string{12: "12 B", 1500: "1.5 kB", 233_000_000: "233.0 MB", 4_300_000_000: "4.30 GB"} {
		if got := Bytes(n); got != want {
			t.Errorf("Bytes(%d) = %q, want %q", n, got, want)
		}
	}
}
