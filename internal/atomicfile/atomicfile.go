// Package atomicfile writes output files so that a failure never leaves a
// half-written or half-updated output behind.
//
// Every file is written, through a buffer, to a temporary file in its own
// directory; only when all of them were written completely are they renamed
// into place, in the order given. A failure before the renames removes the
// temporaries and leaves existing outputs untouched.
package atomicfile

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// File is one output: its final path and the function that writes its
// bytes.
type File struct {
	Path  string
	Write func(w io.Writer) error
}

// bufferSize is the size of the write buffer in front of each temporary
// file.
const bufferSize = 1 << 20

// Write writes one file with write.
func Write(path string, write func(io.Writer) error) error {
	return WriteAll(File{Path: path, Write: write})
}

// WriteBytes writes data to path.
func WriteBytes(path string, data []byte) error {
	return Write(path, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// WriteAll writes the files in order, then renames them into place in the
// same order. Put a file that refers to others (a .pte naming its .ptd, an
// .onnx naming its .data) last: readers never see it before its companions.
// Errors name the file. The files are created with mode 0644.
func WriteAll(files ...File) error {
	tmps := make([]string, 0, len(files))
	cleanup := func() {
		for _, t := range tmps {
			os.Remove(t)
		}
	}
	for _, f := range files {
		name, err := writeTemp(f)
		if err != nil {
			cleanup()
			return err
		}
		tmps = append(tmps, name)
	}
	for i, f := range files {
		if err := os.Rename(tmps[i], f.Path); err != nil {
			cleanup()
			return fmt.Errorf("writing %s: %w", f.Path, err)
		}
	}
	return nil
}

// writeTemp writes f to a new temporary file beside f.Path and returns its
// name; on failure the temporary is gone.
func writeTemp(f File) (string, error) {
	tmp, err := os.CreateTemp(filepath.Dir(f.Path), "."+filepath.Base(f.Path)+".tmp*")
	if err != nil {
		return "", fmt.Errorf("writing %s: %w", f.Path, err)
	}
	name := tmp.Name()
	bw := bufio.NewWriterSize(tmp, bufferSize)
	err = f.Write(bw)
	if err == nil {
		err = bw.Flush()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(name, 0o644)
	}
	if err != nil {
		os.Remove(name)
		return "", fmt.Errorf("writing %s: %w", f.Path, err)
	}
	return name, nil
}
