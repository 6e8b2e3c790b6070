// Package inputfile opens the files fxport reads: regular files only. A
// directory, a named pipe (which would block forever), a device such as
// /dev/zero (which never ends) or a socket is refused with one error that
// names the file and what it is, before anything is read.
package inputfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// kind describes a file mode that is not a regular file.
func kind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return "not a regular file"
}

// Check reports an error naming path when it is not a regular file (after
// following symbolic links).
func Check(path string) error {
	st, err := os.Stat(path)
	if err != nil {
		return err
	}
	return checkMode(path, st.Mode())
}

func checkMode(path string, m fs.FileMode) error {
	if m.IsRegular() {
		return nil
	}
	return fmt.Errorf("%s: %s, not a regular file: fxport reads only regular files", path, kind(m))
}

// Open opens path for reading when it is a regular file and returns it
// with its size. The open does not block on a named pipe (O_NONBLOCK), and
// the mode is checked again on the opened file, so a file swapped between
// the checks is refused too.
func Open(path string) (*os.File, int64, error) {
	if err := Check(path); err != nil {
		return nil, 0, err
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, 0, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, err
	}
	if err := checkMode(path, st.Mode()); err != nil {
		f.Close()
		return nil, 0, err
	}
	return f, st.Size(), nil
}

// ErrTooLarge is wrapped by ReadFile's refusal of a file over its limit.
var ErrTooLarge = errors.New("the file is too large")

// ReadFile reads the whole regular file at path: the size it has when
// opened, refusing more than limit bytes (0: no limit) with an error
// naming the file, the size and the limit.
func ReadFile(path string, limit int64) ([]byte, error) {
	f, size, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if limit > 0 && size > limit {
		return nil, fmt.Errorf("%s: %d bytes, over the %d-byte input limit: %w", path, size, limit, ErrTooLarge)
	}
	data := make([]byte, size)
	if _, err := io.ReadFull(f, data); err != nil {
		return nil, fmt.Errorf("%s: %w (the file shrank while it was read?)", path, err)
	}
	return data, nil
}
