package main

import (
	fxapi "github.com/fxport/fxport"
	"github.com/fxport/fxport/ir"
)

// loadProgram reads a program from a file (fxapi.Load): IR text (.fxir),
// an FX text dump (.fx, .txt) or what torch.export.save writes (.pt2).
func loadProgram(path string) (*ir.Program, error) { return fxapi.Load(path) }
