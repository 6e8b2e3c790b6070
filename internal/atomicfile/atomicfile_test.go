package atomicfile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestWriteAllRenamesOnlyWhenEveryFileWasWritten(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "m.ptd"), filepath.Join(dir, "m.pte")
	if err := os.WriteFile(b, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	err := WriteAll(
		File{Path: a, Write: func(w io.Writer) error { _, err := w.Write([]byte("data")); return err }},
		File{Path: b, Write: func(w io.Writer) error { w.Write([]byte("half")); return boom }},
	)
	if !errors.Is(err, boom) || !strings.Contains(err.Error(), b) {
		t.Fatalf("error %v, want boom naming %s", err, b)
	}
	if got, _ := os.ReadFile(b); string(got) != "old" {
		t.Errorf("existing output changed to %q", got)
	}
	if _, err := os.Stat(a); !os.IsNotExist(err) {
		t.Errorf("first file written although the second failed")
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("temporaries left behind: %v", entries)
	}

	if err := WriteAll(
		File{Path: a, Write: func(w io.Writer) error { _, err := w.Write([]byte("data")); return err }},
		File{Path: b, Write: func(w io.Writer) error { _, err := w.Write([]byte("program")); return err }},
	); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{a: "data", b: "program"} {
		got, err := os.ReadFile(path)
		if err != nil || string(got) != want {
			t.Errorf("%s = %q, %v; want %q", path, got, err, want)
		}
		st, _ := os.Stat(path)
		if st.Mode().Perm() != 0o644 {
			t.Errorf("%s mode %v, want 0644", path, st.Mode().Perm())
		}
	}
}

func TestWriteBytesMissingDirectory(t *testing.T) {
	path := filepath.Join(t.TempDir(), "no", "such", "dir", "x.onnx")
	err := WriteBytes(path, []byte("x"))
	if err == nil || !strings.Contains(err.Error(), path) {
		t.Fatalf("error %v, want one naming %s", err, path)
	}
}

func TestWriteLargeStreamsThroughTheBuffer(t *testing.T) {
	path := filepath.Join(t.TempDir(), "big")
	const n = 3*bufferSize + 17
	err := Write(path, func(w io.Writer) error {
		chunk := make([]byte, 4096)
		for written := 0; written < n; {
			k := min(len(chunk), n-written)
			for i := range chunk[:k] {
				chunk[i] = byte(written + i)
			}
			if _, err := w.Write(chunk[:k]); err != nil {
				return err
			}
			written += k
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil || len(got) != n {
		t.Fatalf("read %d bytes, %v; want %d", len(got), err, n)
	}
	for i, c := range got {
		if c != byte(i) {
			t.Fatalf("byte %d = %d, want %d", i, c, byte(i))
		}
	}
}
