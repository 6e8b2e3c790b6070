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
	"sync"
)

// live holds the temporary files being written, so that RemoveTemps can
// delete them when the process is interrupted.
var live struct {
	sync.Mutex
	names map[string]bool
}

func track(name string) {
	live.Lock()
	defer live.Unlock()
	if live.names == nil {
		live.names = map[string]bool{}
	}
	live.names[name] = true
}

// release removes name from the live set; remove also deletes the file.
func release(name string, remove bool) {
	live.Lock()
	defer live.Unlock()
	delete(live.names, name)
	if remove {
		os.Remove(name)
	}
}

// RemoveTemps deletes every temporary file being written now and returns
// how many it removed: what a command calls when it is interrupted
// (SIGINT, SIGTERM) before it exits, so that no hidden partial file stays
// behind. Outputs already renamed into place are kept.
func RemoveTemps() int {
	live.Lock()
	defer live.Unlock()
	n := 0
	for name := range live.names {
		if os.Remove(name) == nil {
			n++
		}
		delete(live.names, name)
	}
	return n
}

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
			release(t, true)
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
		release(tmps[i], false)
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
	track(name)
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
		release(name, true)
		return "", fmt.Errorf("writing %s: %w", f.Path, err)
	}
	return name, nil
}
