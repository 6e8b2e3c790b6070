// Command fxport compiles torch.export programs to ONNX and ExecuTorch,
// running every export workaround as a named pass.
//
// Usage:
//
//	fxport parse FILE                       print the program as IR text
//	fxport passes [--target T] [--markdown]  list stages and registered passes
//	fxport pipeline --target T [--backend B] print the default pipeline
//	fxport export FILE --target T -o OUT     run a target's pipeline and write the result
//	fxport explore FILE --target T -o PAGE.html  an HTML page of one export: passes, IR diffs, memory plan
//	fxport verify FILE --target onnx         export and compare with torch in ONNX Runtime
//	fxport bisect FILE --target T [--io DIR] find the first pass that changes the program's meaning
//	fxport inspect FILE.pte                  print a .pte/.ptd/.bpte file
//	fxport run FILE.pte [--inputs DIR]      execute a .pte with its memory plan
//	fxport run FILE.bpte                    run a bundled program's test cases
//	fxport replay REPRODUCER                 re-run a failing pass from its reproducer
//
// Run "fxport help COMMAND" or "fxport COMMAND --help" for a command's flags
// and examples; "fxport --version" (or "fxport version") prints the version.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/fxport/fxport/frontends/fxtext"
	"github.com/fxport/fxport/frontends/pt2"

	"github.com/fxport/fxport/internal/atomicfile"

	_ "github.com/fxport/fxport/passes"             // the ExecuTorch workarounds (and the Dynamo stages)
	_ "github.com/fxport/fxport/passes/onnxfix"     // the ONNX workarounds
	_ "github.com/fxport/fxport/targets/executorch" // the ExecuTorch invariant and declined rows
)

type command struct {
	name, usage, summary string
	run                  func(args []string, stdout, stderr io.Writer) error
}

func commands() []command {
	return []command{
		{"capture", "capture (--model FILE.py:FACTORY | --hf ARCH [--task T]) -o DIR [--dynamic] [--dim INPUT.DIM=[NAME:]MIN:MAX] [--target T]", "capture a PyTorch model with torch.export (capture steps applied) into DIR/program.pt2 with sample inputs and eager outputs, then export it with --target", runCapture},
		{"parse", "parse [--verify] [--verify-types] FILE", "print a program as IR text", runParse},
		{"passes", "passes [--target T] [--backend B] [--markdown]", "list each target's stages and every registered pass", runPasses},
		{"pipeline", "pipeline --target T [--backend B]", "print a target's default pipeline in text form", runPipeline},
		{"export", "export FILE --target T [--backend B] -o OUT [flags]", "run a target's pipeline on a program and write the result", runExport},
		{"explore", "explore PROGRAM --target T -o PAGE.html [--artifact FILE] [--no-time] [flags]", "export once and write a self-contained HTML page of the pipeline: passes, per-pass IR diffs, workarounds, the artifact and its memory plan", runExplore},
		{"verify", "verify PROGRAM --target onnx [--opset N] [--atol A] [--rtol R] [--io DIR]", "export to ONNX, run in ONNX Runtime and compare with torch's outputs", runVerify},
		{"replay", "replay REPRODUCER", "re-run the pipeline of a reproducer written by --reproducer", runReplay},
		{"run", "run FILE.pte|FILE.bpte [--method M] [--inputs DIR] [--data FILE.ptd] [-o OUTDIR] [--rtol R] [--atol A]", "execute a .pte with its memory plan (planned arenas, XNNPACK delegates) and print or write its outputs; run a .bpte's test cases", runRun},
		{"inspect", "inspect FILE.pte|.bpte|.ptd", "decode an ExecuTorch .pte and print its methods, instructions, delegates and memory plan", runInspect},
		{"bisect", "bisect PROGRAM --target T [--io DIR] [flags]", "find the first pass after which the interpreted program disagrees with torch", runBisect},
		{"version", "version", "print the fxport version and the VCS revision it was built from", runVersion},
	}
}

func main() {
	cleanupOnSignal(os.Exit)
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// cleanupOnSignal makes an interrupted command (Ctrl-C, kill) remove the
// temporary files of the outputs it was writing, then exit through exit
// with 130 (SIGINT) or 143 (SIGTERM): nothing partial stays behind.
func cleanupOnSignal(exit func(int)) {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		s := <-sigs
		n := atomicfile.RemoveTemps()
		fmt.Fprintf(os.Stderr, "fxport: %v: stopped (%d partial output files removed)\n", s, n)
		code := 130
		if s == syscall.SIGTERM {
			code = 143
		}
		exit(code)
	}()
}

