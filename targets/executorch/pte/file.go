package pte

import (
	etfb "github.com/fxport/fxport/targets/executorch/fb/executorch_flatbuffer"
	xnnfb "github.com/fxport/fxport/targets/executorch/fb/fb_xnnpack"
)

// File is a decoded .pte.
type File struct {
	Name        string          // the path or name given to Read / Decode
	Size        int             // bytes in the file
	Header      *ExtendedHeader // nil when the file has no eh00 header
	ProgramSize int             // bytes of the program flatbuffer (incl. the header)
	Program     *etfb.ProgramT  // the decoded program tables
	Segments    []Segment       // Program.segments with their bytes
	Methods     []Method        // one per execution plan, in file order
	Bundled     *Bundled        // set when the file is a bundled program (.bpte)
}

// Segment is one entry of Program.segments.
type Segment struct {
	Offset uint64 // relative to the segment base offset
	Size   uint64
	Data   []byte // the segment's bytes (aliases the file)
	// Pieces, when set instead of Data (writing only), produce the
	// segment's bytes on demand, each at its Offset inside the segment; the
	// gaps between them and after the last are zero up to Size (0: the end
	// of the last piece). See Write (lazy.go).
	Pieces []Piece
}

// Method is an execution plan with its delegate payloads resolved.
type Method struct {
	Plan      *etfb.ExecutionPlanT
	Delegates []Delegate
}

// Delegate is a BackendDelegate with its processed bytes.
type Delegate struct {
	ID       string
	Location etfb.DataLocation
	Index    uint32
	Data     []byte      // the processed blob
	XNNPACK  *XNNPayload // decoded when ID is XnnpackBackend
}

// XNNPACKBackendID is the BackendDelegate.id of the XNNPACK delegate.
const XNNPACKBackendID = "XnnpackBackend"

// XNNPayload is a decoded XNNPACK delegate blob.
type XNNPayload struct {
	Header       *XNNHeader // nil for a bare flatbuffer
	Identifier   string     // XN00 or XN01
	Graph        *xnnfb.XNNGraphT
	ConstantData []byte // the inline constant region (usually empty)
}

// Bundled is a decoded bundled program (.bpte, identifier BP08): the
// embedded program is decoded into the enclosing File (whose Size is the
// whole .bpte), the test suites here (bundled.go).
type Bundled struct {
	Version     uint32
	ProgramSize int            // bytes of the embedded .pte
	TestSuites  []BundledSuite // in file order (exir sorts them by method)
}
