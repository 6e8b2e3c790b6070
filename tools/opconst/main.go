// Command opconst rewrites op-name string literals into the generated op
// constants of package ir (ir/opgen.go):
//
//	ir.MustLookupOp("aten.add.Tensor")      → ir.OpAtenAddTensor
//	n.Op.String() == "aten.add.Tensor"      → n.Op == ir.OpAtenAddTensor
//	switch n.Op.Info().Name { case "aten.x" → switch n.Op { case ir.OpAtenX
//	register(k, "aten.relu.default")        → register(k, ir.OpAtenRelu)   (parameter of type ir.Op)
//	map[ir.Op]T{"aten.relu.default": …}     → map[ir.Op]T{ir.OpAtenRelu: …}
//
// and lists the op-name literals it could not convert (internal/oplint's
// test fails on them), so a person changes the surrounding types (a
// map[string]T of ops becomes map[ir.Op]T, a names ...string parameter
// ops ...ir.Op) and runs it again. Run it from the module root:
//
//	go run ./tools/opconst [-n] [-tests] ./passes/... ./interp
package main

import (
	"bytes"
	"flag"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"sort"
	"strconv"
	"strings"

	"github.com/fxport/fxport/internal/oplint"
	"golang.org/x/tools/go/ast/astutil"
	"golang.org/x/tools/go/packages"
)

const irPath = "github.com/fxport/fxport/ir"

var (
	dryRun = flag.Bool("n", false, "report only; write nothing")
	tests  = flag.Bool("tests", false, "also rewrite _test.go files")
	quiet  = flag.Bool("q", false, "do not list the literals left")
)

func main() {
	flag.Parse()
	consts, err := oplint.Consts("ir/opgen.go")
	if err != nil {
		fmt.Fprintln(os.Stderr, "opconst:", err)
		os.Exit(1)
	}
	files, err := convert(consts, &packages.Config{Tests: *tests}, flag.Args()...)
	if err != nil {
		fmt.Fprintln(os.Stderr, "opconst:", err)
		os.Exit(1)
	}
	total, left := 0, 0
	for _, f := range files {
		total += f.edits
		left += len(f.left)
		if !*quiet {
			for _, l := range f.left {
				fmt.Println(l)
			}
		}
		if f.edits > 0 && !*dryRun {
			if err := os.WriteFile(f.name, f.out, 0o644); err != nil {
				fmt.Fprintln(os.Stderr, "opconst:", err)
				os.Exit(1)
			}
		}
	}
	fmt.Fprintf(os.Stderr, "opconst: %d edits, %d op-name literals left\n", total, left)
}

// fileResult is one rewritten file: its new text, the number of edits and
// the literals left ("file:line: literal (why)").
type fileResult struct {
	name  string
	out   []byte
	edits int
	left  []string
}

// convert loads the packages of patterns with cfg (its Mode is set here)
// and rewrites their files, test files only when cfg.Tests is set;
// generated files and frontends/ are left alone.
func convert(consts map[string]string, cfg *packages.Config, patterns ...string) ([]fileResult, error) {
	cfg.Mode = packages.NeedName | packages.NeedFiles | packages.NeedSyntax |
		packages.NeedTypes | packages.NeedTypesInfo | packages.NeedImports
	pkgs, err := packages.Load(cfg, patterns...)
	if err != nil {
		return nil, err
	}
	var out []fileResult
	done := map[string]bool{}
	for _, p := range pkgs {
		for _, f := range p.Syntax {
			name := p.Fset.Position(f.Package).Filename
			if done[name] || oplint.Generated(f) || strings.Contains(name, "/frontends/") ||
				(!cfg.Tests && strings.HasSuffix(name, "_test.go")) {
				continue
			}
			done[name] = true
			r := &rewriter{pkg: p, file: f, fset: p.Fset, consts: consts, inIR: p.PkgPath == irPath}
			r.run()
			res := fileResult{name: name, edits: len(r.edits), left: r.left}
			if len(r.edits) > 0 {
				src, ok := cfg.Overlay[name]
				if !ok {
					if src, err = os.ReadFile(name); err != nil {
						return nil, err
					}
				}
				if res.out, err = r.rewrite(name, src); err != nil {
					return nil, err
				}
			}
			out = append(out, res)
		}
	}
	return out, nil
}

type edit struct {
	start, end int
	text       string
}

type rewriter struct {
	pkg    *packages.Package
	file   *ast.File
	fset   *token.FileSet
	consts map[string]string
	inIR   bool
	parent map[ast.Node]ast.Node
	edits  []edit
	done   map[ast.Node]bool
	left   []string
}

func (r *rewriter) off(p token.Pos) int { return r.fset.Position(p).Offset }

func (r *rewriter) replace(n ast.Node, text string) {
	r.edits = append(r.edits, edit{r.off(n.Pos()), r.off(n.End()), text})
	r.done[n] = true
}

