// Command opgen generates ir/opgen.go from gen/ops.spec: the Op constants,
// the op table (names, parsed schemas, properties, twins, shape/dtype rules)
// and the argument-position constants. See gen/README.md.
//
// Usage (from ir/generate.go):
//
//	go run ../gen/opgen -spec ../gen/ops.spec -kernels ../gen/etkernels.spec -tags ../gen/torchtags.spec -out opgen.go
//
// The rule functions are looked up in the infer_*.go files next to -out
// (override with -rules).
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
)

func main() {
	specPath := flag.String("spec", "../gen/ops.spec", "the op spec to read")
	outPath := flag.String("out", "opgen.go", "the Go file to write")
	rulesGlob := flag.String("rules", "", "glob of the Go files holding the infer rules (default: infer_*.go beside -out)")
	kernelsPath := flag.String("kernels", "", "the ExecuTorch kernel list to merge (gen/etkernels.spec); empty for none")
	tagsPath := flag.String("tags", "", "torch's operator tags to merge (gen/torchtags.spec); empty for none")
	check := flag.Bool("check", false, "only check that -out is up to date; exit 1 if not")
	flag.Parse()
	if err := run(*specPath, *kernelsPath, *tagsPath, *outPath, *rulesGlob, *check); err != nil {
		fmt.Fprintln(os.Stderr, "opgen:", err)
		os.Exit(1)
	}
}

func run(specPath, kernelsPath, tagsPath, outPath, rulesGlob string, check bool) error {
	if rulesGlob == "" {
		rulesGlob = filepath.Join(filepath.Dir(outPath), "infer_*.go")
	}
	src, err := os.ReadFile(specPath)
	if err != nil {
		return err
	}
	funcs, err := FindRules(rulesGlob)
	if err != nil {
		return err
	}
	if len(funcs) == 0 {
		return fmt.Errorf("no rule functions found in %s", rulesGlob)
	}
	var ksrc []byte
	kname := ""
	if kernelsPath != "" {
		if ksrc, err = os.ReadFile(kernelsPath); err != nil {
			return err
		}
		kname = filepath.Base(kernelsPath)
	}
	var tsrc []byte
	tname := ""
	if tagsPath != "" {
		if tsrc, err = os.ReadFile(tagsPath); err != nil {
			return err
		}
		tname = filepath.Base(tagsPath)
	}
	out, err := GenerateWithData(filepath.Base(specPath), src, kname, ksrc, tname, tsrc, funcs)
	if err != nil {
		return err
	}
	if check {
		old, err := os.ReadFile(outPath)
		if err != nil {
			return err
		}
		if !bytes.Equal(old, out) {
			return fmt.Errorf("%s is stale: run go generate ./ir", outPath)
		}
		return nil
	}
	return writeIfChanged(outPath, out)
}

func writeIfChanged(path string, data []byte) error {
	if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, data) {
		return nil
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
