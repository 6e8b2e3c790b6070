package openvino

import (
	"context"
	"fmt"

	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/targets/executorch/extcompile"
)

// EnvCommand names the environment variable that overrides the compile
// command (the --openvino-command flag wins over it).
const EnvCommand = "FXPORT_OPENVINO_COMMAND"

// DefaultCommand is the compile command used when neither the flag nor the
// environment variable is set. IN and OUT are replaced by the paths.
const DefaultCommand = "python3 tools/openvino_compile.py IN OUT"

// hint ends every compile-step error.
var hint = fmt.Sprintf("the OpenVINO backend's compile step needs torch >= 2 and the openvino Python package: run fxport where they are installed, or pass --openvino-command (or set %s) to a command that compiles IN.pt2 into the exported compiled model OUT", EnvCommand)

// RegionProgram returns the region of call (an OpenvinoBackend delegate
// call of p's main graph) as a standalone ATen program (extcompile.Region):
// the constant placeholders it reads become parameters, buffers or lifted
// constants with p's weights, its other operands user inputs.
func RegionProgram(p *ir.Program, call *ir.Node) (*ir.Program, error) {
	return extcompile.Region(p, call, extcompile.RegionSpec{
		Prefix:   "openvino",
		Backend:  BackendID,
		Packager: "the OpenVINO packager",
		IsCall:   IsCall,
	})
}

// Compile writes the partition part as IN (a .pt2 in a temporary
// directory), runs command with the words IN and OUT replaced by the paths
// (split on spaces; nothing is shell-interpreted; "" uses DefaultCommand)
// and returns OUT: the compiled model as OpenVINO's export_model writes it,
// the delegate's processed bytes. A command that cannot start, fails or
// writes no or an empty OUT is an error quoting its output and saying what
// is needed.
func Compile(ctx context.Context, part *ir.Program, command string) ([]byte, error) {
	out, err := extcompile.Compile(ctx, part, extcompile.Spec{
		Prefix:      "openvino",
		Command:     command,
		Default:     DefaultCommand,
		TempPattern: "fxport-openvino-",
		OutName:     "partition.blob",
		What:        "compiled model",
		Hint:        hint,
	})
	if err != nil {
		return nil, err
	}
	return out.Out, nil
}
