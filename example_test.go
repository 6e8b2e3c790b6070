package fxport_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/fxport/fxport"
)

// Export a program torch.export saved to ONNX and to an XNNPACK .pte.
func Example() {
	dir, err := os.MkdirTemp("", "fxport-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	src := fxport.File("tests/corpus/resnet18/program.pt2")
	for _, target := range []fxport.Target{fxport.ONNX, fxport.ExecuTorchXNNPACK} {
		out := filepath.Join(dir, "resnet18"+target.Ext())
		res, err := fxport.Export(context.Background(), src, target, fxport.Options{Output: out})
		if err != nil {
			log.Fatal(err)
		}
		st, err := os.Stat(res.Files[0])
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(target, filepath.Base(res.Files[0]), "weights in:", st.Size() > 512<<10)
	}
	// Output:
	// onnx resnet18.onnx weights in: true
	// executorch-xnnpack resnet18.pte weights in: true
}

// The default pipeline of a target, as `fxport pipeline` prints it.
func ExampleTarget_Pipeline() {
	text, err := fxport.Dynamo.Pipeline()
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(text)
	// Output:
	// dynamo: dynamo.signature(check-capture-steps), dynamo.pytree(flat-io-names), dynamo.dynamic-shapes(apply-dynamic-shapes), dynamo.state-cleanup(drop-unused-weights)
}
