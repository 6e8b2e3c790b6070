package pt2

import (
	"archive/zip"
	"crypto/sha1"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"hash"
	"io"
	"path/filepath"
	"strings"

	frontend "github.com/fxport/fxport/frontends/pt2"
	"github.com/fxport/fxport/internal/atomicfile"
	"github.com/fxport/fxport/internal/pt2schema"
	"github.com/fxport/fxport/ir"
)

// Write writes p as a PT2 archive (the layout torch ≥ 2.9 writes) at path.
// The archive's root folder is the file's base name without extension;
// every record is stored uncompressed with its data aligned to 64 bytes,
// flags 0x0808 and a fixed timestamp, in a fixed order, so equal programs
// give byte-identical files. Weights are streamed from their sources one at
// a time, never all in memory. The file is written beside path and renamed
// into place, so a failure leaves no partial output.
func Write(p *ir.Program, path string) error {
	if err := ir.Verify(p); err != nil {
		return fmt.Errorf("%s: cannot write an invalid program: %w", path, err)
	}
	// A parameter, buffer or constant without data (a program read from a
	// bare model.json, which stores none) would make an archive no reader
	// accepts: refuse it here rather than write it weightless.
	for _, in := range p.Signature.Inputs {
		switch in.Kind {
		case ir.Parameter, ir.Buffer, ir.ConstantTensor:
			if p.Weight(in.Target) == nil {
				return fmt.Errorf("%s: cannot write %s %q: the program holds no data for it", path, in.Kind, in.Target)
			}
		}
	}
	root := archiveRoot(path)
	model := "model"
	if m, ok := p.Meta.Get(frontend.MetaModel); ok && m != "" {
		if strings.ContainsAny(m, "/\\") || m == "." || m == ".." {
			return fmt.Errorf("%s: bad model name %q", path, m)
		}
		model = m
	}
	plan, err := planWeights(p)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return atomicfile.Write(path, func(w io.Writer) error {
		z := newZipWriter(w)
		if err := writeArchive(z, p, plan, root, model); err != nil {
			return err
		}
		return z.close()
	})
}

// archiveRoot is the root folder torch uses for a file: its base name
// without extension ("archive" when that is not a plain name).
func archiveRoot(path string) string {
	base := filepath.Base(path)
	root := strings.TrimSuffix(base, filepath.Ext(base))
	if root == "" || root == "." || root == ".." || strings.ContainsAny(root, "/\\:\x00") {
		return "archive"
	}
	return root
}

// writeArchive writes every record in order.
func writeArchive(z *zipWriter, p *ir.Program, plan *weightPlan, root, model string) error {
	r := root + "/"
	for _, rec := range []struct{ name, data string }{
		{"archive_format", "pt2"}, {"archive_version", "0"}, {"byteorder", "little"},
	} {
		if err := z.add(r+rec.name, strings.NewReader(rec.data)); err != nil {
			return err
		}
	}
	fw, err := z.create(r + "models/" + model + ".json")
	if err != nil {
		return err
	}
	e := pt2schema.NewEncoder(fw)
	if err := (&writer{p: p}).program(e); err != nil {
		return err
	}
	if err := e.Flush(); err != nil {
		return err
	}
	for _, part := range []struct {
		dir, cfg string
		payloads []*payload
		config   *pt2schema.PayloadConfig
	}{
		{"data/weights/", model + "_weights_config.json", plan.weights, &plan.weightsConfig},
		{"data/constants/", model + "_constants_config.json", plan.constants, &plan.constantsConfig},
	} {
		fw, err := z.create(r + part.dir + part.cfg)
		if err != nil {
			return err
		}
		e := pt2schema.NewEncoder(fw)
		pt2schema.EncodePayloadConfig(e, part.config)
		if err := e.Flush(); err != nil {
			return err
		}
		for _, pl := range part.payloads {
			if err := z.payload(r+part.dir+pl.name, pl); err != nil {
				return err
			}
		}
	}
	// torch.export.load reads data/sample_inputs/<model>.pt unconditionally;
	// an empty record is what torch.export.save writes without example
	// inputs (the loader then sets example_inputs to None). fxport keeps no
	// sample inputs.
	if err := z.add(r+"data/sample_inputs/"+model+".pt", strings.NewReader("")); err != nil {
		return err
	}
	if err := z.add(r+".data/version", strings.NewReader("6\n")); err != nil {
		return err
	}
	id := hex.EncodeToString(z.sum.Sum(nil))
	return z.add(r+".data/serialization_id", strings.NewReader(id))
}

