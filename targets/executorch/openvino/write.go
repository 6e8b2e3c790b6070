package openvino

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/fxport/fxport/internal/atomicfile"
	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/targets/executorch/plan"
	"github.com/fxport/fxport/targets/executorch/pte"
)

// Options configure Write.
type Options struct {
	// Command is the compile command (see Compile); "" uses
	// $FXPORT_OPENVINO_COMMAND, then DefaultCommand.
	Command string
}

// Write compiles every OpenvinoBackend partition of p (the output of the
// executorch.openvino pipeline, lowered and memory-planned), each written
// as a standalone ATen program (RegionProgram), packages the program with
// the compiled models (Package) and writes ptePath. A program without
// partitions (nothing OpenVINO supports) is written without running the
// compiler. Nothing is written unless everything succeeded; the file is
// renamed into place from a temporary file.
func Write(ctx context.Context, p *ir.Program, ptePath string, o Options) error {
	cmd := o.Command
	if cmd == "" {
		cmd = os.Getenv(EnvCommand)
	}
	// Everything that can fail without the compiler fails before it runs.
	if _, err := plan.Read(p); err != nil {
		return fmt.Errorf("openvino: %s: %w (run the whole executorch.openvino pipeline)", ptePath, err)
	}
	calls := FindCalls(p)
	parts := make([]*ir.Program, len(calls))
	for i, call := range calls {
		part, err := RegionProgram(p, call)
		if err != nil {
			return err
		}
		parts[i] = part
	}
	processed := map[*ir.Node][]byte{}
	for i, call := range calls {
		b, err := Compile(ctx, parts[i], cmd)
		if err != nil {
			return fmt.Errorf("%w (partition %d of %d, %s)", err, i+1, len(calls), call.Short())
		}
		processed[call] = b
	}
	f, err := Package(p, processed)
	if err != nil {
		return err
	}
	return atomicfile.Write(ptePath, func(w io.Writer) error {
		if err := pte.Write(w, f); err != nil {
			return fmt.Errorf("openvino: encoding %s: %w", ptePath, err)
		}
		return nil
	})
}