func (r *rewriter) constFor(lit *ast.BasicLit) (string, bool) {
	if lit.Kind != token.STRING {
		return "", false
	}
	s, err := strconv.Unquote(lit.Value)
	if err != nil {
		return "", false
	}
	c, ok := r.consts[s]
	if !ok {
		return "", false
	}
	if r.inIR {
		return c, true
	}
	return "ir." + c, true
}

func (r *rewriter) isOpType(t types.Type) bool {
	n, ok := t.(*types.Named)
	return ok && n.Obj().Name() == "Op" && n.Obj().Pkg() != nil && n.Obj().Pkg().Path() == irPath
}

func (r *rewriter) typeOf(e ast.Expr) types.Type { return r.pkg.TypesInfo.TypeOf(e) }

// opExpr returns X when e is X.String() or X.Info().Name with X an ir.Op.
func (r *rewriter) opExpr(e ast.Expr) ast.Expr {
	switch e := ast.Unparen(e).(type) {
	case *ast.CallExpr:
		if sel, ok := e.Fun.(*ast.SelectorExpr); ok && len(e.Args) == 0 && sel.Sel.Name == "String" {
			if t := r.typeOf(sel.X); t != nil && r.isOpType(t) {
				return sel.X
			}
		}
	case *ast.SelectorExpr:
		if e.Sel.Name != "Name" {
			return nil
		}
		if c, ok := e.X.(*ast.CallExpr); ok && len(c.Args) == 0 {
			if sel, ok := c.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "Info" {
				if t := r.typeOf(sel.X); t != nil && r.isOpType(t) {
					return sel.X
				}
			}
		}
	}
	return nil
}

func (r *rewriter) src(e ast.Node) string {
	var b bytes.Buffer
	format.Node(&b, r.fset, e)
	return b.String()
}

func (r *rewriter) run() {
	r.parent = map[ast.Node]ast.Node{}
	r.done = map[ast.Node]bool{}
	var stack []ast.Node
	ast.Inspect(r.file, func(n ast.Node) bool {
		if n == nil {
			stack = stack[:len(stack)-1]
			return false
		}
		if len(stack) > 0 {
			r.parent[n] = stack[len(stack)-1]
		}
		stack = append(stack, n)
		return true
	})
	// Switch statements first: they rewrite the tag and all cases at once.
	ast.Inspect(r.file, func(n ast.Node) bool {
		sw, ok := n.(*ast.SwitchStmt)
		if !ok || sw.Tag == nil {
			return true
		}
		x := r.opExpr(sw.Tag)
		if x == nil {
			return true
		}
		var lits []*ast.BasicLit
		for _, st := range sw.Body.List {
			for _, e := range st.(*ast.CaseClause).List {
				lit, ok := e.(*ast.BasicLit)
				if _, known := r.constFor(lit); !ok || !known {
					return true
				}
				lits = append(lits, lit)
			}
		}
		r.replace(sw.Tag, r.src(x))
		for _, lit := range lits {
			c, _ := r.constFor(lit)
			r.replace(lit, c)
		}
		return true
	})
	ast.Inspect(r.file, func(n ast.Node) bool {
		lit, ok := n.(*ast.BasicLit)
		if !ok || lit.Kind != token.STRING || r.done[lit] {
			return true
		}
		s, _ := strconv.Unquote(lit.Value)
		c, known := r.constFor(lit)
		if isOp, _ := oplint.Classify(s, r.consts); !isOp {
			return true
		}
		if known && r.convert(lit, c) {
			return true
		}
		pos := r.fset.Position(lit.Pos())
		why := "string context"
		if !known {
			why = "NOT IN OP TABLE"
		}
		r.left = append(r.left, fmt.Sprintf("%s:%d: %s (%s)", pos.Filename, pos.Line, lit.Value, why))
		return true
	})
}

