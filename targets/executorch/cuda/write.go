package cuda

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/targets/executorch/plan"
	"github.com/fxport/fxport/targets/executorch/pte"
)

// Options configure Write.
type Options struct {
	// Command is the compile command (see Compile); "" uses $FXPORT_AOTI_COMMAND,
	// then DefaultCommand.
	Command string
	// MethodName is the compile spec method_name; "" uses the delegate
	// call's meta compile_spec.method_name, then MethodName(p).
	MethodName string
}

// Write compiles the CUDA partition of p (the output of the executorch.cuda
// pipeline, lowered and memory-planned: its CudaBackend delegate call)
// written as a standalone ATen program (RegionProgram), emits the program
// with the compiled payload (Package) and writes ptePath and, beside it,
// the .ptd with the same stem. Nothing is written
// unless everything succeeded; both files are renamed into place from
// temporary files.
func Write(ctx context.Context, p *ir.Program, ptePath string, o Options) error {
	cmd := o.Command
	if cmd == "" {
		cmd = os.Getenv(EnvCommand)
	}
	call, err := FindCall(p)
	if err != nil {
		return err
	}
	if call == nil {
		return fmt.Errorf("cuda: %s: the program has no CudaBackend delegate call; run the executorch.cuda pipeline (its cuda-partition pass) first", ptePath)
	}
	method := o.MethodName
	if method == "" {
		method, _ = call.Meta.Get(MetaMethodName)
	}
	if method == "" {
		method = MethodName(p)
	}
	// Everything that can fail without the compiler fails before it runs.
	if _, err := plan.Read(p); err != nil {
		return fmt.Errorf("cuda: %s: %w (run the whole executorch.cuda pipeline)", ptePath, err)
	}
	if err := CheckHost(p, call); err != nil {
		return err
	}
	part, err := RegionProgram(p, call)
	if err != nil {
		return err
	}
	c, err := Compile(ctx, part, cmd)
	if err != nil {
		return err
	}
	f, data, err := Package(p, call, c, method)
	if err != nil {
		return err
	}
	// Both files stream into temporary files (lazy segments are copied
	// from their sources); the compiled library and weights blob are the
	// compiler's output, already in memory (Compiled).
	return writePair(ptePath, func(w io.Writer) error {
		if err := pte.Write(w, f); err != nil {
			return fmt.Errorf("cuda: encoding %s: %w", ptePath, err)
		}
		return nil
	}, PTDPath(ptePath), func(w io.Writer) error {
		if err := pte.WritePTD(w, data, pte.PTDOptions{}); err != nil {
			return fmt.Errorf("cuda: encoding the .ptd: %w", err)
		}
		return nil
	})
}

// PTDPath is the .ptd written beside a .pte.
func PTDPath(ptePath string) string {
	return strings.TrimSuffix(ptePath, filepath.Ext(ptePath)) + ".ptd"
}

// writePair writes a with wa and b with wb, each to a temporary file
// beside it, and renames both into place only when both succeeded (the
// .ptd first, so a .pte never appears without its data).
func writePair(a string, wa func(io.Writer) error, b string, wb func(io.Writer) error) error {
	ta, err := writeTemp(a, wa)
	if err != nil {
		return err
	}
	tb, err := writeTemp(b, wb)
	if err != nil {
		os.Remove(ta)
		return err
	}
	if err := os.Rename(tb, b); err != nil {
		os.Remove(ta)
		os.Remove(tb)
		return err
	}
	if err := os.Rename(ta, a); err != nil {
		os.Remove(ta)
		return err
	}
	return nil
}

// writeTemp streams write's output to a temporary file beside path and
// returns its name; the file is removed when anything fails.
func writeTemp(path string, write func(io.Writer) error) (string, error) {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return "", err
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	if err := write(bw); err != nil {
		f.Close()
		os.Remove(f.Name())
		return "", err // names the file
	}
	if err := bw.Flush(); err != nil {
		f.Close()
		os.Remove(f.Name())
		return "", fmt.Errorf("writing %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		os.Remove(f.Name())
		return "", fmt.Errorf("writing %s: %w", path, err)
	}
	return f.Name(), nil
}
