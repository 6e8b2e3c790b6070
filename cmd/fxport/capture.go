package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	fxapi "github.com/fxport/fxport"
	"github.com/fxport/fxport/capture"
)

// runCapture hands its arguments to the Python capture front door
// (package capture): `fxport capture --model FILE.py:FACTORY -o DIR` or
// `fxport capture --hf gpt2 --task causal-lm -o DIR`. With --target T (a
// comma list, or all) it then exports DIR/program.pt2 to each target as
// `fxport export` does, into DIR/model.EXT (DIR/model.TARGET.EXT where two
// targets share an extension).
func runCapture(args []string, stdout, stderr io.Writer) error {
	args, target, err := captureTarget(args)
	if err != nil {
		return usageErr("%v", err)
	}
	var targets []fxapi.Target
	if target != "" {
		if targets, err = captureTargets(target); err != nil {
			return usageErr("--target: %v", err)
		}
	}
	err = capture.Run(context.Background(), args, capture.Options{Stdout: stdout, Stderr: stderr})
	var ee *capture.ExitError
	if errors.As(err, &ee) {
		return errReported{code: ee.Code}
	}
	if err != nil || target == "" {
		return err
	}
	dir := captureOut(args)
	exts := map[string]int{}
	for _, t := range targets {
		exts[t.Ext()]++
	}
	var failed []string
	for _, t := range targets {
		name := "model" + t.Ext()
		if exts[t.Ext()] > 1 {
			name = "model." + t.String() + t.Ext()
		}
		if rc := run([]string{"export", filepath.Join(dir, "program.pt2"), "--target", t.String(), "-o", filepath.Join(dir, name)}, stdout, stderr); rc != 0 {
			failed = append(failed, t.String())
		}
	}
	if len(failed) > 0 {
		fmt.Fprintf(stderr, "fxport capture: the capture is in %s; the export to %s failed (above)\n", dir, strings.Join(failed, ", "))
		return errReported{code: 1}
	}
	return nil
}

// captureTargets reads --target: one of export's targets, a comma list, or
// all (every target with an emitter).
func captureTargets(spec string) ([]fxapi.Target, error) {
	var out []fxapi.Target
	for _, name := range strings.Split(spec, ",") {
		name = strings.TrimSpace(name)
		if name == "all" {
			for _, t := range exportTargets {
				if hasEmitter(t) {
					out = append(out, t)
				}
			}
			continue
		}
		t, err := fxapi.ParseTarget(name)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, nil
}

// captureTarget takes --target T (or --target=T) out of the capture's
// arguments: the capture itself does not read it.
func captureTarget(args []string) (rest []string, target string, err error) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--target" || a == "-target":
			if i+1 >= len(args) {
				return nil, "", fmt.Errorf("--target needs a value")
			}
			target = args[i+1]
			i++
		case strings.HasPrefix(a, "--target=") || strings.HasPrefix(a, "-target="):
			target = a[strings.IndexByte(a, '=')+1:]
		default:
			rest = append(rest, a)
		}
	}
	return rest, target, nil
}

// captureOut is the directory the capture wrote (its -o/--out).
func captureOut(args []string) string {
	for i, a := range args {
		switch {
		case (a == "-o" || a == "--out") && i+1 < len(args):
			return args[i+1]
		case strings.HasPrefix(a, "--out="), strings.HasPrefix(a, "-o="):
			return a[strings.IndexByte(a, '=')+1:]
		}
	}
	return "."
}