// convert rewrites lit (and its surroundings) when its context allows.
func (r *rewriter) convert(lit *ast.BasicLit, c string) bool {
	p := r.parent[lit]
	switch p := p.(type) {
	case *ast.CallExpr:
		if r.isFunc(p.Fun, "MustLookupOp") && len(p.Args) == 1 {
			r.replace(p, c)
			return true
		}
		sig, ok := r.typeOf(p.Fun).(*types.Signature)
		if !ok {
			return false
		}
		for i, a := range p.Args {
			if a != lit {
				continue
			}
			var t types.Type
			params := sig.Params()
			switch {
			case sig.Variadic() && i >= params.Len()-1:
				t = params.At(params.Len() - 1).Type().(*types.Slice).Elem()
			case i < params.Len():
				t = params.At(i).Type()
			}
			if t != nil && r.isOpType(t) {
				r.replace(lit, c)
				return true
			}
		}
	case *ast.BinaryExpr:
		if p.Op != token.EQL && p.Op != token.NEQ {
			return false
		}
		other := p.X
		if other == lit {
			other = p.Y
		}
		if x := r.opExpr(other); x != nil {
			r.replace(other, r.src(x))
			r.replace(lit, c)
			return true
		}
		if t := r.typeOf(other); t != nil && r.isOpType(t) {
			r.replace(lit, c)
			return true
		}
	case *ast.CaseClause:
		if sw, ok := r.parent[p].(*ast.BlockStmt); ok {
			if s, ok := r.parent[sw].(*ast.SwitchStmt); ok && s.Tag != nil {
				if t := r.typeOf(s.Tag); t != nil && r.isOpType(t) {
					r.replace(lit, c)
					return true
				}
			}
		}
	case *ast.CompositeLit:
		if t := r.typeOf(p); t != nil {
			switch u := t.Underlying().(type) {
			case *types.Slice:
				if r.isOpType(u.Elem()) {
					r.replace(lit, c)
					return true
				}
			case *types.Array:
				if r.isOpType(u.Elem()) {
					r.replace(lit, c)
					return true
				}
			}
		}
	case *ast.KeyValueExpr:
		cl, ok := r.parent[p].(*ast.CompositeLit)
		if !ok {
			return false
		}
		t := r.typeOf(cl)
		if t == nil {
			return false
		}
		var want types.Type
		switch u := t.Underlying().(type) {
		case *types.Map:
			if p.Key == lit {
				want = u.Key()
			} else {
				want = u.Elem()
			}
		case *types.Slice:
			if p.Value == lit {
				want = u.Elem()
			}
		case *types.Struct:
			if id, ok := p.Key.(*ast.Ident); ok && p.Value == lit {
				for i := 0; i < u.NumFields(); i++ {
					if u.Field(i).Name() == id.Name {
						want = u.Field(i).Type()
					}
				}
			}
		}
		if want != nil && r.isOpType(want) {
			r.replace(lit, c)
			return true
		}
	case *ast.ValueSpec:
		if p.Type != nil {
			if t := r.typeOf(p.Type); t != nil && r.isOpType(t) {
				r.replace(lit, c)
				return true
			}
		}
	case *ast.AssignStmt:
		for i, rh := range p.Rhs {
			if rh == lit && i < len(p.Lhs) && p.Tok == token.ASSIGN {
				if t := r.typeOf(p.Lhs[i]); t != nil && r.isOpType(t) {
					r.replace(lit, c)
					return true
				}
			}
		}
	case *ast.ReturnStmt:
		fn := r.enclosingFunc(p)
		if fn == nil {
			return false
		}
		sig, ok := fn.(*types.Signature)
		if !ok {
			return false
		}
		for i, e := range p.Results {
			if e == lit && i < sig.Results().Len() && r.isOpType(sig.Results().At(i).Type()) {
				r.replace(lit, c)
				return true
			}
		}
	}
	return false
}

func (r *rewriter) enclosingFunc(n ast.Node) types.Type {
	for n != nil {
		switch f := n.(type) {
		case *ast.FuncDecl:
			if o := r.pkg.TypesInfo.Defs[f.Name]; o != nil {
				return o.Type()
			}
			return nil
		case *ast.FuncLit:
			return r.typeOf(f)
		}
		n = r.parent[n]
	}
	return nil
}

func (r *rewriter) isFunc(e ast.Expr, name string) bool {
	var id *ast.Ident
	switch e := e.(type) {
	case *ast.Ident:
		id = e
	case *ast.SelectorExpr:
		id = e.Sel
	default:
		return false
	}
	o := r.pkg.TypesInfo.Uses[id]
	return o != nil && o.Name() == name && o.Pkg() != nil && o.Pkg().Path() == irPath
}

// rewrite applies the edits to src, the text of file name, adds the ir
// import and formats the result.
func (r *rewriter) rewrite(name string, src []byte) ([]byte, error) {
	src = append([]byte(nil), src...)
	sort.Slice(r.edits, func(i, j int) bool { return r.edits[i].start > r.edits[j].start })
	// Drop edits nested in a larger one (a MustLookupOp call and its literal).
	var kept []edit
	for _, e := range r.edits {
		if len(kept) > 0 {
			last := kept[len(kept)-1]
			if e.start >= last.start && e.end <= last.end {
				continue
			}
			if last.start >= e.start && last.end <= e.end {
				kept[len(kept)-1] = e
				continue
			}
		}
		kept = append(kept, e)
	}
	for _, e := range kept {
		src = append(src[:e.start], append([]byte(e.text), src[e.end:]...)...)
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, name, src, parser.ParseComments)
	if err != nil {
		return nil, fmt.Errorf("%s after rewriting: %w", name, err)
	}
	if !r.inIR {
		astutil.AddImport(fset, f, irPath)
	}
	var b bytes.Buffer
	if err := format.Node(&b, fset, f); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