// errReported is a failure whose message the command already printed
// (capture's Python side does): exit with its code, print nothing more.
type errReported struct{ code int }

func (e errReported) Error() string { return "failed" }

// errUsage marks errors that should print the command's usage.
var errUsage = errors.New("usage")

func run(args []string, stdout, stderr io.Writer) int {
	// The readers' limits are package settings that flags raise: every
	// command starts from the defaults, so one run's flags never carry into
	// the next run in the same process (tests, embedders of run).
	pt2.MaxJSONBytes, fxtext.MaxTextBytes, fxtext.MaxListElements = pt2.DefaultMaxJSONBytes, fxtext.DefaultMaxTextBytes, fxtext.DefaultMaxListElements
	if len(args) == 0 {
		usage(stderr)
		return 2
	}
	name := args[0]
	switch name {
	case "-h", "-help", "--help":
		usage(stdout)
		return 0
	case "--version", "-version":
		printVersion(stdout)
		return 0
	}
	if name == "help" {
		if len(args) > 1 {
			for _, c := range commands() {
				if c.name == args[1] {
					_ = c.run([]string{"-h"}, stdout, helpWriter{stdout})
					return 0
				}
			}
			fmt.Fprintf(stderr, "fxport help: unknown command %q\n", args[1])
			usage(stderr)
			return 2
		}
		usage(stdout)
		return 0
	}
	for _, c := range commands() {
		if c.name != name {
			continue
		}
		if wantsHelp(args[1:]) {
			_ = c.run([]string{"-h"}, stdout, helpWriter{stdout})
			return 0
		}
		out := &checkedWriter{w: stdout}
		err := c.run(args[1:], out, stderr)
		if err == nil && out.err != nil {
			// fxport run > /dev/full: the output is lost, say so.
			err = fmt.Errorf("writing the output: %w", out.err)
		}
		switch {
		case err == nil:
			return 0
		case errors.Is(err, flag.ErrHelp):
			return 0
		case errors.As(err, new(errReported)):
			return err.(errReported).code
		case errors.Is(err, errUsage):
			fmt.Fprintf(stderr, "fxport %s: %v\nusage: fxport %s\nRun \"fxport %s --help\" for its flags and examples.\n", name, strings.TrimPrefix(err.Error(), errUsage.Error()+": "), c.usage, name)
			return 2
		default:
			fmt.Fprintf(stderr, "fxport %s: %v\n", name, err)
			return 1
		}
	}
	fmt.Fprintf(stderr, "fxport: unknown command %q\n", name)
	usage(stderr)
	return 2
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "fxport compiles torch.export programs to ONNX and ExecuTorch.")
	fmt.Fprintln(w, "\nusage: fxport COMMAND [flags] [arguments]\n       fxport --version | --help")
	fmt.Fprintln(w, "\nCommands:")
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-10s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w, "\nRun \"fxport help COMMAND\" (or \"fxport COMMAND --help\") for a command's flags and examples.")
	fmt.Fprintln(w, "\nExample:\n  fxport export examples/mlp/program.fxir --target onnx -o mlp.onnx --report")
}

func usageErr(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{errUsage}, args...)...)
}

// newFlagSet returns a flag set that reports errors instead of exiting.
// Given a helpWriter, -h prints the command's full help (help.go); a bad
// flag prints the flag package's one-line error (run adds the synopsis).
func newFlagSet(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("fxport "+name, flag.ContinueOnError)
	fs.SetOutput(io.Discard) // run prints the parse error with the synopsis
	fs.Usage = func() {
		if hw, ok := stderr.(helpWriter); ok {
			printHelp(hw, name, fs)
		}
	}
	return fs
}

// parseInterspersed parses flags that may come before or after positional arguments.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, err
			}
			return nil, usageErr("%v", err)
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

// checkedWriter remembers the first write error of w (a full disk, a
// closed pipe), so that a command whose output was lost exits non-zero.
type checkedWriter struct {
	w   io.Writer
	err error
}

func (c *checkedWriter) Write(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	n, err := c.w.Write(p)
	if err != nil {
		c.err = err
	}
	return n, err
}
