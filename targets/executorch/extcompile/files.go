package extcompile

import (
	"crypto/sha256"
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/fxport/fxport/targets/executorch/pte"
)

// Files is what a compile command wrote, left in its temporary directory
// (CompileFiles) until Close removes it. Lazy sources made by FileLazy
// read these files, so close only after everything that streams them has
// been written.
type Files struct {
	// Dir is the temporary directory holding IN, OUT and the side files.
	Dir string
	// Out is OUT's path (a non-empty regular file).
	Out string
	// Extras maps the suffix of each side file present to its path.
	Extras map[string]string

	once sync.Once
	err  error
}

// Close removes the temporary directory; later calls do nothing and
// return the first call's result.
func (f *Files) Close() error {
	if f == nil {
		return nil
	}
	f.once.Do(func() { f.err = os.RemoveAll(f.Dir) })
	return f.err
}

// FileLazy is a lazy source over the file at path, named name in errors:
// its size and sha256 are taken now (streaming, never the whole file in
// memory), and Open reopens the file each time. The writers check the byte
// count, so a file that changed size since is an error, not a torn copy.
func FileLazy(name, path string) (pte.Lazy, error) {
	fh, err := os.Open(path)
	if err != nil {
		return pte.Lazy{}, fmt.Errorf("%s: %w", name, err)
	}
	defer fh.Close()
	h := sha256.New()
	n, err := io.Copy(h, fh)
	if err != nil {
		return pte.Lazy{}, fmt.Errorf("%s: reading %s: %w", name, path, err)
	}
	var d [32]byte
	copy(d[:], h.Sum(nil))
	return pte.Lazy{
		Name:   name,
		Size:   uint64(n),
		Digest: &d,
		Open: func() (io.ReadCloser, error) {
			r, err := os.Open(path)
			if err != nil {
				return nil, fmt.Errorf("%s was removed before it was written out (its compile directory is closed): %w", name, err)
			}
			return r, nil
		},
	}, nil
}
