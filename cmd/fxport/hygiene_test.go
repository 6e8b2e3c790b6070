package main

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fxport/fxport/internal/atomicfile"
	"github.com/fxport/fxport/internal/testenv"
)

// A SIGTERM or SIGINT (Ctrl-C) while an output is being written removes
// its temporary file and exits 143 or 130.
func TestSignalRemovesPartialOutputs(t *testing.T) {
	for _, c := range []struct {
		sig  syscall.Signal
		code int
	}{{syscall.SIGTERM, 143}, {syscall.SIGINT, 130}} {
		t.Run(c.sig.String(), func(t *testing.T) { signalRemovesPartialOutputs(t, c.sig, c.code) })
	}
}

func signalRemovesPartialOutputs(t *testing.T, sig syscall.Signal, want int) {
	dir := t.TempDir()
	exited := make(chan int, 1)
	cleanupOnSignal(func(code int) { exited <- code })
	writing := make(chan struct{})
	never := make(chan struct{})
	go atomicfile.Write(filepath.Join(dir, "m.pte"), func(w io.Writer) error {
		w.Write(bytes.Repeat([]byte{1}, 3<<20)) // past the buffer: a partial file on disk
		close(writing)
		<-never
		return nil
	})
	<-writing
	if tmps, _ := filepath.Glob(filepath.Join(dir, ".m.pte.tmp*")); len(tmps) != 1 {
		t.Fatalf("temporary files while writing: %v, want one", tmps)
	}
	if err := syscall.Kill(os.Getpid(), sig); err != nil {
		t.Fatal(err)
	}
	select {
	case code := <-exited:
		if code != want {
			t.Errorf("exit code %d, want %d", code, want)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("no exit after %v", sig)
	}
	left, _ := os.ReadDir(dir)
	if len(left) != 0 {
		t.Fatalf("left behind after %v: %v", sig, left)
	}
}

// A write error on stdout (fxport run > /dev/full) is an error exit with
// a message.
func TestStdoutWriteErrorExitsNonZero(t *testing.T) {
	full, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
	if err != nil {
		t.Skip("/dev/full: ", err)
	}
	defer full.Close()
	pte := filepath.Join(testenv.Shared(t, "testdata/pte"), "et_portable_add_f32x1.pte")
	for _, args := range [][]string{{"run", pte}, {"inspect", pte}, {"pipeline", "--target", "onnx"}} {
		var stderr bytes.Buffer
		code := run(args, full, &stderr)
		if code == 0 || !strings.Contains(stderr.String(), "no space left on device") {
			t.Errorf("%v: exit %d, stderr %q: want a non-zero exit saying the output was not written", args, code, stderr.String())
		}
	}
}
