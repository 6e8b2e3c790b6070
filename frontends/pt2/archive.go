package pt2

import (
	"archive/zip"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"unicode/utf8"
)

// MaxJSONBytes bounds a program or payload-config JSON record (inflated):
// 512 MiB by default; fxport parse/export --max-json-bytes raises it for a
// program that needs more (docs/reliability.md).
var MaxJSONBytes int64 = DefaultMaxJSONBytes

// DefaultMaxJSONBytes is MaxJSONBytes' default.
const DefaultMaxJSONBytes = 512 << 20

// Limits that keep hostile archives from exhausting memory.
const (
	// maxEntries bounds the number of entries of an archive.
	maxEntries = 1 << 20
	// maxPickleSize bounds a data.pkl record.
	maxPickleSize = 256 << 20
	// maxMarkerSize bounds archive_format, archive_version and byteorder.
	maxMarkerSize = 64
	// maxRatio bounds the compression ratio of a compressed entry (zip bombs).
	maxRatio = 1024
)

// zipArchive is an opened, validated zip file. Names are full entry names.
type zipArchive struct {
	ra    io.ReaderAt
	size  int64
	files map[string]*zip.File
	order []string         // entry names in central-directory order
	data  map[string]int64 // absolute data offset of every entry
}

// openZip reads the central directory of a zip held in ra and checks every
// entry: safe names (no absolute paths, "..", backslashes or NUL), no
// duplicates, known compression methods, sizes that are consistent and fit
// in the file, compressed entries within a sane ratio, and no two entries
// whose data overlap.
func openZip(ra io.ReaderAt, size int64) (*zipArchive, error) {
	zr, err := zip.NewReader(ra, size)
	if err != nil {
		if errors.Is(err, zip.ErrInsecurePath) && zr != nil {
			err = nil // checked below with a message naming the entry
		} else {
			return nil, fmt.Errorf("not a readable zip archive: %w", err)
		}
	}
	if len(zr.File) > maxEntries {
		return nil, fmt.Errorf("zip archive has %d entries (limit %d)", len(zr.File), maxEntries)
	}
	a := &zipArchive{ra: ra, size: size, files: make(map[string]*zip.File, len(zr.File)), data: make(map[string]int64, len(zr.File))}
	type span struct {
		name       string
		start, end int64
	}
	spans := make([]span, 0, len(zr.File))
	for _, f := range zr.File {
		if err := checkEntryName(f.Name); err != nil {
			return nil, err
		}
		if _, dup := a.files[f.Name]; dup {
			return nil, fmt.Errorf("zip entry %q appears twice", f.Name)
		}
		switch f.Method {
		case zip.Store:
			if f.CompressedSize64 != f.UncompressedSize64 {
				return nil, fmt.Errorf("zip entry %q is stored but claims %d bytes compressed and %d uncompressed", f.Name, f.CompressedSize64, f.UncompressedSize64)
			}
		case zip.Deflate:
			if f.UncompressedSize64 > maxRatio*f.CompressedSize64+(1<<20) {
				return nil, fmt.Errorf("zip entry %q expands %d bytes to %d (more than %d:1; a zip bomb?)", f.Name, f.CompressedSize64, f.UncompressedSize64, maxRatio)
			}
		default:
			return nil, fmt.Errorf("zip entry %q uses unsupported compression method %d", f.Name, f.Method)
		}
		if f.Flags&0x1 != 0 {
			return nil, fmt.Errorf("zip entry %q is encrypted", f.Name)
		}
		off, err := f.DataOffset()
		if err != nil {
			return nil, fmt.Errorf("zip entry %q: bad local header: %w", f.Name, err)
		}
		if off < 0 || off > size || f.CompressedSize64 > uint64(size-off) {
			return nil, fmt.Errorf("zip entry %q claims %d bytes at offset %d, past the end of the %d-byte file", f.Name, f.CompressedSize64, off, size)
		}
		a.files[f.Name] = f
		a.order = append(a.order, f.Name)
		a.data[f.Name] = off
		if f.CompressedSize64 > 0 {
			spans = append(spans, span{f.Name, off, off + int64(f.CompressedSize64)})
		}
	}
	sort.Slice(spans, func(i, j int) bool { return spans[i].start < spans[j].start })
	for i := 1; i < len(spans); i++ {
		if spans[i].start < spans[i-1].end {
			return nil, fmt.Errorf("zip entries %q and %q overlap", spans[i-1].name, spans[i].name)
		}
	}
	return a, nil
}

// checkEntryName rejects names that could escape an extraction directory or
// that are ambiguous.
func checkEntryName(name string) error {
	bad := func(why string) error { return fmt.Errorf("zip entry %q: unsafe name (%s)", name, why) }
	switch {
	case name == "":
		return bad("empty")
	case !utf8.ValidString(name):
		return bad("not UTF-8")
	case strings.ContainsRune(name, 0):
		return bad("NUL byte")
	case strings.ContainsRune(name, '\\'):
		return bad("backslash")
	case name[0] == '/':
		return bad("absolute path")
	case len(name) >= 2 && name[1] == ':':
		return bad("drive letter")
	}
	for _, part := range strings.Split(strings.TrimSuffix(name, "/"), "/") {
		if part == ".." || part == "." || part == "" {
			return bad(fmt.Sprintf("path component %q", part))
		}
	}
	return nil
}

// has reports whether the archive holds an entry.
func (a *zipArchive) has(name string) bool { _, ok := a.files[name]; return ok }

// read returns an entry's bytes, refusing entries larger than max.
func (a *zipArchive) read(name string, max int64) ([]byte, error) {
	f := a.files[name]
	if f == nil {
		return nil, fmt.Errorf("no entry %q", name)
	}
	if f.UncompressedSize64 > uint64(max) {
		return nil, fmt.Errorf("%d bytes is more than the %d this record may have", f.UncompressedSize64, max)
	}
	rc, err := f.Open()
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	buf := make([]byte, f.UncompressedSize64)
	if _, err := io.ReadFull(rc, buf); err != nil {
		return nil, fmt.Errorf("record shorter than the %d bytes the directory says: %w", len(buf), err)
	}
	// Reading past the end checks the CRC (and that nothing follows).
	var one [1]byte
	n, err := rc.Read(one[:])
	if n > 0 {
		return nil, fmt.Errorf("record holds more than the %d bytes the directory says", len(buf))
	}
	if err != nil && err != io.EOF {
		return nil, err
	}
	return buf, nil
}

// withCRC gives src the CRC-32 and data span of the stored entry name so
// that its first Open checks just that span, as archive/zip would.
func (a *zipArchive) withCRC(src *Source, name string) *Source {
	f := a.files[name]
	if f == nil || f.Method != zip.Store {
		return src
	}
	return src.withCRC(f.CRC32, a.data[name], int64(f.UncompressedSize64), f.Flags&0x8 != 0)
}

// stored returns the absolute offset and size of a stored entry's data.
func (a *zipArchive) stored(name string) (off, size int64, err error) {
	f := a.files[name]
	if f == nil {
		return 0, 0, fmt.Errorf("no entry %q", name)
	}
	if f.Method != zip.Store {
		return 0, 0, fmt.Errorf("entry %q is compressed; only stored entries can be read in place", name)
	}
	return a.data[name], int64(f.UncompressedSize64), nil
}
