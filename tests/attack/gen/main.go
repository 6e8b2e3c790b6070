// Command gen writes the small cases of the attack corpus into
// tests/attack/cases (run from the repository root:
// go run ./tests/attack/gen).
package main

import (
	"fmt"
	"os"
	"path/filepath"

	_ "github.com/fxport/fxport/passes" // the pipelines' passes
	_ "github.com/fxport/fxport/targets/executorch"
	"github.com/fxport/fxport/tests/attack"
)

func main() {
	cs, err := attack.Cases()
	if err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
	dir := filepath.Join("tests", "attack", "cases")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
	n := 0
	for _, c := range cs {
		if c.Big {
			continue
		}
		if err := os.WriteFile(filepath.Join(dir, c.Name), c.Data, 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "gen:", err)
			os.Exit(1)
		}
		n++
	}
	fmt.Printf("wrote %d cases to %s\n", n, dir)
}
