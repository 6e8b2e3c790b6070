package pt2

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/fxport/fxport/ir"
)

// savedTensor is one tensor of a torch.save dict, with its storage located
// inside the outer archive.
type savedTensor struct {
	name string
	w    *ir.Weight
}

// readTorchSave reads the dict of tensors torch.save wrote into entry
// outer of the archive (a nested zip: <prefix>/data.pkl and raw storages
// <prefix>/data/<key>). The outer entry must be stored so that storages can
// be read in place; their sources name the outer entry and the storage's
// offset inside it.
func readTorchSave(a *zipArchive, archivePath, outer string) ([]savedTensor, error) {
	base, size, err := a.stored(outer)
	if err != nil {
		return nil, err
	}
	inner, err := openZip(io.NewSectionReader(a.ra, base, size), size)
	if err != nil {
		return nil, fmt.Errorf("nested torch.save archive: %w", err)
	}
	pkl := ""
	for _, name := range inner.order {
		if name == "data.pkl" || strings.HasSuffix(name, "/data.pkl") && strings.Count(name, "/") == 1 {
			if pkl != "" {
				return nil, fmt.Errorf("nested torch.save archive has two data.pkl records (%q, %q)", pkl, name)
			}
			pkl = name
		}
	}
	if pkl == "" {
		return nil, fmt.Errorf("nested torch.save archive has no data.pkl record")
	}
	prefix := strings.TrimSuffix(pkl, "data.pkl")
	if inner.has(prefix + "byteorder") {
		bo, err := inner.read(prefix+"byteorder", maxMarkerSize)
		if err != nil {
			return nil, fmt.Errorf("%sbyteorder: %w", prefix, err)
		}
		if s := strings.TrimSpace(string(bo)); s != "little" {
			return nil, fmt.Errorf("%sbyteorder is %q; only little-endian storages are supported", prefix, s)
		}
	}
	data, err := inner.read(pkl, maxPickleSize)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", pkl, err)
	}
	root, err := unpickle(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", pkl, err)
	}
	dict, ok := root.(*pyDict)
	if !ok {
		return nil, fmt.Errorf("%s: holds a %T, not a dict of tensors", pkl, root)
	}
	sources := map[string]*Source{}
	var out []savedTensor
	seen := map[string]bool{}
	for i, k := range dict.keys {
		name, ok := k.(string)
		if !ok {
			return nil, fmt.Errorf("%s: dict key %d is a %T, not a string", pkl, i, k)
		}
		t, ok := dict.vals[i].(*pyTensor)
		if !ok {
			continue // not a tensor (custom objects are not read)
		}
		if seen[name] {
			return nil, fmt.Errorf("%s: %q appears twice", pkl, name)
		}
		seen[name] = true
		st := t.storage
		src := sources[st.key]
		if src == nil {
			entry := prefix + "data/" + st.key
			if err := checkEntryName(entry); err != nil {
				return nil, fmt.Errorf("%s: tensor %q: %w", pkl, name, err)
			}
			off, n, err := inner.stored(entry)
			if err != nil {
				return nil, fmt.Errorf("%s: tensor %q: storage %q: %w", pkl, name, st.key, err)
			}
			want := st.numel * int64(st.dtype.Size())
			if st.numel > n || want > n || want < 0 {
				return nil, fmt.Errorf("%s: tensor %q: storage %q has %d bytes, not the %d its %d elements need", pkl, name, st.key, n, want, st.numel)
			}
			src = a.withCRC(newSource(archivePath, outer, off, want, base+off), outer)
			sources[st.key] = src
		}
		w, err := viewWeight(name, st.dtype, t.size, t.stride, t.offset, "", st.numel)
		if err != nil {
			return nil, fmt.Errorf("%s: tensor %q: %w", pkl, name, err)
		}
		if src.Len > 0 {
			w.Source = src
		}
		out = append(out, savedTensor{name, w})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out, nil
}
