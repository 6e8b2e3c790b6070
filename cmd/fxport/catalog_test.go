package main

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/fxport/fxport/pm"
)

// repoRoot is the module root, relative to this package.
const repoRoot = "../.."

// catalogPath is the workaround catalog, which lives next to the
// repository (shared/reference), not inside it.
var catalogPath = filepath.Join(repoRoot, "..", "shared", "reference", "workaround-catalog.md")

// catalogRow is one row of the catalog's central table.
type catalogRow struct {
	ID, PostTrace string
	Line          int
}

// readCatalogRows parses the rows of "## 1. Central table": the table lines
// whose first cell is a catalog ID. The Post-trace column is the 8th.
func readCatalogRows(path string) ([]catalogRow, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var rows []catalogRow
	in := false
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for line := 1; sc.Scan(); line++ {
		text := sc.Text()
		if strings.HasPrefix(text, "## ") {
			in = strings.HasPrefix(text, "## 1. Central table")
			continue
		}
		if !in || !strings.HasPrefix(text, "| ") {
			continue
		}
		cells := strings.Split(strings.Trim(strings.TrimSpace(text), "|"), " | ")
		id := strings.TrimSpace(cells[0])
		if !pm.ValidID(id) {
			continue // header or separator
		}
		if len(cells) != 9 {
			return nil, fmt.Errorf("%s:%d: row %s has %d cells, want 9", path, line, id, len(cells))
		}
		rows = append(rows, catalogRow{ID: id, PostTrace: strings.TrimSpace(cells[7]), Line: line})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("%s: no rows under \"## 1. Central table\"", path)
	}
	return rows, nil
}

func loadCatalog(t *testing.T) []catalogRow {
	t.Helper()
	if _, err := os.Stat(catalogPath); err != nil {
		t.Skipf("workaround catalog not found at %s (CI has it): %v", catalogPath, err)
	}
	rows, err := readCatalogRows(catalogPath)
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// Every row of the catalog is some entry of pm's catalog (pass, patch,
// fix, translation, capture step, invariant, declined row, …), and every
// ID pm knows is a row of the catalog.
func TestEveryCatalogRowIsRegistered(t *testing.T) {
	rows := loadCatalog(t)
	kinds := map[string][]string{}
	for _, e := range pm.Default.List() {
		if e.ID != "" {
			kinds[e.ID] = append(kinds[e.ID], e.Kind.String())
		}
	}
	known := map[string]bool{}
	var missing []string
	for _, r := range rows {
		known[r.ID] = true
		if len(kinds[r.ID]) == 0 {
			missing = append(missing, fmt.Sprintf("%s (line %d, %s)", r.ID, r.Line, r.PostTrace))
		}
	}
	if len(missing) > 0 {
		t.Errorf("catalog rows with no pm entry (register a pass, fix, capture step, invariant or declined row):\n\t%s", strings.Join(missing, "\n\t"))
	}
	var unknown []string
	for id := range kinds {
		if !known[id] {
			unknown = append(unknown, id)
		}
	}
	sort.Strings(unknown)
	if len(unknown) > 0 {
		t.Errorf("registered IDs that are not rows of %s: %s", catalogPath, strings.Join(unknown, ", "))
	}
}

// A row the catalog marks "invariant" is a property of fxport's code, so
// pm must declare it as one (with its test) or say why it is declined; the
// ONNX translation rows are themselves the translation table.
func TestInvariantRowsAreDeclared(t *testing.T) {
	rows := loadCatalog(t)
	var bad []string
	for _, r := range rows {
		if !strings.HasPrefix(r.PostTrace, "invariant") {
			continue
		}
		if len(pm.Default.Invariants.ByID(r.ID))+len(pm.Default.Declined.ByID(r.ID))+len(pm.Default.Translations.ByID(r.ID)) == 0 {
			bad = append(bad, r.ID)
		}
	}
	if len(bad) > 0 {
		t.Errorf("invariant rows declared neither as pm.Invariant nor pm.Declined: %s", strings.Join(bad, ", "))
	}
}

// testFuncRE finds top-level test functions.
var testFuncRE = regexp.MustCompile(`(?m)^func (Test[A-Za-z0-9_]*)\(`)

// Every invariant names tests that exist and a Where that exists, so a
// renamed test or moved file cannot leave a stale declaration behind.
func TestInvariantReferencesExist(t *testing.T) {
	funcs := map[string]map[string]bool{} // package dir → test funcs
	testsIn := func(dir string) map[string]bool {
		if m, ok := funcs[dir]; ok {
			return m
		}
		m := map[string]bool{}
		files, _ := filepath.Glob(filepath.Join(repoRoot, dir, "*_test.go"))
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			for _, sm := range testFuncRE.FindAllStringSubmatch(string(b), -1) {
				m[sm[1]] = true
			}
		}
		funcs[dir] = m
		return m
	}
	invs := pm.Default.Invariants.All()
	if len(invs) == 0 {
		t.Fatal("no invariants registered")
	}
	for _, v := range invs {
		for _, ref := range v.Tests() {
			dot := strings.Index(ref, ".Test")
			dir, name := ref[:dot], ref[dot+1:]
			sub := ""
			if i := strings.IndexByte(name, '/'); i >= 0 {
				name, sub = name[:i], name[i+1:]
			}
			if !testsIn(dir)[name] {
				t.Errorf("invariant %s (%s): test %s: no func %s in %s/*_test.go", v.Name, v.ID, ref, name, dir)
				continue
			}
			if dir == "tests" && name == "TestGolden" && sub != "" {
				// Golden subtests are named after their input file.
				fx, _ := filepath.Glob(filepath.Join(repoRoot, dir, sub+".fx*"))
				if len(fx) == 0 {
					t.Errorf("invariant %s (%s): test %s: no golden input %s.fxir", v.Name, v.ID, ref, sub)
				}
			}
		}
		for _, w := range strings.Split(v.Where, ",") {
			path := strings.Fields(strings.TrimSpace(w))[0]
			if m, _ := filepath.Glob(filepath.Join(repoRoot, path)); len(m) == 0 {
				t.Errorf("invariant %s (%s): Where names %q, which does not exist", v.Name, v.ID, path)
			}
		}
	}
}

// The listing shows invariants with their test and declined rows with
// their reason.
func TestPassesListsInvariantsAndDeclined(t *testing.T) {
	out, _, code := fxport(t, "passes", "--target", "onnx")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	for _, want := range []string{
		"invariant  ONNX-IR01 onnx-topk-sorted",
		"test: targets/onnx.TestInvariantsCatchViolations (in targets/onnx/invariants.go)",
		"declined   ONNX-P14  onnx-masked-mean-zero-rows",
		"not applicable: torch.export traces torch.masked.mean",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("fxport passes --target onnx lacks %q", want)
		}
	}
	md := passesMarkdown([]string{pm.TargetExecuTorch})
	for _, want := range []string{
		"| ET-P42 | `et-backed-symbols-kept` | executorch |",
		"`targets/executorch.TestInvariant_ET_P42`",
		"| ET-P13 | `et-dim-order-from-stride` | executorch |",
		"`ir.TestDimOrderFromStrides`",
		"`targets/executorch.TestInvariant_ET_P13`",
		"| ET-B06 | `et-openvino-prepare` | executorch.openvino |",
		"`targets/executorch/openvino.TestInvariant_ET_B06`",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("passes --markdown lacks %q", want)
		}
	}
}
