package main

import (
	"fmt"
	"strings"

	fxapi "github.com/fxport/fxport"
	"github.com/fxport/fxport/ir"
)

// loadProgram reads a program from a file (fxapi.Load): IR text (.fxir),
// an FX text dump (.fx, .txt) or what torch.export.save writes (.pt2).
// Its errors name the file.
func loadProgram(path string) (*ir.Program, error) {
	p, err := fxapi.Load(path)
	return p, nameInput(path, err)
}

// nameInput makes err name the input file path (every refusal does), unless
// it already does; nil stays nil.
func nameInput(path string, err error) error {
	if err == nil || strings.Contains(err.Error(), path) {
		return err
	}
	return fmt.Errorf("%s: %w", path, err)
}
