package main

import (
	"flag"
	"fmt"
	"io"

	"github.com/fxport/fxport/targets/executorch/pte"
	etrun "github.com/fxport/fxport/targets/executorch/run"
)

// runBundledCases runs every test case of a bundled program (fxport run
// FILE.bpte), prints one line per case and fails when any case fails.
func runBundledCases(f *pte.File, opts etrun.BundledOptions, stdout io.Writer) error {
	if opts.RTol < 0 || opts.ATol < 0 {
		return usageErr("--rtol and --atol must not be negative")
	}
	results, err := etrun.RunBundled(f, opts)
	if err != nil {
		return err
	}
	failed := 0
	for _, r := range results {
		if r.Passed() {
			fmt.Fprintf(stdout, "%s case %d: pass (max abs error %.3g)\n", r.Method, r.Case, r.MaxAbsErr)
			continue
		}
		failed++
		fmt.Fprintf(stdout, "%s case %d: FAIL: %v\n", r.Method, r.Case, r.Err)
	}
	fmt.Fprintf(stdout, "%d of %d test case(s) passed (rtol %g, atol %g)\n", len(results)-failed, len(results), opts.RTol, opts.ATol)
	if len(results) == 0 {
		return fmt.Errorf("%s: the bundled program holds no test cases", f.Name)
	}
	if failed > 0 {
		return fmt.Errorf("%s: %d of %d test case(s) failed", f.Name, failed, len(results))
	}
	return nil
}

// flagSet reports whether the flag name was given on the command line.
func flagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) {
		if f.Name == name {
			set = true
		}
	})
	return set
}
