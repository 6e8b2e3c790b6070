package cuda

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

// EnvCommand names the environment variable that overrides the compile
// command (the --aoti-command flag wins over it).
const EnvCommand = "FXPORT_AOTI_COMMAND"

// DefaultCommand is the compile command used when neither the flag nor the
// environment variable is set. IN and OUT are replaced by the paths.
const DefaultCommand = "python3 tools/aoti_compile.py IN OUT"

// Compiled is what the compile step produced for one partition.
type Compiled struct {
	// SO is the shared library exporting the AOTInductor container ABI.
	SO []byte
	// Weights is the weights blob (OUT.weights); empty when the command
	// wrote none (constants packaged inside the library).
	Weights []byte
}

// Compile writes the partition as IN (a .pt2 in a temporary directory),
// runs command with the words IN and OUT replaced by the paths (split on
// spaces; nothing is shell-interpreted), and reads OUT (the .so) and OUT.weights. A command
// that cannot start, fails or writes no OUT is an error quoting its output
// and saying what is needed.
func Compile(ctx context.Context, part *ir.Program, command string) (*Compiled, error) {
	if strings.TrimSpace(command) == "" {
		command = DefaultCommand
	}
	dir, err := os.MkdirTemp("", "fxport-aoti-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	in := filepath.Join(dir, "partition.pt2")
	out := filepath.Join(dir, "partition.so")
	if err := pt2.Write(part, in); err != nil {
		return nil, fmt.Errorf("cuda: writing the partition as .pt2: %w", err)
	}
	words := strings.Fields(command)
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
	hint := fmt.Sprintf("the CUDA backend's AOTInductor compile step needs torch with CUDA and a GPU: run fxport where they are available, or pass --aoti-command (or set %s) to a command that compiles IN.pt2 into OUT.so", EnvCommand)
	if err := cmd.Run(); err != nil {
		var ee *exec.ExitError
		msg := strings.TrimSpace(buf.String())
		if errors.As(err, &ee) {
			return nil, fmt.Errorf("cuda: compile command %q failed (%v): %s; %s", command, err, tail(msg), hint)
		}
		return nil, fmt.Errorf("cuda: compile command %q could not run: %v; %s", command, err, hint)
	}
	so, err := os.ReadFile(out)
	if err != nil {
		return nil, fmt.Errorf("cuda: compile command %q wrote no shared library OUT: %v; %s", command, err, hint)
	}
	if len(so) == 0 {
		return nil, fmt.Errorf("cuda: compile command %q wrote an empty shared library; %s", command, hint)
	}
	c := &Compiled{SO: so}
	if w, err := os.ReadFile(out + ".weights"); err == nil {
		c.Weights = w
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("cuda: reading the weights blob: %w", err)
	}
	return c, nil
}

func tail(s string) string {
	if len(s) > 2000 {
		s = "…" + s[len(s)-2000:]
	}
	if s == "" {
		return "no output"
	}
	return s
}
