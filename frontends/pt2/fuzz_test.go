package pt2

import (
	"bytes"
	"os"
	"testing"

	"github.com/fxport/fxport/ir"
)

// checkRead reads data as a .pt2 file: it must never panic, and a program
// it accepts must verify and print as IR text that parses back to the same
// text.
func checkRead(t *testing.T, data []byte) {
	p, err := readFrom(bytes.NewReader(data), int64(len(data)), "fuzz.pt2", "")
	if err != nil {
		return
	}
	if err := ir.Verify(p); err != nil {
		t.Fatalf("accepted an invalid program: %v", err)
	}
	text := ir.Print(p)
	q, err := ir.Parse([]byte(text), "fuzz")
	if err != nil {
		t.Fatalf("printed IR does not parse: %v\n%s", err, text)
	}
	if ir.Print(q) != text {
		t.Fatalf("printed IR does not round-trip:\n%s", text)
	}
}

// smallArchives are seed archives of a few hundred bytes, one per
// container: small seeds keep the fuzzer's minimization fast.
func smallArchives(t testing.TB) [][]byte {
	w := tmeta(7, "8")
	prog := jprog{
		inputs:  []string{tref("p_b"), tref("x")},
		specsIn: []string{`{"parameter": {"arg": {"name": "p_b"}, "parameter_name": "fc.bias"}}`, `{"user_input": {"arg": ` + tref("x") + `}}`},
		tv:      map[string]string{"p_b": w, "x": w, "add": w},
		nodes:   []string{jnode("torch.ops.aten.add.Tensor", jin("self", tref("x"), 1)+", "+jin("other", tref("p_b"), 1), tref("add"))},
		outputs: []string{tref("add")},
	}.String()
	cfg := `{"config": {"fc.bias": {"path_name": "weight_0", "is_param": true, "use_pickle": false, "tensor_meta": ` + w + `}}}`
	var pkl []byte
	if b, err := os.ReadFile("testdata/state.pkl"); err == nil {
		pkl = b
	}
	return [][]byte{
		buildZip(t, []zentry{
			{name: "m/archive_format", data: []byte("pt2")}, {name: "m/archive_version", data: []byte("0")},
			{name: "m/models/model.json", data: []byte(prog)},
			{name: "m/data/weights/model_weights_config.json", data: []byte(cfg)},
			{name: "m/data/weights/weight_0", data: make([]byte, 32)},
		}),
		buildZip(t, []zentry{
			{name: "m/archive_format", data: []byte("pt2")},
			{name: "m/models/model.json", data: []byte(prog)},
			{name: "m/data/weights/model.pt", data: torchSaveZip(t, pkl, map[string][]byte{"0": make([]byte, 128), "1": make([]byte, 32)})},
		}),
		buildZip(t, []zentry{
			{name: "serialized_exported_program.json", data: []byte(prog)},
			{name: "serialized_state_dict.pt", data: torchSaveZip(t, pkl, map[string][]byte{"0": make([]byte, 128), "1": make([]byte, 32)})},
		}),
	}
}

// FuzzReadArchive feeds arbitrary bytes through the whole reader: zip
// checks, layout detection, program JSON, payload configs, pickles.
func FuzzReadArchive(f *testing.F) {
	for _, b := range smallArchives(f) {
		f.Add(b)
	}
	f.Fuzz(checkRead)
}

// FuzzDecodeProgramJSON feeds arbitrary bytes to the program JSON reader.
func FuzzDecodeProgramJSON(f *testing.F) {
	if b, err := os.ReadFile("testdata/block_8_20.json"); err == nil {
		f.Add(b)
	}
	f.Add([]byte(jprog{nodes: []string{relu}, outputs: []string{tref("relu")}}.String()))
	f.Add([]byte(`{"schema_version": {"major": 8, "minor": 1}, "graph_module": {"graph": {}, "signature": {}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 0 && data[0] == 'P' {
			return // leave archives to FuzzReadArchive
		}
		checkRead(t, data)
	})
}

// FuzzUnpickle feeds arbitrary bytes to the pickle interpreter.
func FuzzUnpickle(f *testing.F) {
	if b, err := os.ReadFile("testdata/state.pkl"); err == nil {
		f.Add(b)
	}
	f.Add([]byte("\x80\x02}q\x00(X\x01\x00\x00\x00aK\x01u."))
	f.Fuzz(func(t *testing.T, data []byte) {
		_, _ = unpickle(data)
	})
}
