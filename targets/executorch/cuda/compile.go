package cuda

import (
	"context"
	"fmt"

	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/targets/executorch/extcompile"
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
// and saying what is needed (extcompile.Compile).
func Compile(ctx context.Context, part *ir.Program, command string) (*Compiled, error) {
	out, err := extcompile.Compile(ctx, part, extcompile.Spec{
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
	return &Compiled{SO: out.Out, Weights: out.Extras[".weights"]}, nil
}
