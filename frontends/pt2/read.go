package pt2

import (
	"bytes"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/fxport/fxport/internal/inputfile"
	"github.com/fxport/fxport/internal/pt2schema"
	"github.com/fxport/fxport/ir"
)

// Error is a read failure: the file, the record inside the archive it
// concerns ("" for the container itself or a bare JSON file) and the cause,
// which for JSON records starts with the JSON path:
//
//	model.pt2: models/model.json: graph_module.graph.nodes[12].inputs[0].arg: unknown Argument tag "as_foo"
type Error struct {
	File   string
	Record string
	Err    error
}

func (e *Error) Error() string {
	if e.Record == "" {
		return e.File + ": " + e.Err.Error()
	}
	return e.File + ": " + e.Record + ": " + e.Err.Error()
}

func (e *Error) Unwrap() error { return e.Err }

// Read reads the program of a .pt2 file: a PT2 archive (torch ≥ 2.8), a
// legacy torch.export zip (torch 2.6–2.7, schema 8), or a bare program JSON
// document. Of an archive holding several programs it reads "model", or the
// only one. The result is verified; weights stay in the file (see Source).
func Read(path string) (*ir.Program, error) { return ReadModel(path, "") }

// ReadModel is Read for the named program of a PT2 archive
// (models/<model>.json); "" means "model" or the only program.
func ReadModel(path, model string) (*ir.Program, error) {
	f, size, err := inputfile.Open(path) // regular files only
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readFrom(f, size, path, model)
}

// readFrom reads from ra; path names the file in errors and weight sources.
func readFrom(ra io.ReaderAt, size int64, path, model string) (*ir.Program, error) {
	var head [4]byte
	n, _ := ra.ReadAt(head[:], 0)
	if n >= 2 && head[0] == 'P' && head[1] == 'K' {
		a, err := openZip(ra, size)
		if err != nil {
			return nil, &Error{File: path, Err: err}
		}
		if root, ok, err := archiveRoot(a); err != nil {
			return nil, &Error{File: path, Err: err}
		} else if ok {
			return readArchive(a, path, root, model)
		}
		if a.has(legacyProgram) {
			return readLegacy(a, path)
		}
		return nil, &Error{File: path, Err: fmt.Errorf("neither a PT2 archive (no archive_format record) nor a torch.export zip (no %s)", legacyProgram)}
	}
	if size > MaxJSONBytes {
		return nil, &Error{File: path, Err: fmt.Errorf("%d bytes is too large for a program JSON document", size)}
	}
	data := make([]byte, size)
	if _, err := ra.ReadAt(data, 0); err != nil && err != io.EOF {
		return nil, &Error{File: path, Err: err}
	}
	if t := bytes.TrimLeft(data, " \t\r\n"); len(t) == 0 || t[0] != '{' {
		return nil, &Error{File: path, Err: fmt.Errorf("not a .pt2 file (neither a zip archive nor a program JSON document)")}
	}
	p, err := decodeProgram(data, LayoutJSON)
	if err != nil {
		return nil, &Error{File: path, Err: err}
	}
	return finishProgram(p, path, "", false) // a bare JSON document carries no weights
}

const (
	legacyProgram   = "serialized_exported_program.json"
	legacyState     = "serialized_state_dict.pt"
	legacyConstants = "serialized_constants.pt"
)

// archiveRoot finds the root folder of a PT2 archive: the folder holding
// archive_format ("" when it sits at the top).
func archiveRoot(a *zipArchive) (string, bool, error) {
	var roots []string
	for _, name := range a.order {
		if name == "archive_format" {
			roots = append(roots, "")
		} else if i := strings.IndexByte(name, '/'); i > 0 && name[i+1:] == "archive_format" {
			roots = append(roots, name[:i+1])
		}
	}
	switch len(roots) {
	case 0:
		return "", false, nil
	case 1:
		return roots[0], true, nil
	}
	return "", false, fmt.Errorf("several archive roots (%q and %q)", roots[0], roots[1])
}

// marker reads a small text record, trimmed.
func marker(a *zipArchive, path, name, rel string) (string, error) {
	b, err := a.read(name, maxMarkerSize)
	if err != nil {
		return "", &Error{File: path, Record: rel, Err: err}
	}
	return strings.TrimSpace(string(b)), nil
}

