package cuda

import (
	"context"
	"crypto/sha256"
	"fmt"

	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/targets/executorch/extcompile"
	"github.com/fxport/fxport/targets/executorch/pte"
)

// EnvCommand names the environment variable that overrides the compile
// command (the --aoti-command flag wins over it).
const EnvCommand = "FXPORT_AOTI_COMMAND"

// DefaultCommand is the compile command used when neither the flag nor the
// environment variable is set. IN and OUT are replaced by the paths.
const DefaultCommand = "python3 tools/aoti_compile.py IN OUT"

// Compiled is what the compile step produced for one partition: the
// files stay in the step's temporary directory, streamed into the .ptd by
// pte.WritePTD, until Close removes them.
type Compiled struct {
	// SO is the shared library exporting the AOTInductor container ABI.
	SO pte.Lazy
	// Weights is the weights blob (OUT.weights); zero bytes when the
	// command wrote none (constants packaged inside the library).
	Weights pte.Lazy

	files *extcompile.Files
}

// Close removes the compile step's temporary directory; SO and Weights
// cannot be opened afterwards. It may be called more than once.
func (c *Compiled) Close() error {
	if c == nil {
		return nil
	}
	return c.files.Close()
}

// Compile writes the partition as IN (a .pt2 in a temporary directory),
// runs command with the words IN and OUT replaced by the paths (split on
// spaces; nothing is shell-interpreted), and returns OUT (the .so) and
// OUT.weights as lazy sources over the files, hashed but not read into
// memory; the caller closes the result once they are written. A command
// that cannot start, fails or writes no OUT is an error quoting its output
// and saying what is needed (extcompile.CompileFiles); nothing is then
// left behind.
func Compile(ctx context.Context, part *ir.Program, command string) (*Compiled, error) {
	files, err := extcompile.CompileFiles(ctx, part, extcompile.Spec{
		Prefix:      "cuda",
		Command:     command,
		Default:     DefaultCommand,
		TempPattern: "fxport-aoti-",
		OutName:     "partition.so",
		What:        "shared library",
		Hint:        fmt.Sprintf("the CUDA backend's AOTInductor compile step needs torch with CUDA and a GPU: run fxport where they are available, or pass --aoti-command (or set %s) to a command that compiles IN.pt2 into OUT.so", EnvCommand),
		Extras:      []extcompile.Extra{{Suffix: ".weights", What: "weights blob"}},
	})
	if err != nil {
		return nil, err
	}
	c := &Compiled{files: files}
	if c.SO, err = extcompile.FileLazy("cuda shared library", files.Out); err != nil {
		files.Close()
		return nil, fmt.Errorf("cuda: %w", err)
	}
	if path, ok := files.Extras[".weights"]; ok {
		c.Weights, err = extcompile.FileLazy("cuda weights blob", path)
		if err != nil {
			files.Close()
			return nil, fmt.Errorf("cuda: %w", err)
		}
	} else {
		c.Weights = pte.LazyBytes("cuda weights blob (none written)", nil)
		d := sha256.Sum256(nil)
		c.Weights.Digest = &d
	}
	return c, nil
}
