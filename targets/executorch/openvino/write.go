package openvino

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

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
	return writeAtomic(ptePath, func(w io.Writer) error {
		if err := pte.Write(w, f); err != nil {
			return fmt.Errorf("openvino: encoding %s: %w", ptePath, err)
		}
		return nil
	})
}

// writeAtomic streams write's output to a temporary file beside path and
// renames it into place only when everything succeeded; the temporary file
// is removed otherwise.
func writeAtomic(path string, write func(io.Writer) error) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	name := f.Name()
	bw := bufio.NewWriterSize(f, 1<<20)
	if err := write(bw); err != nil {
		f.Close()
		os.Remove(name)
		return err // names the file
	}
	if err := bw.Flush(); err != nil {
		f.Close()
		os.Remove(name)
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		os.Remove(name)
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := os.Chmod(name, 0o644); err != nil {
		os.Remove(name)
		return err
	}
	if err := os.Rename(name, path); err != nil {
		os.Remove(name)
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}
