package extcompile

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/targets/pt2"
)

// Spec describes one backend's compile step.
type Spec struct {
	// Prefix starts every error ("cuda", "openvino").
	Prefix string
	// Command is the command line; "" uses Default. IN and OUT (whole
	// words) are replaced by the input .pt2 and the output path.
	Command string
	// Default is the command used when Command is empty.
	Default string
	// TempPattern names the temporary directory (os.MkdirTemp pattern).
	TempPattern string
	// OutName is the file name of OUT inside the temporary directory.
	OutName string
	// What names OUT in errors ("shared library", "compiled model").
	What string
	// Hint ends every error about the command: what it needs and how to
	// point fxport at another one.
	Hint string
	// Extras are optional side files OUT+Suffix read back when present.
	Extras []Extra
}

// Extra is an optional side file of OUT.
type Extra struct {
	// Suffix is appended to OUT's path (".weights").
	Suffix string
	// What names the file in errors ("weights blob").
	What string
}

// Output is what the command wrote, read into memory.
type Output struct {
	// Out is OUT's bytes (never empty).
	Out []byte
	// Extras holds the side files present, by suffix.
	Extras map[string][]byte
}

// Compile writes part as IN (a .pt2 in a temporary directory), runs the
// command of s and reads OUT and the side files into memory (CompileFiles
// leaves them on disk instead). A command that cannot start, fails, or
// writes no or an empty OUT is an error quoting its output and ending with
// s.Hint. The temporary directory is always removed.
func Compile(ctx context.Context, part *ir.Program, s Spec) (*Output, error) {
	f, err := CompileFiles(ctx, part, s)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := os.ReadFile(f.Out)
	if err != nil {
		return nil, fmt.Errorf("%s: reading the %s: %w", s.Prefix, s.What, err)
	}
	o := &Output{Out: b, Extras: map[string][]byte{}}
	for _, x := range s.Extras {
		path, ok := f.Extras[x.Suffix]
		if !ok {
			continue
		}
		eb, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("%s: reading the %s: %w", s.Prefix, x.What, err)
		}
		o.Extras[x.Suffix] = eb
	}
	return o, nil
}

// CompileFiles is Compile leaving what the command wrote in the temporary
// directory, for the caller to stream (FileLazy) and then Close, which
// removes the directory. On error the directory is already removed.
func CompileFiles(ctx context.Context, part *ir.Program, s Spec) (_ *Files, err error) {
	command := s.Command
	if strings.TrimSpace(command) == "" {
		command = s.Default
	}
	dir, err := os.MkdirTemp("", s.TempPattern)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", s.Prefix, err)
	}
	defer func() {
		if err != nil {
			os.RemoveAll(dir)
		}
	}()
	in := filepath.Join(dir, "partition.pt2")
	out := filepath.Join(dir, s.OutName)
	if err := pt2.Write(part, in); err != nil {
		return nil, fmt.Errorf("%s: writing the partition as .pt2: %w", s.Prefix, err)
	}
	words := strings.Fields(command)
	if len(words) == 0 {
		return nil, fmt.Errorf("%s: empty compile command; %s", s.Prefix, s.Hint)
	}
	for i, w := range words {
		switch w {
		case "IN":
			words[i] = in
		case "OUT":
			words[i] = out
		}
	}
	cmd := exec.CommandContext(ctx, words[0], words[1:]...)
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	if err := cmd.Run(); err != nil {
		var ee *exec.ExitError
		msg := strings.TrimSpace(buf.String())
		if errors.As(err, &ee) {
			return nil, fmt.Errorf("%s: compile command %q failed (%v): %s; %s", s.Prefix, command, err, Tail(msg), s.Hint)
		}
		return nil, fmt.Errorf("%s: compile command %q could not run: %v; %s", s.Prefix, command, err, s.Hint)
	}
	st, err := os.Stat(out)
	if err != nil || !st.Mode().IsRegular() {
		if err == nil {
			err = fmt.Errorf("%s is not a regular file", out)
		}
		return nil, fmt.Errorf("%s: compile command %q wrote no %s OUT: %v; %s", s.Prefix, command, s.What, err, s.Hint)
	}
	if st.Size() == 0 {
		return nil, fmt.Errorf("%s: compile command %q wrote an empty %s; %s", s.Prefix, command, s.What, s.Hint)
	}
	f := &Files{Dir: dir, Out: out, Extras: map[string]string{}}
	for _, x := range s.Extras {
		path := out + x.Suffix
		st, err := os.Stat(path)
		switch {
		case err == nil && st.Mode().IsRegular():
			f.Extras[x.Suffix] = path
		case err == nil:
			return nil, fmt.Errorf("%s: the %s %s is not a regular file", s.Prefix, x.What, path)
		case !errors.Is(err, os.ErrNotExist):
			return nil, fmt.Errorf("%s: reading the %s: %w", s.Prefix, x.What, err)
		}
	}
	return f, nil
}

// Tail keeps the last 2000 bytes of a command's output ("no output" when
// it printed nothing).
func Tail(s string) string {
	if len(s) > 2000 {
		s = "…" + s[len(s)-2000:]
	}
	if s == "" {
		return "no output"
	}
	return s
}
