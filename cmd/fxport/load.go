package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/fxport/fxport/ir"
)

// loadProgram reads a program from a file. IR text (.fxir) is read now;
// .pt2 archives and FX text dumps arrive with the frontends.
func loadProgram(path string) (*ir.Program, error) {
	switch ext := filepath.Ext(path); ext {
	case ".fxir", ".ir":
		src, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		return ir.Parse(src, path)
	default:
		return nil, fmt.Errorf("%s: no frontend reads %q files yet (IR text .fxir is supported)", path, ext)
	}
}
