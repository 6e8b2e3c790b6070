package pm

import "fmt"

// Kind classifies a pass by what it does to the program.
type Kind uint8

// Pass kinds.
const (
	// KindPatch rewrites nodes on behalf of a registered patch; every
	// application is recorded so it can be reverted.
	KindPatch Kind = iota + 1
	// KindFix repairs a pattern a backend cannot handle; fixes are not reverted.
	KindFix
	// KindTransform is a general rewrite (decomposition, cleanup, DCE).
	KindTransform
	// KindAnalysis computes facts and must not change the program.
	KindAnalysis
	// KindLowering moves the program towards a target (translation, emission).
	KindLowering
)

var kindNames = [...]string{KindPatch: "patch", KindFix: "fix", KindTransform: "transform", KindAnalysis: "analysis", KindLowering: "lowering"}

func (k Kind) String() string {
	if k >= KindPatch && int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// Valid reports whether k is one of the declared kinds.
func (k Kind) Valid() bool { return k >= KindPatch && int(k) < len(kindNames) }

// ParseKind maps a kind's String form back to the kind.
func ParseKind(s string) (Kind, bool) {
	for k := KindPatch; int(k) < len(kindNames); k++ {
		if kindNames[k] == s {
			return k, true
		}
	}
	return 0, false
}

// EntryKind names the registry an entry lives in.
type EntryKind uint8

// Registry kinds, in listing order.
const (
	EntryPass EntryKind = iota + 1
	EntryCapture
	EntryPrepare
	EntryPatch
	EntryProgramFix
	EntryNodeFix
	EntryTranslation
	EntryIRFix
	EntryInvariant
	EntryDeclined
)

var entryKindNames = [...]string{
	EntryPass: "pass", EntryCapture: "capture-step", EntryPrepare: "backend-prepare", EntryPatch: "patch",
	EntryProgramFix: "program-fix", EntryNodeFix: "node-fix", EntryTranslation: "onnx-translation", EntryIRFix: "onnx-ir-fix",
	EntryInvariant: "invariant", EntryDeclined: "declined",
}

func (k EntryKind) String() string {
	if k >= EntryPass && int(k) < len(entryKindNames) {
		return entryKindNames[k]
	}
	return fmt.Sprintf("EntryKind(%d)", uint8(k))
}
