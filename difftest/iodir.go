package difftest

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/fxport/fxport/interp"
	"github.com/fxport/fxport/interp/npy"
)

// ReadIODir reads the user inputs and torch's outputs of one run stored as
// input_<i>.npy and output_<i>.npy (i = 0, 1, …) in dir, or in dir/io when
// that exists (the corpus layout tests/corpus/<name>/io/).
func ReadIODir(dir string) (inputs, outputs []interp.Value, err error) {
	if st, err := os.Stat(filepath.Join(dir, "io")); err == nil && st.IsDir() {
		dir = filepath.Join(dir, "io")
	}
	read := func(prefix string) ([]interp.Value, error) {
		var out []interp.Value
		for i := 0; ; i++ {
			path := filepath.Join(dir, fmt.Sprintf("%s_%d.npy", prefix, i))
			t, err := npy.ReadFile(path)
			if errors.Is(err, os.ErrNotExist) {
				return out, nil
			}
			if err != nil {
				return nil, err
			}
			out = append(out, t)
		}
	}
	if inputs, err = read("input"); err != nil {
		return nil, nil, err
	}
	if outputs, err = read("output"); err != nil {
		return nil, nil, err
	}
	if len(outputs) == 0 {
		return nil, nil, fmt.Errorf("%s: no output_0.npy", dir)
	}
	return inputs, outputs, nil
}
