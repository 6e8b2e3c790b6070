package inputfile

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestRefusesWhatIsNotARegularFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "in.pte")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	cases := map[string]string{dir: "a directory", fifo: "a named pipe"}
	if _, err := os.Stat("/dev/zero"); err == nil {
		cases["/dev/zero"] = "a character device"
	}
	for path, want := range cases {
		done := make(chan error, 1)
		go func() { _, err := ReadFile(path, 0); done <- err }()
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), want) {
				t.Errorf("%s: error %v, want one naming the file and %q", path, err, want)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("%s: ReadFile blocked", path)
		}
	}
}

func TestReadsRegularFilesWithinTheLimit(t *testing.T) {
	p := filepath.Join(t.TempDir(), "a.fxir")
	if err := os.WriteFile(p, []byte("hello"), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, err := ReadFile(p, 0); err != nil || string(b) != "hello" {
		t.Fatalf("ReadFile = %q, %v", b, err)
	}
	if _, err := ReadFile(p, 4); err == nil || !strings.Contains(err.Error(), "4-byte input limit") {
		t.Fatalf("over the limit: %v", err)
	}
}
