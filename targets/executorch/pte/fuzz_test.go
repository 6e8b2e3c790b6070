package pte

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzReadPTE: Decode never panics (the recover that would hide a panic is
// reported as a failure) and never returns both a file and an error.
func FuzzReadPTE(f *testing.F) {
	// The genuine files (testenv.Shared: without them the fuzzer skips
	// naming the step that provides them, and fails under CI).
	dir := genuineDir(f)
	for _, name := range []string{"et_portable_add_f32x1.pte", "ecn_xnnpack_add_f32x3.pte", "et_portable_add_scalar_constant.pte", "rs_external_constants_mul_add.ptd", "et_bundled_program_mul_add.bpte", "djl_xnnpack_conv2d_relu_nhwc.pte", "ecn_xnnpack_qs8_linear.pte", "djl_portable_to_dim_order_copy_mul.pte"} {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte("\x00\x00\x00\x00ET12"))
	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := Decode("fuzz.pte", data)
		if err != nil {
			if strings.Contains(err.Error(), "decoder panic") {
				t.Fatal(err)
			}
			if file != nil {
				t.Fatal("file and error both returned")
			}
		} else if err := file.Summary(discard{}); err != nil {
			t.Fatal(err)
		}
		if _, err := DecodePTD("fuzz.ptd", data); err != nil && strings.Contains(err.Error(), "decoder panic") {
			t.Fatal(err)
		}
	})
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }
