package bundle

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/fxport/fxport/interp"
	"github.com/fxport/fxport/interp/npy"
)

// Case is one test case as read from a directory.
type Case struct {
	Dir     string         // where it was read from
	Inputs  []interp.Value // input_<i>.npy, in order
	Outputs []interp.Value // output_<i>.npy, in order; nil when there are none
}

// ReadDir reads input_<i>.npy and output_<i>.npy (i = 0, 1, …, stopping at
// the first missing index) from dir, or from dir/io when that exists.
// Expected outputs are optional; inputs are not.
func ReadDir(dir string) (Case, error) {
	if st, err := os.Stat(filepath.Join(dir, "io")); err == nil && st.IsDir() {
		dir = filepath.Join(dir, "io")
	}
	st, err := os.Stat(dir)
	if err != nil {
		return Case{}, err
	}
	if !st.IsDir() {
		return Case{}, fmt.Errorf("%s: not a directory of input_<i>.npy files", dir)
	}
	c := Case{Dir: dir}
	if c.Inputs, err = readSeries(dir, "input"); err != nil {
		return Case{}, err
	}
	if c.Outputs, err = readSeries(dir, "output"); err != nil {
		return Case{}, err
	}
	if len(c.Inputs) == 0 {
		return Case{}, fmt.Errorf("%s: no input_0.npy", dir)
	}
	return c, nil
}

func readSeries(dir, prefix string) ([]interp.Value, error) {
	var out []interp.Value
	for i := 0; ; i++ {
		path := filepath.Join(dir, fmt.Sprintf("%s_%d.npy", prefix, i))
		t, err := npy.ReadFile(path)
		if errors.Is(err, os.ErrNotExist) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		out = append(out, t)
	}
}
