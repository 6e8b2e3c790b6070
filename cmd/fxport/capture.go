package main

import (
	"context"
	"errors"
	"io"

	"github.com/fxport/fxport/capture"
)

// runCapture hands its arguments to the Python capture front door
// (package capture): `fxport capture --model FILE.py:FACTORY -o DIR` or
// `fxport capture --hf gpt2 --task causal-lm -o DIR`.
func runCapture(args []string, stdout, stderr io.Writer) error {
	err := capture.Run(context.Background(), args, capture.Options{Stdout: stdout, Stderr: stderr})
	var ee *capture.ExitError
	if errors.As(err, &ee) {
		return errReported{code: ee.Code}
	}
	return err
}