// readArchive reads a PT2 archive (torch ≥ 2.8).
func readArchive(a *zipArchive, path, root, model string) (*ir.Program, error) {
	if s, err := marker(a, path, root+"archive_format", "archive_format"); err != nil {
		return nil, err
	} else if s != "pt2" {
		return nil, &Error{File: path, Record: "archive_format", Err: fmt.Errorf("is %q, not \"pt2\"", s)}
	}
	if a.has(root + "archive_version") {
		if s, err := marker(a, path, root+"archive_version", "archive_version"); err != nil {
			return nil, err
		} else if s != "0" {
			return nil, &Error{File: path, Record: "archive_version", Err: fmt.Errorf("archive version %q is not supported (only \"0\")", s)}
		}
	}
	if a.has(root + "byteorder") {
		if s, err := marker(a, path, root+"byteorder", "byteorder"); err != nil {
			return nil, err
		} else if s != "little" {
			return nil, &Error{File: path, Record: "byteorder", Err: fmt.Errorf("byte order %q is not supported (only little-endian payloads)", s)}
		}
	}
	var models []string
	for _, name := range a.order {
		rel, ok := strings.CutPrefix(name, root+"models/")
		if ok && strings.HasSuffix(rel, ".json") && !strings.Contains(rel, "/") {
			models = append(models, strings.TrimSuffix(rel, ".json"))
		}
	}
	sort.Strings(models)
	name, err := pickModel(models, model)
	if err != nil {
		return nil, &Error{File: path, Err: err}
	}
	rel := "models/" + name + ".json"
	data, err := a.read(root+rel, MaxJSONBytes)
	if err != nil {
		return nil, &Error{File: path, Record: rel, Err: err}
	}
	wcfg := "data/weights/" + name + "_weights_config.json"
	ccfg := "data/constants/" + name + "_constants_config.json"
	wpkl := "data/weights/" + name + ".pt"
	cpkl := "data/constants/" + name + ".pt"
	layout := LayoutArchive
	if !a.has(root+wcfg) && !a.has(root+ccfg) && (a.has(root+wpkl) || a.has(root+cpkl)) {
		layout = LayoutArchivePickle
	}
	p, err := decodeProgram(data, layout)
	if err != nil {
		return nil, &Error{File: path, Record: rel, Err: err}
	}
	if name != "model" {
		p.Meta.Set(MetaModel, name)
	}
	var ws []*ir.Weight
	for _, part := range []struct{ cfg, pkl, dir string }{{wcfg, wpkl, "data/weights/"}, {ccfg, cpkl, "data/constants/"}} {
		var got []*ir.Weight
		switch {
		case a.has(root + part.cfg):
			got, err = payloadWeights(a, path, root, part.cfg, part.dir)
		case a.has(root + part.pkl):
			got, err = pickleWeights(a, path, root+part.pkl, part.pkl)
		}
		if err != nil {
			return nil, err
		}
		ws = append(ws, got...)
	}
	if err := setWeights(p, ws, path); err != nil {
		return nil, err
	}
	return finishProgram(p, path, rel, true)
}

func pickModel(models []string, want string) (string, error) {
	if len(models) == 0 {
		return "", fmt.Errorf("the archive holds no program (no models/*.json record)")
	}
	if want == "" {
		for _, m := range models {
			if m == "model" {
				return m, nil
			}
		}
		if len(models) == 1 {
			return models[0], nil
		}
		return "", fmt.Errorf("the archive holds several programs (%s); name one", strings.Join(models, ", "))
	}
	for _, m := range models {
		if m == want {
			return m, nil
		}
	}
	return "", fmt.Errorf("the archive has no program %q (it has %s)", want, strings.Join(models, ", "))
}

// readLegacy reads a torch.export zip of torch 2.2–2.7.
func readLegacy(a *zipArchive, path string) (*ir.Program, error) {
	data, err := a.read(legacyProgram, MaxJSONBytes)
	if err != nil {
		return nil, &Error{File: path, Record: legacyProgram, Err: err}
	}
	p, err := decodeProgram(data, LayoutLegacyZip)
	if err != nil {
		return nil, &Error{File: path, Record: legacyProgram, Err: err}
	}
	var ws []*ir.Weight
	for _, names := range [][2]string{{legacyState, "serialized_state_dict.json"}, {legacyConstants, "serialized_constants.json"}} {
		for _, n := range names {
			if a.has(n) {
				got, err := pickleWeights(a, path, n, n)
				if err != nil {
					return nil, err
				}
				ws = append(ws, got...)
				break
			}
		}
	}
	if err := setWeights(p, ws, path); err != nil {
		return nil, err
	}
	return finishProgram(p, path, legacyProgram, true)
}

// pickleWeights reads the tensors of a torch.save record.
func pickleWeights(a *zipArchive, path, entry, rel string) ([]*ir.Weight, error) {
	ts, err := readTorchSave(a, path, entry)
	if err != nil {
		return nil, &Error{File: path, Record: rel, Err: err}
	}
	out := make([]*ir.Weight, len(ts))
	for i, t := range ts {
		out[i] = t.w
	}
	return out, nil
}

