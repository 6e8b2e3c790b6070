package pm

import (
	"fmt"
	"regexp"

	"github.com/fxport/fxport/ir"
)

// Translator is implemented by the ONNX target for each custom translation
// (ONNX-TR*): it lowers one IR node into the ONNX graph under construction.
// The emitter is the ONNX target's graph builder; pm does not know its type.
type Translator interface {
	Translate(n *ir.Node, emitter any) error
}

// ONNXRewriter is implemented by the ONNX target for each ONNX IR fix
// (ONNX-IR*): it rewrites a translated ONNX model (the target's model type)
// in memory, before serialization, and reports whether it changed it.
type ONNXRewriter interface {
	Rewrite(model any) (changed bool, err error)
}

// Translation is an entry of the ONNX translation table: Targets are the
// op overloads it lowers.
type Translation struct {
	ID, Name, Doc string
	Targets       []ir.Op
	Impl          Translator

	match *matcher
}

// Info describes the translation for listings.
func (t *Translation) Info() EntryInfo {
	return EntryInfo{Kind: EntryTranslation, PassKind: KindLowering, ID: t.ID, Name: t.Name, Title: Title(t.Doc),
		Backend: BackendONNX, Stage: StageONNXTranslations, Targets: opNames(t.Targets)}
}

// Ops lists the overloads the translation lowers, in op order.
func (t *Translation) Ops() []ir.Op {
	if t.match == nil {
		return nil
	}
	return t.match.sortedOps()
}

// ValidateTranslation checks a translation declaration without registering it.
func ValidateTranslation(t *Translation) error {
	_, err := checkTranslation(t)
	return err
}

func checkTranslation(t *Translation) (*matcher, error) {
	if err := checkHeader(EntryTranslation, t.Name, t.ID, t.Doc); err != nil {
		return nil, err
	}
	if t.Impl == nil {
		return nil, fmt.Errorf("onnx-translation %q: nil Impl", t.Name)
	}
	m, err := newOpMatcher(t.Targets)
	if err != nil {
		return nil, fmt.Errorf("onnx-translation %q: %w", t.Name, err)
	}
	return m, nil
}

// IRFix is an ONNX IR fix: Targets are ONNX op types ("TopK", or
// "com.microsoft.Attention" with a domain).
type IRFix struct {
	ID, Name, Doc string
	Targets       []string
	Impl          ONNXRewriter
}

// Info describes the fix for listings.
func (f *IRFix) Info() EntryInfo {
	return EntryInfo{Kind: EntryIRFix, PassKind: KindFix, ID: f.ID, Name: f.Name, Title: Title(f.Doc),
		Backend: BackendONNX, Stage: StageONNXIRFixes, Targets: f.Targets}
}

var onnxOpTypeRE = regexp.MustCompile(`^([a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)*\.)?[A-Z][A-Za-z0-9]*$`)

// ValidateIRFix checks an IR-fix declaration without registering it.
func ValidateIRFix(f *IRFix) error {
	if err := checkHeader(EntryIRFix, f.Name, f.ID, f.Doc); err != nil {
		return err
	}
	if f.Impl == nil {
		return fmt.Errorf("onnx-ir-fix %q: nil Impl", f.Name)
	}
	if len(f.Targets) == 0 {
		return fmt.Errorf("onnx-ir-fix %q: no targets", f.Name)
	}
	for _, t := range f.Targets {
		if !onnxOpTypeRE.MatchString(t) {
			return fmt.Errorf("onnx-ir-fix %q: target %q is not an ONNX op type", f.Name, t)
		}
	}
	return nil
}
