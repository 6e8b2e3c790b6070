package pt2

import (
	"archive/zip"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"strconv"
	"sync"

	"github.com/fxport/fxport/internal/inputfile"
	"github.com/fxport/fxport/ir"
)

// Source is a weight's bytes inside a zip archive: Len bytes at Offset
// within the (uncompressed) data of entry Entry of the archive file Archive.
// Nothing is read until Open. The bytes are the tensor's whole storage; the
// weight's shape, strides and storage offset say which of them it views.
//
// Its IR text spelling is
//
//	pt2("model.pt2", "model/data/weights/weight_0", offset=0, size=64)
//
// which ir.Parse reads back (the package registers "pt2" as a weight-source
// kind). Weights of torch.save pickles nested in an archive (torch 2.2–2.8)
// name the outer entry and the offset of the storage inside it.
type Source struct {
	Archive string
	Entry   string
	Offset  int64
	Len     int64

	mu       sync.Mutex
	resolved bool
	abs      int64 // absolute offset of the bytes in the archive file, once resolved

	// The stored entry's CRC-32 and its data's span in the archive file,
	// from the zip directory the reader already parsed (known when
	// hasCRC); checkCRC then reads just that span.
	hasCRC, descriptor bool // descriptor: a data descriptor follows the data
	crc                uint32
	entryAt, entrySize int64
}

// newSource returns a source whose absolute position is already known.
func newSource(archive, entry string, offset, size, abs int64) *Source {
	return &Source{Archive: archive, Entry: entry, Offset: offset, Len: size, resolved: true, abs: abs}
}

// withCRC records the directory's CRC-32 and the data span (at, size) of
// the stored entry that holds s's bytes, and whether a data descriptor
// follows the data.
func (s *Source) withCRC(crc uint32, at, size int64, descriptor bool) *Source {
	s.hasCRC, s.crc, s.entryAt, s.entrySize, s.descriptor = true, crc, at, size, descriptor
	return s
}

// Size is the number of bytes Open yields.
func (s *Source) Size() int64 { return s.Len }

func (s *Source) String() string {
	return fmt.Sprintf("pt2(%s, %s, offset=%d, size=%d)", strconv.Quote(s.Archive), strconv.Quote(s.Entry), s.Offset, s.Len)
}

// Open streams the bytes. Stored entries are read in place; a compressed
// entry is decompressed and the bytes before Offset discarded. The first
// Open of an entry in a process reads the whole entry once and checks its
// CRC-32 against the zip directory: a flipped stored byte is an error
// naming the archive and entry, never silently exported.
func (s *Source) Open() (io.ReadCloser, error) {
	if r, done, err := s.openChecked(); done {
		return r, err
	}
	if err := s.checkCRC(); err != nil {
		return nil, err
	}
	return s.open()
}

// openChecked is Open's first open of a source the reader made, whose entry
// is not checked yet: it checks the CRC on the file it then reads from, one
// open instead of two (the 10,000 weights of a 100k-node program each have
// an entry). done is false when the general path has to run.
func (s *Source) openChecked() (r io.ReadCloser, done bool, err error) {
	if !s.hasCRC || !s.descriptor && s.crc == 0 { // nothing to check: open as before
		return nil, false, nil
	}
	key := [2]string{s.Archive, s.Entry}
	if _, ok := crcChecked.Load(key); ok {
		return nil, false, nil
	}
	s.mu.Lock()
	resolved, abs := s.resolved, s.abs
	s.mu.Unlock()
	if !resolved {
		return nil, false, nil
	}
	f, _, err := inputfile.Open(s.Archive)
	if err != nil {
		err = fmt.Errorf("weight source: %w", err)
		crcChecked.Store(key, err)
		return nil, true, err
	}
	if err := checkSpanCRCIn(f, s.Archive, s.Entry, s.entryAt, s.entrySize, s.crc, s.descriptor); err != nil {
		f.Close()
		crcChecked.Store(key, err)
		return nil, true, err
	}
	crcChecked.Store(key, nil)
	return &sectionFile{io.NewSectionReader(f, abs, s.Len), f}, true, nil
}

