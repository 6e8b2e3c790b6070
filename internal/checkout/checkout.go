// Package checkout finds an fxport checkout on disk: the module root (the
// directory holding go.mod) and the tools `make` installs under it
// (third_party/venv, the project's Python environment).
package checkout

import (
	"os"
	"path/filepath"
)

// Root is the nearest directory at or above dir that holds go.mod, or ""
// when there is none (or dir is empty).
func Root(dir string) string {
	if dir == "" || dir == "." {
		return ""
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}

// VenvDir is where `make venv` puts the Python environment under root.
func VenvDir(root string) string { return filepath.Join(root, "third_party", "venv") }

// VenvPython is the venv's interpreter under root, or "" when it is not
// there (or root is "").
func VenvPython(root string) string {
	if root == "" {
		return ""
	}
	p := filepath.Join(VenvDir(root), "bin", "python")
	if st, err := os.Stat(p); err != nil || st.IsDir() {
		return ""
	}
	return p
}
