package run

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	etfb "github.com/fxport/fxport/targets/executorch/fb/executorch_flatbuffer"
	"github.com/fxport/fxport/targets/executorch/pte"
)

// externalTensor returns the bytes of an EXTERNAL constant tensor t from
// the data files, checking the entry's TensorLayout (when it has one)
// against t's dtype, sizes and dim order, as the runtime does.
func externalTensor(t *etfb.TensorT, files []*pte.DataFile) ([]byte, error) {
	fqn := t.ExtraTensorInfo.FullyQualifiedName
	if fqn == "" {
		return nil, fmt.Errorf("EXTERNAL tensor without a fully_qualified_name")
	}
	for _, d := range files {
		for _, e := range d.Tensors {
			if e.Key != fqn {
				continue
			}
			if e.HasLayout && (e.ScalarType != t.ScalarType || !slices.Equal(e.Sizes, t.Sizes) || !slices.Equal(e.DimOrder, t.DimOrder)) {
				return nil, fmt.Errorf("external constant %q: %s holds %s%v dim_order %v, the program declares %s%v dim_order %v", fqn, d.Name,
					etfb.EnumNamesScalarType[e.ScalarType], e.Sizes, e.DimOrder, etfb.EnumNamesScalarType[t.ScalarType], t.Sizes, t.DimOrder)
			}
			return e.Data, nil
		}
	}
	return externalData(fqn, files)
}

// externalData returns the bytes stored under key in the external data
// files (.ptd) given to Load (Options.Data): an EXTERNAL constant's
// fully_qualified_name, or a delegate's named-data key the program does
// not hold. The first file holding the key wins, as in the runtime's
// merged data map. A missing file or key is an error that says which.
func externalData(key string, files []*pte.DataFile) ([]byte, error) {
	if len(files) == 0 {
		return nil, fmt.Errorf("external data %q: the program keeps it in a .ptd data file and none was given (Options.Data; fxport run --data FILE.ptd)", key)
	}
	for _, d := range files {
		for _, t := range d.Tensors {
			if t.Key == key {
				return t.Data, nil
			}
		}
	}
	var names []string
	for _, d := range files {
		names = append(names, d.Name)
	}
	return nil, fmt.Errorf("external data %q: not in data file %s (keys: %s)", key, strings.Join(names, ", "), strings.Join(dataKeys(files), ", "))
}

// dataKeys lists the keys of the data files, sorted (at most 20).
func dataKeys(files []*pte.DataFile) []string {
	var keys []string
	for _, d := range files {
		for _, t := range d.Tensors {
			keys = append(keys, fmt.Sprintf("%q", t.Key))
		}
	}
	sort.Strings(keys)
	if len(keys) > 20 {
		keys = append(keys[:20], fmt.Sprintf("… %d more", len(keys)-20))
	}
	return keys
}
