package main

import (
	"fmt"
	"path/filepath"

	"github.com/fxport/fxport/frontends/fxtext"
	"github.com/fxport/fxport/frontends/pt2"
	"github.com/fxport/fxport/internal/inputfile"
	"github.com/fxport/fxport/ir"
)

// loadProgram reads a program from a file: IR text (.fxir), an FX text
// dump (.fx, .txt: print(gm.graph), gm.code, gm.print_readable() or
// print(exported_program)), or what torch.export.save writes (.pt2).
func loadProgram(path string) (*ir.Program, error) {
	if err := inputfile.Check(path); err != nil {
		return nil, err
	}
	switch ext := filepath.Ext(path); ext {
	case ".fxir", ".ir":
		src, err := inputfile.ReadFile(path, 0)
		if err != nil {
			return nil, err
		}
		return ir.Parse(src, path)
	case ".fx", ".txt":
		src, err := inputfile.ReadFile(path, 0)
		if err != nil {
			return nil, err
		}
		return fxtext.Parse(src, path, fxtext.Options{})
	case ".pt2":
		return pt2.Read(path)
	default:
		return nil, fmt.Errorf("%s: no frontend reads %q files yet (IR text .fxir, FX text dumps .fx, .txt and .pt2 archives are supported)", path, ext)
	}
}
