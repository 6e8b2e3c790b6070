package ir

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"strconv"
	"sync"
)

// FileSource is a byte range of a file on disk. Nothing is read until Open.
type FileSource struct {
	Path        string
	Offset, Len int64
}

// Open streams the range.
func (s *FileSource) Open() (io.ReadCloser, error) {
	f, err := os.Open(s.Path)
	if err != nil {
		return nil, fmt.Errorf("weight source: %w", err)
	}
	return &sectionCloser{io.NewSectionReader(f, s.Offset, s.Len), f}, nil
}

type sectionCloser struct {
	*io.SectionReader
	f *os.File
}

func (s *sectionCloser) Close() error { return s.f.Close() }

// Size is the range length.
func (s *FileSource) Size() int64 { return s.Len }

func (s *FileSource) String() string {
	return fmt.Sprintf("file(%s, offset=%d, size=%d)", strconv.Quote(s.Path), s.Offset, s.Len)
}

// InlineSource holds small constant data in the IR itself (tests, folded constants).
type InlineSource struct{ Data []byte }

// Open returns the bytes.
func (s *InlineSource) Open() (io.ReadCloser, error) {
	return io.NopCloser(bytes.NewReader(s.Data)), nil
}

// Size is len(Data).
func (s *InlineSource) Size() int64 { return int64(len(s.Data)) }

func (s *InlineSource) String() string {
	return "inline(" + strconv.Quote(hex.EncodeToString(s.Data)) + ")"
}

// SourceParser builds a WeightSource from the arguments written in IR text:
// positional arguments and keyword arguments, as literals.
type SourceParser func(pos []Arg, kw map[string]Arg) (WeightSource, error)

var (
	sourceMu      sync.RWMutex
	sourceParsers = map[string]SourceParser{
		"file":   parseFileSource,
		"inline": parseInlineSource,
	}
)

// RegisterWeightSource makes a weight-source spelling readable by Parse
// (frontends register their archive-backed sources this way).
func RegisterWeightSource(kind string, parse SourceParser) {
	sourceMu.Lock()
	defer sourceMu.Unlock()
	if _, dup := sourceParsers[kind]; dup {
		panic("ir: weight source " + kind + " registered twice")
	}
	sourceParsers[kind] = parse
}

func lookupSourceParser(kind string) (SourceParser, bool) {
	sourceMu.RLock()
	defer sourceMu.RUnlock()
	p, ok := sourceParsers[kind]
	return p, ok
}

func parseFileSource(pos []Arg, kw map[string]Arg) (WeightSource, error) {
	if len(pos) != 1 || pos[0].Kind != ArgString {
		return nil, fmt.Errorf("file(...) takes one path string")
	}
	s := &FileSource{Path: pos[0].Str}
	for k, v := range kw {
		if v.Kind != ArgInt || v.Int < 0 {
			return nil, fmt.Errorf("file(...): %s must be a non-negative int", k)
		}
		switch k {
		case "offset":
			s.Offset = v.Int
		case "size":
			s.Len = v.Int
		default:
			return nil, fmt.Errorf("file(...): unknown argument %q", k)
		}
	}
	return s, nil
}

func parseInlineSource(pos []Arg, kw map[string]Arg) (WeightSource, error) {
	if len(pos) != 1 || pos[0].Kind != ArgString || len(kw) != 0 {
		return nil, fmt.Errorf("inline(...) takes one hex string")
	}
	b, err := hex.DecodeString(pos[0].Str)
	if err != nil {
		return nil, fmt.Errorf("inline(...): %w", err)
	}
	return &InlineSource{Data: b}, nil
}
