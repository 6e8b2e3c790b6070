package pte

import (
	"fmt"
	"sync"

	"github.com/fxport/fxport/targets/executorch/internal/fbs"
	"github.com/fxport/fxport/targets/executorch/schema"
)

var (
	schemasOnce sync.Once
	schemas     struct {
		program, xnnpack, flatTensor, bundled *fbs.Schema
		err                                   error
	}
)

// loadSchemas parses the embedded schema files once.
func loadSchemas() error {
	schemasOnce.Do(func() {
		for _, s := range []struct {
			dst  **fbs.Schema
			file string
		}{
			{&schemas.program, schema.Program},
			{&schemas.xnnpack, schema.XNNPACK},
			{&schemas.flatTensor, schema.FlatTensor},
			{&schemas.bundled, schema.Bundled},
		} {
			p, err := fbs.Parse(schema.FS, s.file)
			if err != nil {
				schemas.err = fmt.Errorf("embedded schema: %w", err)
				return
			}
			*s.dst = p
		}
	})
	return schemas.err
}
