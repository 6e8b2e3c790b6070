package pt2

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"os"
	"strings"
	"testing"
)

// zentry is one record of a test archive.
type zentry struct {
	name   string
	data   []byte
	method uint16
}

func buildZip(t testing.TB, entries []zentry) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, e := range entries {
		w, err := zw.CreateHeader(&zip.FileHeader{Name: e.name, Method: e.method})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(e.data); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// entriesOf lists the records of a zip file.
func entriesOf(t testing.TB, path string) []zentry {
	t.Helper()
	zr, err := zip.OpenReader(path)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	var out []zentry
	for _, f := range zr.File {
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		b.ReadFrom(rc)
		rc.Close()
		out = append(out, zentry{name: f.Name, data: b.Bytes()})
	}
	return out
}

// edit returns the records of path with f applied to each (nil drops it).
func edit(t testing.TB, path string, f func(e zentry) *zentry, extra ...zentry) []zentry {
	var out []zentry
	for _, e := range entriesOf(t, path) {
		if r := f(e); r != nil {
			out = append(out, *r)
		}
	}
	return append(out, extra...)
}

// replaceIn edits the bytes of one record.
func replaceIn(name, old, new string) func(e zentry) *zentry {
	return func(e zentry) *zentry {
		if e.name == name {
			if !bytes.Contains(e.data, []byte(old)) {
				panic("test: " + old + " not in " + name)
			}
			e.data = bytes.Replace(e.data, []byte(old), []byte(new), 1)
		}
		return &e
	}
}

func keep(e zentry) *zentry { return &e }

// patchCD overwrites a field of an entry's central-directory header:
// 20 compressed size, 24 uncompressed size, 42 local header offset (uint32).
func patchCD(t testing.TB, data []byte, name string, field int, value uint32) []byte {
	t.Helper()
	out := append([]byte(nil), data...)
	for i := 0; i+46 <= len(out); i++ {
		if binary.LittleEndian.Uint32(out[i:]) != 0x02014b50 {
			continue
		}
		n := int(binary.LittleEndian.Uint16(out[i+28:]))
		if i+46+n <= len(out) && string(out[i+46:i+46+n]) == name {
			binary.LittleEndian.PutUint32(out[i+field:], value)
			return out
		}
	}
	t.Fatalf("no central directory entry %q", name)
	return nil
}

func localHeaderOffset(t testing.TB, data []byte, name string) uint32 {
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range zr.File {
		if f.Name == name {
			off, _ := f.DataOffset()
			return uint32(off - 30 - int64(len(f.Name)) - int64(len(f.Extra)))
		}
	}
	t.Fatalf("no entry %q", name)
	return 0
}

// torchSaveZip wraps a pickle and storages the way torch.save does.
func torchSaveZip(t testing.TB, pkl []byte, storages map[string][]byte) []byte {
	es := []zentry{{name: "archive/data.pkl", data: pkl}}
	for k, v := range storages {
		es = append(es, zentry{name: "archive/data/" + k, data: v})
	}
	return buildZip(t, es)
}

func TestHostileArchives(t *testing.T) {
	const a9 = "testdata/archive_2_9.pt2"
	const root = "archive_2_9/"
	good, err := os.ReadFile(a9)
	if err != nil {
		t.Fatal(err)
	}
	model := root + "models/model.json"
	wcfg := root + "data/weights/model_weights_config.json"
	zeros := bytes.Repeat([]byte{0}, 1<<20)
	var deflated bytes.Buffer
	{
		zw := zip.NewWriter(&deflated)
		w, _ := zw.CreateHeader(&zip.FileHeader{Name: "big", Method: zip.Deflate})
		w.Write(zeros)
		zw.Close()
	}
	bomb := patchCD(t, deflated.Bytes(), "big", 24, 0xfffffff0)
	two := buildZip(t, []zentry{{name: "a", data: []byte("aaaa")}, {name: "b", data: []byte("bbbb")}})
	overlap := patchCD(t, two, "b", 42, localHeaderOffset(t, two, "a"))
	encrypted := patchCD(t, two, "a", 8, 1) // general-purpose flags sit at offset 8 (uint16, low byte)
	// A pickle that asks for os.system: nothing may run, and it is refused.
	evil := []byte("\x80\x02cos\nsystem\nq\x00X\x02\x00\x00\x00lsq\x01\x85q\x02Rq\x03.")
	wPkl := func(pkl []byte, storages map[string][]byte) []zentry {
		return []zentry{
			{name: "r/archive_format", data: []byte("pt2")},
			{name: "r/models/model.json", data: mustFile(t, "testdata/block_8_20.json")},
			{name: "r/data/weights/model.pt", data: torchSaveZip(t, pkl, storages)},
		}
	}
	for _, c := range []struct {
		name string
		data []byte
		want string
	}{
		{"truncated in the middle", good[:len(good)/2], "not a readable zip archive"},
		{"truncated directory", good[:len(good)-30], "not a readable zip archive"},
		{"empty file", nil, "not a .pt2 file"},
		{"not a zip", []byte("PK\x03\x04garbage"), "not a readable zip archive"},
		{"zip slip", buildZip(t, edit(t, a9, keep, zentry{name: "../../etc/passwd", data: []byte("x")})), `"../../etc/passwd": unsafe name (path component "..")`},
		{"absolute name", buildZip(t, edit(t, a9, keep, zentry{name: "/etc/passwd"})), `"/etc/passwd": unsafe name (absolute path)`},
		{"backslash", buildZip(t, edit(t, a9, keep, zentry{name: `archive_2_9\..\x`})), "unsafe name (backslash)"},
		{"drive letter", buildZip(t, edit(t, a9, keep, zentry{name: "C:/x"})), "unsafe name (drive letter)"},
		{"duplicate entry", buildZip(t, edit(t, a9, keep, zentry{name: model, data: []byte("{}")})), `zip entry "archive_2_9/models/model.json" appears twice`},
		{"size past the end", patchCD(t, good, root+"data/weights/weight_0", 24, 1<<30), "is stored but claims"},
		{"both sizes past the end", patchCD(t, patchCD(t, good, root+"data/weights/weight_0", 24, 1<<30), root+"data/weights/weight_0", 20, 1<<30), "past the end of the"},
		{"zip bomb", bomb, `zip entry "big" expands`},
		{"overlapping entries", overlap, `zip entries "a" and "b" overlap`},
		{"encrypted", encrypted, `zip entry "a" is encrypted`},
		{"neither layout", two, "neither a PT2 archive"},
		{"two roots", buildZip(t, edit(t, a9, keep, zentry{name: "other/archive_format", data: []byte("pt2")})), "several archive roots"},
		{"bad archive_format", buildZip(t, edit(t, a9, replaceIn(root+"archive_format", "pt2", "zip"))), `archive_format: is "zip", not "pt2"`},
		{"archive version", buildZip(t, edit(t, a9, replaceIn(root+"archive_version", "0", "1"))), `archive_version: archive version "1" is not supported`},
		{"big endian", buildZip(t, edit(t, a9, replaceIn(root+"byteorder", "little", "big"))), `byteorder: byte order "big" is not supported`},
		{"no program", buildZip(t, edit(t, a9, func(e zentry) *zentry {
			if e.name == model {
				return nil
			}
			return &e
		})), "the archive holds no program"},
		{"unknown union tag", buildZip(t, edit(t, a9, replaceIn(model, `{"as_int": 1}, "kind": 1}], "outputs": [{"as_tensor": {"name": "getitem"}}`, `{"as_foo": 1}, "kind": 1}], "outputs": [{"as_tensor": {"name": "getitem"}}`))),
			`models/model.json: graph_module.graph.nodes[5].inputs[1].arg: unknown Argument tag "as_foo"`},
		{"dangling name", buildZip(t, edit(t, a9, replaceIn(model, `"arg": {"as_tensor": {"name": "view"}}`, `"arg": {"as_tensor": {"name": "vieww"}}`))),
			`models/model.json: graph_module.graph.nodes[5].inputs[0].arg: undefined value "vieww"`},
		{"cycle", buildZip(t, edit(t, a9, replaceIn(model, `"arg": {"as_tensor": {"name": "linear"}}`, `"arg": {"as_tensor": {"name": "gelu"}}`))),
			`graph_module.graph.nodes[1].inputs[0].arg: undefined value "gelu"`},
		{"absurd dims", buildZip(t, edit(t, a9, replaceIn(wcfg, `"sizes": [{"as_int": 8}, {"as_int": 4}]`, `"sizes": [{"as_int": 9000000000000}, {"as_int": 9000000000000}]`))),
			`data/weights/model_weights_config.json: config["fc.weight"]: tensor_meta:`},
		{"view past its storage", buildZip(t, edit(t, a9, replaceIn(wcfg, `"storage_offset": {"as_int": 4}`, `"storage_offset": {"as_int": 5}`))),
			`config["running_tail"]: tensor_meta: the view (sizes [4], strides [1], offset 5) reaches element 8 of a storage of 8`},
		{"symbolic weight", buildZip(t, edit(t, a9, replaceIn(wcfg, `"sizes": [{"as_int": 8}], "requires_grad": true`, `"sizes": [{"as_expr": {"expr_str": "s0", "hint": null}}], "requires_grad": true`))),
			`config["fc.bias"]: tensor_meta.sizes[0] is symbolic`},
		{"missing payload", buildZip(t, edit(t, a9, func(e zentry) *zentry {
			if e.name == root+"data/weights/weight_1" {
				return nil
			}
			return &e
		})), `config["fc.bias"]: payload data/weights/weight_1: no entry`},
		{"path_name escapes", buildZip(t, edit(t, a9, replaceIn(wcfg, `"path_name": "weight_1"`, `"path_name": "../weight_1"`))), `config["fc.bias"]: bad path_name "../weight_1"`},
		{"pickled subclass", buildZip(t, edit(t, a9, replaceIn(wcfg, `"use_pickle": false`, `"use_pickle": true`))), `pickled tensor payloads (tensor subclasses) are not supported`},
		{"compressed payload", func() []byte {
			es := edit(t, a9, func(e zentry) *zentry {
				if strings.HasSuffix(e.name, "weight_0") {
					e.method = zip.Deflate
				}
				return &e
			})
			return buildZip(t, es)
		}(), `is compressed; only stored entries can be read in place`},
		{"parameter without data", buildZip(t, edit(t, a9, replaceIn(wcfg, `"fc.bias"`, `"fc.bias2"`))), `models/model.json: graph_module.signature.input_specs[1]: parameter "fc.bias" has no stored data`},
		{"pickle calls os.system", buildZip(t, wPkl(evil, nil)), `data/weights/model.pt: archive/data.pkl: pickle offset 27: call to os.system is not supported`},
		{"unknown pickle opcode", buildZip(t, wPkl([]byte("\x80\x02\xff."), nil)), `pickle offset 2: pickle opcode 'ÿ' (0xff) is not supported`},
		{"truncated pickle", buildZip(t, wPkl([]byte("\x80\x02X\xff\xff\x00\x00ab"), nil)), `truncated pickle`},
		{"pickle without STOP", buildZip(t, wPkl([]byte("\x80\x02N"), nil)), `no STOP`},
		{"pickle stack underflow", buildZip(t, wPkl([]byte("\x80\x02R."), nil)), `pickle stack underflow`},
		{"storage too small", buildZip(t, wPkl(mustFile(t, "testdata/state.pkl"), map[string][]byte{"0": make([]byte, 8), "1": make([]byte, 32)})), `storage "0" has 8 bytes, not the 128 its 32 elements need`},
		{"storage missing", buildZip(t, wPkl(mustFile(t, "testdata/state.pkl"), map[string][]byte{"0": make([]byte, 128)})), `tensor "fc.bias": storage "1": no entry "archive/data/1"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := readFrom(bytes.NewReader(c.data), int64(len(c.data)), "bad.pt2", "")
			if err == nil {
				t.Fatalf("no error; want %q", c.want)
			}
			if !strings.HasPrefix(err.Error(), "bad.pt2: ") || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error\n  %v\nwant bad.pt2: …%s…", err, c.want)
			}
		})
	}
}

func mustFile(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