// payloadWeights reads a PayloadConfig and the raw payloads it indexes.
func payloadWeights(a *zipArchive, path, root, cfg, dir string) ([]*ir.Weight, error) {
	data, err := a.read(root+cfg, MaxJSONBytes)
	if err != nil {
		return nil, &Error{File: path, Record: cfg, Err: err}
	}
	d := pt2schema.NewDecoder(data)
	c, err := pt2schema.DecodePayloadConfig(d)
	if err == nil {
		err = d.End()
	}
	if err != nil {
		return nil, &Error{File: path, Record: cfg, Err: err}
	}
	fail := func(fqn, format string, args ...any) error {
		return &Error{File: path, Record: cfg, Err: &pt2schema.Error{Path: fmt.Sprintf("config[%q]", fqn), Msg: fmt.Sprintf(format, args...)}}
	}
	sources := map[string]*Source{}
	var out []*ir.Weight
	for _, e := range c.Entries {
		m := &e.Meta
		if m.TensorMeta == nil {
			if m.UsePickle {
				continue // a custom object: its payload is not read
			}
			return nil, fail(e.FQN, "no tensor_meta")
		}
		if m.UsePickle {
			return nil, fail(e.FQN, "pickled tensor payloads (tensor subclasses) are not supported")
		}
		pn := m.PathName
		if pn == "" || strings.ContainsAny(pn, "/\\") || pn == "." || pn == ".." {
			return nil, fail(e.FQN, "bad path_name %q", pn)
		}
		entry := root + dir + pn
		src, ok := sources[pn]
		if !ok {
			off, n, err := a.stored(entry)
			if err != nil {
				return nil, fail(e.FQN, "payload %s%s: %v", dir, pn, err)
			}
			src = a.withCRC(newSource(path, entry, 0, n, off), entry)
			sources[pn] = src
		}
		tm := m.TensorMeta
		dt, err := dtype(tm.DType)
		if err != nil {
			return nil, fail(e.FQN, "tensor_meta: %v", err)
		}
		if tm.Layout != 7 && tm.Layout != 0 {
			return nil, fail(e.FQN, "tensor_meta: only strided tensors are supported (layout %d)", tm.Layout)
		}
		ints := func(xs []pt2schema.SymInt, what string) ([]int64, error) {
			out := make([]int64, len(xs))
			for i, x := range xs {
				if x.IsExpr {
					return nil, fmt.Errorf("tensor_meta.%s[%d] is symbolic (%q); weights have static shapes", what, i, x.Expr.ExprStr)
				}
				out[i] = x.Int
			}
			return out, nil
		}
		sizes, err := ints(tm.Sizes, "sizes")
		if err != nil {
			return nil, fail(e.FQN, "%v", err)
		}
		strides, err := ints(tm.Strides, "strides")
		if err != nil {
			return nil, fail(e.FQN, "%v", err)
		}
		if len(tm.Strides) == 0 && len(sizes) > 0 {
			strides = contiguousStrides(sizes)
		}
		offs, err := ints([]pt2schema.SymInt{tm.StorageOffset}, "storage_offset")
		if err != nil {
			return nil, fail(e.FQN, "%v", err)
		}
		dev, err := deviceString(tm.Device)
		if err != nil {
			return nil, fail(e.FQN, "tensor_meta.device: %v", err)
		}
		numel := int64(-1)
		if src.Len > 0 {
			if src.Len%int64(dt.Size()) != 0 {
				return nil, fail(e.FQN, "payload %s%s has %d bytes, not a multiple of the %s element size", dir, pn, src.Len, dt)
			}
			numel = src.Len / int64(dt.Size())
		}
		w, err := viewWeight(e.FQN, dt, sizes, strides, offs[0], dev, numel)
		if err != nil {
			return nil, fail(e.FQN, "tensor_meta: %v (payload %s%s)", err, dir, pn)
		}
		if src.Len > 0 {
			w.Source = src
		}
		out = append(out, w)
	}
	return out, nil
}

// setWeights installs the weights, sorted, refusing duplicate names.
func setWeights(p *ir.Program, ws []*ir.Weight, path string) error {
	sort.SliceStable(ws, func(i, j int) bool { return ws[i].Name < ws[j].Name })
	for i := 1; i < len(ws); i++ {
		if ws[i].Name == ws[i-1].Name {
			return &Error{File: path, Err: fmt.Errorf("weight %q is stored twice (weights and constants)", ws[i].Name)}
		}
	}
	p.Weights = ws
	return nil
}

// finishProgram checks that the signature's weights exist (in an archive,
// always; in a bare JSON document, which stores none, only when some are
// given) and verifies the IR.
func finishProgram(p *ir.Program, path, rel string, archive bool) (*ir.Program, error) {
	// Every parameter, buffer and constant tensor needs its data: an
	// archive without its weights config (or pickle) is refused here, not
	// exported weightless.
	for i, in := range p.Signature.Inputs {
		if !archive && len(p.Weights) == 0 {
			break
		}
		switch in.Kind {
		case ir.Parameter, ir.Buffer, ir.ConstantTensor:
			if p.Weight(in.Target) == nil {
				msg := fmt.Sprintf("%s %q has no stored data", in.Kind, in.Target)
				if len(p.Weights) == 0 {
					msg += " (the archive stores no weights: is its weights config missing?)"
				}
				return nil, &Error{File: path, Record: rel, Err: &pt2schema.Error{
					Path: fmt.Sprintf("graph_module.signature.input_specs[%d]", i),
					Msg:  msg}}
			}
		}
	}
	if err := ir.Verify(p); err != nil {
		return nil, &Error{File: path, Record: rel, Err: err}
	}
	return p, nil
}
