package pte

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the inspect golden files")

// Summaries of genuine files, compared with ../testdata/inspect/*.golden
// (go test -update rewrites them).
func TestSummaryGolden(t *testing.T) {
	for _, name := range []string{
		"et_portable_add_scalar_constant.pte",
		"ecn_xnnpack_add_f32x3.pte",
		"djl_xnnpack_conv2d_relu_nhwc.pte",
		"djl_portable_to_dim_order_copy_mul.pte",
		"rs_external_constants_mul_add.ptd",
		"et_bundled_program_mul_add.bpte",
	} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(genuineDir(t), name)
			var got bytes.Buffer
			if filepath.Ext(name) == ".ptd" {
				d, err := ReadPTD(path)
				if err != nil {
					t.Fatal(err)
				}
				if err := d.Summary(&got); err != nil {
					t.Fatal(err)
				}
			} else {
				f, err := Read(path)
				if err != nil {
					t.Fatal(err)
				}
				if err := f.Summary(&got); err != nil {
					t.Fatal(err)
				}
			}
			golden := filepath.Join("..", "testdata", "inspect", name+".golden")
			if *update {
				if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(golden, got.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -update to create it)", err)
			}
			if !bytes.Equal(got.Bytes(), want) {
				t.Errorf("summary of %s differs from %s:\n%s", name, golden, got.String())
			}
		})
	}
}
