package cuda

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/fxport/fxport/internal/atomicfile"
	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/targets/executorch/plan"
	"github.com/fxport/fxport/targets/executorch/pte"
)

// Options configure Write.
type Options struct {
	// Command is the compile command (see Compile); "" uses $FXPORT_AOTI_COMMAND,
	// then DefaultCommand.
	Command string
	// MethodName is the compile spec method_name of every call; "" uses
	// each delegate call's meta compile_spec.method_name, then
	// MethodName(p).
	MethodName string
}

// Write compiles each CUDA partition of p (the output of the
// executorch.cuda pipeline, lowered and memory-planned: its CudaBackend
// delegate calls), each written as a standalone ATen program
// (RegionProgram) and compiled on its own, emits the program with the
// compiled payloads (Package) and writes ptePath and, beside it, the .ptd
// with the same stem, streaming the compiled libraries and weights blobs
// from the compile step's temporary directories, which are removed when
// Write returns. Nothing is written unless everything succeeded; both
// files are renamed into place from temporary files.
func Write(ctx context.Context, p *ir.Program, ptePath string, o Options) error {
	cmd := o.Command
	if cmd == "" {
		cmd = os.Getenv(EnvCommand)
	}
	calls := FindCalls(p)
	if len(calls) == 0 {
		return fmt.Errorf("cuda: %s: the program has no CudaBackend delegate call; run the executorch.cuda pipeline (its cuda-partition pass) first", ptePath)
	}
	// Everything that can fail without the compiler fails before it runs.
	if _, err := plan.Read(p); err != nil {
		return fmt.Errorf("cuda: %s: %w (run the whole executorch.cuda pipeline)", ptePath, err)
	}
	methods := make([]string, len(calls))
	parts := make([]*ir.Program, len(calls))
	for i, call := range calls {
		methods[i] = o.MethodName
		if methods[i] == "" {
			methods[i], _ = call.Meta.Get(MetaMethodName)
		}
		if methods[i] == "" {
			methods[i] = MethodName(p)
		}
		if err := CheckHost(p, call); err != nil {
			return err
		}
		part, err := RegionProgram(p, call)
		if err != nil {
			return err
		}
		parts[i] = part
	}
	compiled := make([]*Compiled, 0, len(calls))
	defer func() {
		for _, c := range compiled {
			c.Close()
		}
	}()
	for i, part := range parts {
		c, err := Compile(ctx, part, cmd)
		if err != nil {
			if len(calls) > 1 {
				return fmt.Errorf("partition %d of %d (%s): %w", i+1, len(calls), calls[i].Short(), err)
			}
			return err
		}
		compiled = append(compiled, c)
	}
	f, data, err := Package(p, calls, compiled, methods)
	if err != nil {
		return err
	}
	// Both files stream into temporary files: lazy segments are copied
	// from their sources, the .ptd entries from the compile step's files.
	// The .ptd goes in first, so a .pte never appears without its data.
	return atomicfile.WriteAll(
		atomicfile.File{Path: PTDPath(ptePath), Write: func(w io.Writer) error {
			if err := pte.WritePTD(w, data, pte.PTDOptions{}); err != nil {
				return fmt.Errorf("cuda: encoding the .ptd: %w", err)
			}
			return nil
		}},
		atomicfile.File{Path: ptePath, Write: func(w io.Writer) error {
			if err := pte.Write(w, f); err != nil {
				return fmt.Errorf("cuda: encoding %s: %w", ptePath, err)
			}
			return nil
		}},
	)
}

// PTDPath is the .ptd written beside a .pte.
func PTDPath(ptePath string) string {
	return strings.TrimSuffix(ptePath, filepath.Ext(ptePath)) + ".ptd"
}
