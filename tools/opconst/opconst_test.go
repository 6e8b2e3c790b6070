package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/fxport/fxport/internal/oplint"
	"github.com/fxport/fxport/internal/testenv"
	"golang.org/x/tools/go/packages"
)

const sampleIn = `package sample

import "github.com/fxport/fxport/ir"

var relu = ir.MustLookupOp("aten.relu.default")

func isAdd(n *ir.Node) bool { return n.Op.String() == "aten.add.Tensor" }

func kind(n *ir.Node) int {
	switch n.Op.Info().Name {
	case "aten.mul.Tensor", "aten.mul.Scalar":
		return 1
	}
	return 0
}

func count(ops ...ir.Op) int { return len(ops) }

var subs = count("aten.sub.Tensor")

var onnx = map[ir.Op]string{"aten.neg.default": "Neg"}

var byName = map[string]int{"aten.abs.default": 1}
`

const sampleOut = `package sample

import "github.com/fxport/fxport/ir"

var relu = ir.OpAtenRelu

func isAdd(n *ir.Node) bool { return n.Op == ir.OpAtenAddTensor }

func kind(n *ir.Node) int {
	switch n.Op {
	case ir.OpAtenMulTensor, ir.OpAtenMulScalar:
		return 1
	}
	return 0
}

func count(ops ...ir.Op) int { return len(ops) }

var subs = count(ir.OpAtenSubTensor)

var onnx = map[ir.Op]string{ir.OpAtenNeg: "Neg"}

var byName = map[string]int{"aten.abs.default": 1}
`

// The tool rewrites every typed context and lists the string-typed one it
// must leave (a map keyed by string needs its type changed first).
func TestConvert(t *testing.T) {
	root := testenv.Root(t)
	consts, err := oplint.Consts(filepath.Join(root, "ir", "opgen.go"))
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(root, "tools", "opconst", "testdata", "sample", "sample.go")
	cfg := &packages.Config{Dir: root, Overlay: map[string][]byte{file: []byte(sampleIn)}}
	files, err := convert(consts, cfg, "./tools/opconst/testdata/sample")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 1 {
		t.Fatalf("%d files, want 1", len(files))
	}
	f := files[0]
	if got := string(f.out); got != sampleOut {
		t.Errorf("rewritten:\n%s\nwant:\n%s", got, sampleOut)
	}
	if f.edits != 8 {
		t.Errorf("%d edits, want 8", f.edits)
	}
	if len(f.left) != 1 || !strings.HasSuffix(f.left[0], `sample.go:23: "aten.abs.default" (string context)`) {
		t.Errorf("left %q, want the byName key", f.left)
	}
}