// crcChecked caches checkCRC's answer per archive and entry.
var crcChecked sync.Map // [2]string{archive, entry} → error (or nil)

// checkCRC checks, once per archive and entry, the CRC-32 of the stored
// entry that holds s's bytes against the zip directory's. A source made by
// the reader knows the entry's span and CRC and reads just that span; one
// parsed from IR text reads the archive's directory first. Either way the
// cost is the entry's bytes, never the whole directory per weight.
func (s *Source) checkCRC() error {
	key := [2]string{s.Archive, s.Entry}
	if v, ok := crcChecked.Load(key); ok {
		err, _ := v.(error)
		return err
	}
	var err error
	if s.hasCRC {
		err = checkSpanCRC(s.Archive, s.Entry, s.entryAt, s.entrySize, s.crc, s.descriptor)
	} else {
		err = checkCRC(s.Archive, s.Entry)
	}
	crcChecked.Store(key, err)
	return err
}

// copyBufs holds the buffers checkSpanCRC reads through: io.Copy would
// allocate 32 KiB per weight (about 300 MB for the 10,000 weights of a
// 100k-node program), all of it garbage the collector then has to chase.
var copyBufs = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

// checkSpanCRC checks the size bytes at offset at of the file archive (a
// stored zip entry's data) against the directory's CRC-32 want, with
// archive/zip's rules: when a data descriptor follows the data its CRC
// must equal want too; without one, a zero CRC is not checked.
func checkSpanCRC(archive, entry string, at, size int64, want uint32, descriptor bool) error {
	if !descriptor && want == 0 {
		return nil
	}
	f, _, err := inputfile.Open(archive)
	if err != nil {
		return fmt.Errorf("weight source: %w", err)
	}
	defer f.Close()
	return checkSpanCRCIn(f, archive, entry, at, size, want, descriptor)
}

// checkSpanCRCIn is checkSpanCRC on the archive opened as f.
func checkSpanCRCIn(f *os.File, archive, entry string, at, size int64, want uint32, descriptor bool) error {
	if !descriptor && want == 0 {
		return nil
	}
	corrupt := func(err error) error {
		return fmt.Errorf("weight source %s: entry %s: %w (the stored bytes are corrupt)", archive, entry, err)
	}
	h := crc32.NewIEEE()
	buf := copyBufs.Get().(*[]byte)
	n, err := io.CopyBuffer(h, io.NewSectionReader(f, at, size), *buf)
	copyBufs.Put(buf)
	if err != nil {
		return fmt.Errorf("weight source %s: entry %s: %w", archive, entry, err)
	}
	if n != size {
		return corrupt(io.ErrUnexpectedEOF)
	}
	if descriptor {
		// The descriptor: an optional signature, the CRC-32 and two
		// 32-bit sizes (not checked, as in archive/zip).
		var d [16]byte
		m, _ := f.ReadAt(d[:], at+size)
		c, need := binary.LittleEndian.Uint32(d[:4]), 12
		if c == 0x08074b50 {
			c, need = binary.LittleEndian.Uint32(d[4:]), 16
		}
		if m < need {
			return corrupt(io.ErrUnexpectedEOF)
		}
		if c != want {
			return corrupt(zip.ErrChecksum)
		}
	}
	if h.Sum32() != want {
		return corrupt(zip.ErrChecksum)
	}
	return nil
}

// checkCRC reads entry of the zip file at archive to its end through
// archive/zip, which compares the CRC-32 of the bytes with the directory's.
func checkCRC(archive, entry string) error {
	f, size, err := inputfile.Open(archive)
	if err != nil {
		return fmt.Errorf("weight source: %w", err)
	}
	defer f.Close()
	zr, err := zip.NewReader(f, size)
	if err != nil && zr == nil {
		return fmt.Errorf("weight source %s: %w", archive, err)
	}
	for _, zf := range zr.File {
		if zf.Name != entry {
			continue
		}
		rc, err := zf.Open()
		if err != nil {
			return fmt.Errorf("weight source %s: %s: %w", archive, entry, err)
		}
		defer rc.Close()
		if _, err := io.Copy(io.Discard, rc); err != nil {
			return fmt.Errorf("weight source %s: entry %s: %w (the stored bytes are corrupt)", archive, entry, err)
		}
		return nil
	}
	return fmt.Errorf("weight source %s: no entry %q", archive, entry)
}

