package cuda

import (
	"context"
	"fmt"
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
	pteBytes, err := pte.Encode(f)
	if err != nil {
		return fmt.Errorf("cuda: encoding %s: %w", ptePath, err)
	}
	ptdBytes, err := pte.EncodePTD(data)
	if err != nil {
		return fmt.Errorf("cuda: encoding the .ptd: %w", err)
	}
	return writePair(ptePath, pteBytes, PTDPath(ptePath), ptdBytes)
}

// PTDPath is the .ptd written beside a .pte.
func PTDPath(ptePath string) string {
	return strings.TrimSuffix(ptePath, filepath.Ext(ptePath)) + ".ptd"
}

func writePair(a string, ab []byte, b string, bb []byte) error {
	ta, err := writeTemp(a, ab)
	if err != nil {
		return err
	}
	tb, err := writeTemp(b, bb)
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

func writeTemp(path string, data []byte) (string, error) {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return "", err
	}
	if _, err := f.Write(data); err != nil {
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