// zipWriter writes stored zip records with 64-byte aligned data.
type zipWriter struct {
	cw  *countWriter
	zw  *zip.Writer
	sum hash.Hash // of every record's name and bytes, for serialization_id
	// cur counts the bytes of the record being written: its data
	// descriptor, which the zip writer emits when the next record starts,
	// is 24 bytes instead of 16 once the record reaches 4 GiB.
	cur *countWriter
	// buf is the one buffer every record is copied through (io.Copy
	// would allocate 32 KiB per record: one per weight storage).
	buf []byte
}

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(b []byte) (int, error) {
	n, err := c.w.Write(b)
	c.n += int64(n)
	return n, err
}

func newZipWriter(w io.Writer) *zipWriter {
	cw := &countWriter{w: w}
	return &zipWriter{cw: cw, zw: zip.NewWriter(cw), sum: sha1.New()}
}

// alignment of record data, as torch's PyTorchStreamWriter pads it.
const alignment = 64

// create starts a stored record whose data begins on a 64-byte boundary:
// the local header carries a padding extra field ("FB", as torch writes).
func (z *zipWriter) create(name string) (io.Writer, error) {
	if err := z.zw.Flush(); err != nil {
		return nil, err
	}
	const localHeader = 30
	start := z.cw.n + localHeader + int64(len(name)) + 4
	if z.cur != nil {
		start += 16 // the pending data descriptor of the previous record
		if z.cur.n >= 0xffffffff {
			start += 8
		}
	}
	pad := (alignment - start%alignment) % alignment
	extra := make([]byte, 4+pad)
	extra[0], extra[1] = 'F', 'B'
	binary.LittleEndian.PutUint16(extra[2:], uint16(pad))
	for i := 4; i < len(extra); i++ {
		extra[i] = 'Z'
	}
	fh := &zip.FileHeader{
		Name:         name,
		Method:       zip.Store,
		Flags:        0x800, // UTF-8 names; the writer adds 0x8 (data descriptor)
		Extra:        extra,
		ModifiedDate: 1<<5 | 1, // 1980-01-01, the earliest DOS date
	}
	w, err := z.zw.CreateHeader(fh)
	if err != nil {
		return nil, err
	}
	z.sum.Write([]byte(name))
	z.sum.Write([]byte{0})
	z.cur = &countWriter{w: io.MultiWriter(w, z.sum)}
	return z.cur, nil
}

// add writes a record from r.
func (z *zipWriter) add(name string, r io.Reader) error {
	w, err := z.create(name)
	if err != nil {
		return err
	}
	_, err = io.CopyBuffer(w, r, z.copyBuf())
	return err
}

// payload streams one storage from its source.
func (z *zipWriter) payload(name string, pl *payload) error {
	w, err := z.create(name)
	if err != nil {
		return err
	}
	if pl.src == nil {
		return nil
	}
	rc, err := pl.src.Open()
	if err != nil {
		return fmt.Errorf("weight %q: %w", pl.first, err)
	}
	defer rc.Close()
	n, err := io.CopyBuffer(w, io.LimitReader(rc, pl.src.Size()+1), z.copyBuf())
	if err != nil {
		return fmt.Errorf("weight %q: %w", pl.first, err)
	}
	if n != pl.src.Size() {
		return fmt.Errorf("weight %q: its source yielded %d bytes, not the %d it declares", pl.first, n, pl.src.Size())
	}
	return nil
}

func (z *zipWriter) copyBuf() []byte {
	if z.buf == nil {
		z.buf = make([]byte, 32<<10)
	}
	return z.buf
}

func (z *zipWriter) close() error { return z.zw.Close() }