func (s *Source) open() (io.ReadCloser, error) {
	f, err := os.Open(s.Archive)
	if err != nil {
		return nil, fmt.Errorf("weight source: %w", err)
	}
	s.mu.Lock()
	resolved, abs := s.resolved, s.abs
	s.mu.Unlock()
	if resolved {
		return &sectionFile{io.NewSectionReader(f, abs, s.Len), f}, nil
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("weight source: %w", err)
	}
	zr, err := zip.NewReader(f, st.Size())
	if err != nil && zr == nil {
		f.Close()
		return nil, fmt.Errorf("weight source %s: %w", s.Archive, err)
	}
	for _, zf := range zr.File {
		if zf.Name != s.Entry {
			continue
		}
		if s.Offset < 0 || s.Len < 0 || uint64(s.Offset)+uint64(s.Len) > zf.UncompressedSize64 {
			f.Close()
			return nil, fmt.Errorf("weight source %s: %s: range [%d, %d) exceeds the entry's %d bytes", s.Archive, s.Entry, s.Offset, s.Offset+s.Len, zf.UncompressedSize64)
		}
		if zf.Method == zip.Store {
			off, err := zf.DataOffset()
			if err != nil {
				f.Close()
				return nil, fmt.Errorf("weight source %s: %s: %w", s.Archive, s.Entry, err)
			}
			s.mu.Lock()
			s.resolved, s.abs = true, off+s.Offset
			s.mu.Unlock()
			return &sectionFile{io.NewSectionReader(f, off+s.Offset, s.Len), f}, nil
		}
		rc, err := zf.Open()
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("weight source %s: %s: %w", s.Archive, s.Entry, err)
		}
		if _, err := io.CopyN(io.Discard, rc, s.Offset); err != nil {
			rc.Close()
			f.Close()
			return nil, fmt.Errorf("weight source %s: %s: %w", s.Archive, s.Entry, err)
		}
		return &limitedFile{io.LimitReader(rc, s.Len), rc, f}, nil
	}
	f.Close()
	return nil, fmt.Errorf("weight source %s: no entry %q", s.Archive, s.Entry)
}

type sectionFile struct {
	*io.SectionReader
	f *os.File
}

func (s *sectionFile) Close() error { return s.f.Close() }

type limitedFile struct {
	io.Reader
	rc io.Closer
	f  *os.File
}

func (l *limitedFile) Close() error {
	err := l.rc.Close()
	if e := l.f.Close(); err == nil {
		err = e
	}
	return err
}

func init() {
	ir.RegisterWeightSource("pt2", parseSource)
}

// parseSource reads the arguments of pt2("archive", "entry", offset=N, size=N).
func parseSource(pos []ir.Arg, kw map[string]ir.Arg) (ir.WeightSource, error) {
	if len(pos) != 2 || pos[0].Kind != ir.ArgString || pos[1].Kind != ir.ArgString {
		return nil, fmt.Errorf(`pt2(...) takes the archive path and the entry name as strings`)
	}
	s := &Source{Archive: pos[0].Str, Entry: pos[1].Str}
	sawSize := false
	for k, v := range kw {
		if v.Kind != ir.ArgInt || v.Int < 0 {
			return nil, fmt.Errorf("pt2(...): %s must be a non-negative int", k)
		}
		switch k {
		case "offset":
			s.Offset = v.Int
		case "size":
			s.Len, sawSize = v.Int, true
		default:
			return nil, fmt.Errorf("pt2(...): unknown argument %q", k)
		}
	}
	if !sawSize {
		return nil, fmt.Errorf("pt2(...): size is required")
	}
	return s, nil
}
