package layers

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	"golang.org/x/tools/go/packages"
)

const module = "github.com/fxport/fxport"

// layers lists fxport's packages from the bottom up. A package may import
// packages of its own layer and of the layers below, never above. A
// pattern ending in "/..." matches the package and everything under it.
var layers = []struct {
	name     string
	packages []string
}{
	{"base: utilities, generated schemas, symbolic integers", []string{
		"provenance", "internal/atomicfile", "internal/checkout", "internal/explorer", "internal/progress", "internal/inputfile", "internal/layers", "internal/memstat", "internal/ort", "internal/pt2schema", "internal/testenv",
		"pytree", "ir/sym", "gen/schema",
		"targets/executorch/fb/...", "targets/executorch/schema", "targets/executorch/internal/fbs", "targets/onnx/onnxpb"}},
	{"ir: the IR", []string{"ir"}},
	{"core: pass manager, interpreter, frontends, file formats, planner", []string{
		"pm", "rewrite", "interp", "interp/npy", "frontends/...", "capture",
		"targets/onnx/opt", "targets/executorch/pte", "targets/executorch/plan", "targets/executorch/partition"}},
	{"shared rewrite helpers", []string{"passes/edit"}},
	{"stage passes without a backend", []string{"passes/dynamo", "passes/onnxfix"}},
	{"targets: writers, delegates, runners", []string{"targets/onnx", "targets/pt2", "targets/executorch", "targets/executorch/..."}},
	{"ExecuTorch passes (lowering and partitioning use the delegates)", []string{"passes"}},
	{"public API", []string{""}},
	{"tools, tests and commands", []string{"difftest", "targets/executorch/internal/ettest", "tests/...", "cmd/...", "gen/opgen", "gen/etkernels", "gen/torchtags", "tools/...", "internal/oplint"}},
}

// families must not import each other: linking the ONNX target never links
// ExecuTorch, and the reverse.
var families = map[string][]string{
	"onnx":       {"targets/onnx/...", "passes/onnxfix"},
	"executorch": {"targets/executorch/...", "passes"},
}

// lean packages: what they link (their transitive imports) holds no
// package of these prefixes.
var lean = map[string][]string{
	"targets/onnx":   {"targets/executorch", "frontends", "passes", "targets/pt2", "interp"},
	"passes/onnxfix": {"targets/executorch", "frontends", "targets/pt2", "interp"},
	"passes/dynamo":  {"targets/", "frontends", "interp"},
	"passes/edit":    {"targets/", "frontends", "interp", "passes/dynamo", "passes/onnxfix"},
	"pm":             {"passes", "targets/", "frontends", "interp"},
}

func match(pattern, pkg string) bool {
	if p, ok := strings.CutSuffix(pattern, "/..."); ok {
		return pkg == p || strings.HasPrefix(pkg, p+"/")
	}
	return pkg == pattern
}

// layerOf returns the highest-priority (most specific) layer of pkg: an
// exact pattern wins over a "/..." one.
func layerOf(pkg string) int {
	best, exact := -1, false
	for i, l := range layers {
		for _, p := range l.packages {
			if !match(p, pkg) {
				continue
			}
			isExact := !strings.HasSuffix(p, "/...")
			if best < 0 || isExact && !exact {
				best, exact = i, isExact
			}
		}
	}
	return best
}

func familyOf(pkg string) string {
	for f, ps := range families {
		for _, p := range ps {
			if match(p, pkg) {
				return f
			}
		}
	}
	return ""
}

func load(t *testing.T) map[string][]string {
	t.Helper()
	cfg := &packages.Config{Mode: packages.NeedName | packages.NeedImports, Dir: "../.."}
	pkgs, err := packages.Load(cfg, "./...")
	if err != nil {
		t.Fatal(err)
	}
	graph := map[string][]string{}
	for _, p := range pkgs {
		if len(p.Errors) > 0 {
			t.Fatalf("%s: %v", p.PkgPath, p.Errors)
		}
		rel := strings.TrimPrefix(strings.TrimPrefix(p.PkgPath, module), "/")
		for imp := range p.Imports {
			if imp == module || strings.HasPrefix(imp, module+"/") {
				graph[rel] = append(graph[rel], strings.TrimPrefix(strings.TrimPrefix(imp, module), "/"))
			}
		}
		if _, ok := graph[rel]; !ok {
			graph[rel] = nil
		}
	}
	return graph
}

func TestImportsPointDown(t *testing.T) {
	graph := load(t)
	var problems []string
	for pkg, imps := range graph {
		li := layerOf(pkg)
		if li < 0 {
			problems = append(problems, fmt.Sprintf("%q is in no layer: add it to the table in internal/layers", pkg))
			continue
		}
		for _, imp := range imps {
			lj := layerOf(imp)
			if lj > li {
				problems = append(problems, fmt.Sprintf("%q (%s) imports %q of a higher layer (%s)", pkg, layers[li].name, imp, layers[lj].name))
			}
			if f, g := familyOf(pkg), familyOf(imp); f != "" && g != "" && f != g {
				problems = append(problems, fmt.Sprintf("%q (%s) imports %q (%s)", pkg, f, imp, g))
			}
		}
	}
	sort.Strings(problems)
	if len(problems) > 0 {
		t.Errorf("layering:\n\t%s", strings.Join(problems, "\n\t"))
	}
}

// deps is what `go list -deps` prints for pkg, within the module.
func deps(graph map[string][]string, pkg string) []string {
	seen := map[string]bool{}
	var walk func(string)
	walk = func(p string) {
		for _, q := range graph[p] {
			if !seen[q] {
				seen[q] = true
				walk(q)
			}
		}
	}
	walk(pkg)
	var out []string
	for p := range seen {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// The ONNX target links without ExecuTorch (and without the frontends):
// `go list -deps ./targets/onnx` holds none of their packages. Likewise for
// the other lean packages.
func TestLeanPackages(t *testing.T) {
	graph := load(t)
	for pkg, banned := range lean {
		if _, ok := graph[pkg]; !ok {
			t.Errorf("lean package %q not found", pkg)
			continue
		}
		for _, d := range deps(graph, pkg) {
			for _, b := range banned {
				if d == b || strings.HasPrefix(d, strings.TrimSuffix(b, "/")+"/") || strings.HasSuffix(b, "/") && strings.HasPrefix(d, b) {
					t.Errorf("%s links %s", pkg, d)
				}
			}
		}
	}
}
