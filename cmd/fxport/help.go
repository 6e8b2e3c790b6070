package main

import (
	"flag"
	"fmt"
	"io"
	"strings"
)

// commandHelp is what `fxport help COMMAND` and `fxport COMMAND --help`
// print beyond the synopsis and the flags: a description and examples.
// Every command has at least one example (TestEveryCommandHasHelp).
var commandHelp = map[string]struct {
	about    string
	examples []string
}{
	"parse": {"Reads a program (.pt2, an FX text dump .fx/.txt, IR text .fxir) and prints it as IR text.",
		[]string{"fxport parse examples/mlp/program.fxir", "fxport parse --verify-types --input-types 'x=f32[2,3]' dump.txt"}},
	"passes": {"Lists each target's stages and every registered pass, patch and fix with its catalog ID.",
		[]string{"fxport passes --target onnx", "fxport passes --markdown > docs/passes.md"}},
	"pipeline": {"Prints a target's default pipeline in the text form --pipeline accepts.",
		[]string{"fxport pipeline --target executorch --backend executorch.xnnpack"}},
	"export": {"Runs a target's pipeline and writes the result; the extension of -o picks the format\n(.onnx, .pte, .pt2, .bpte, or .fxir for the IR after the pipeline).",
		[]string{"fxport export examples/mlp/program.fxir --target onnx -o mlp.onnx --report",
			"fxport export model.pt2 --target all -o out/ --report-json out/report.json",
			"fxport export model.pt2 --target executorch-xnnpack -o model.pte --time"}},
	"explore": {"Runs one export with the pass manager's print-after-change dumps and writes one HTML file\n(inline CSS and JavaScript; it fetches nothing) to open in a browser: the passes with their\ntimes and changes, a diff of the IR against the previous IR for every pass that changed it\n(the changed nodes highlighted in the full listing), the workarounds that fired linked to\ntheir nodes and catalog IDs, and the artifact: node or instruction counts, delegates and,\nfor a .pte, each planned buffer drawn over the instructions. With --no-time the page is\nbyte-identical for the same input. The artifact is kept only with --artifact.",
		[]string{"fxport explore tests/corpus/resnet18/program.pt2 --target executorch-xnnpack -o resnet18.html",
			"fxport explore examples/mlp/program.fxir --target onnx -o mlp.html --artifact mlp.onnx"}},
	"verify": {"Exports to ONNX, runs the model in ONNX Runtime on the fixture's inputs and compares each\noutput with torch's (or, without a fixture, with the reference interpreter's).",
		[]string{"fxport verify tests/corpus/resnet18/program.pt2 --target onnx", "fxport verify model.pt2 --io fixtures/ --opset 20"}},
	"replay": {"Re-runs the pipeline stored in a reproducer (written by export --reproducer) on the IR it holds.",
		[]string{"fxport replay repro.txt   # after fxport export model.pt2 --target onnx -o m.onnx --reproducer repro.txt failed"}},
	"run": {"Executes a .pte with its memory plan (planned arenas, XNNPACK delegates) and prints or\nwrites its outputs; runs a .bpte's test cases and exits 1 on a mismatch.",
		[]string{"fxport run model.pte --inputs io/ -o outputs/", "fxport run model.bpte --rtol 1e-4"}},
	"inspect": {"Decodes an ExecuTorch file and prints its methods, instructions, delegates and memory plan.",
		[]string{"fxport inspect model.pte"}},
	"bisect": {"Interprets the program after every pass of the target's pipeline and reports the first pass\nwhose result disagrees with torch's outputs (--io) or with the interpreted input program, the\nnode where values first diverge, and which patch, reverted, restores agreement.\nExit status 1 when it finds a disagreement.",
		[]string{"fxport bisect model.pt2 --target onnx --io tests/corpus/resnet18", "fxport bisect model.pt2 --target executorch-portable --exclude-patch ONNX-P01"}},
	"version": {"Prints the fxport version artifacts record (module version, VCS revision, +dirty) and the\nbuild info it comes from. Also: fxport --version.",
		[]string{"fxport version"}},
}

// helpWriter marks the writer a command gets when its help was asked for:
// newFlagSet then prints the full help on -h.
type helpWriter struct{ io.Writer }

// aliasPrefix starts the usage of a hidden alias flag.
const aliasPrefix = "\x00alias of -"

// alias registers hidden as another name of the flag canonical: it sets
// the same value and is left out of the help.
func alias(fs *flag.FlagSet, hidden, canonical string) {
	f := fs.Lookup(canonical)
	fs.Var(f.Value, hidden, aliasPrefix+canonical)
}

// isAlias reports whether f is a hidden alias.
func isAlias(f *flag.Flag) bool { return strings.HasPrefix(f.Usage, aliasPrefix) }

// wantsHelp reports whether args ask for help (-h, -help, --help before a
// "--").
func wantsHelp(args []string) bool {
	for _, a := range args {
		switch a {
		case "--":
			return false
		case "-h", "-help", "--help":
			return true
		}
	}
	return false
}

// printHelp writes a command's help: synopsis, description, flags, examples.
func printHelp(w io.Writer, name string, fs *flag.FlagSet) {
	for _, c := range commands() {
		if c.name == name {
			fmt.Fprintf(w, "usage: fxport %s\n\n%s.\n", c.usage, upperFirst(c.summary))
		}
	}
	h := commandHelp[name]
	if h.about != "" {
		fmt.Fprintf(w, "\n%s\n", h.about)
	}
	var flags []*flag.Flag
	fs.VisitAll(func(f *flag.Flag) {
		if !isAlias(f) {
			flags = append(flags, f)
		}
	})
	if len(flags) > 0 {
		fmt.Fprintln(w, "\nFlags:")
		for _, f := range flags {
			kind, usage := flag.UnquoteUsage(f)
			dash := "--"
			if len(f.Name) == 1 {
				dash = "-"
			}
			head := "  " + dash + f.Name
			if kind != "" {
				head += " " + kind
			}
			if d := f.DefValue; d != "" && d != "false" && d != "0" && d != "[]" {
				usage += fmt.Sprintf(" (default %s)", d)
			}
			fmt.Fprintf(w, "%s\n      %s\n", head, usage)
		}
	}
	if len(h.examples) > 0 {
		fmt.Fprintln(w, "\nExamples:")
		for _, e := range h.examples {
			fmt.Fprintf(w, "  %s\n", e)
		}
	}
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
