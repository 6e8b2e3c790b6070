package pm

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/fxport/fxport/ir"
)

// Ctx is what a running pass sees: its export, its own declaration and
// options, and the manager's counters, firing log and debug output.
// A Ctx is valid only during the pass's Run.
type Ctx struct {
	export *Export
	pass   *Pass
	inst   *Instance
	debug  io.Writer

	stats   map[string]int64
	fired   []Firing
	changed bool

	// entry and node locate the work in progress, for firings, debug
	// output and errors: the registry entry a driver is running and the
	// node it is looking at.
	entry     *entryRef
	node      *ir.Node
	entryMark int
}

type entryRef struct {
	kind     EntryKind
	name, id string
}

// Export is the export the pipeline runs for.
func (c *Ctx) Export() *Export { return c.export }

// Pass is the running pass.
func (c *Ctx) Pass() *Pass { return c.pass }

// Stat adds delta to the pass's statistics counter name.
func (c *Ctx) Stat(name string, delta int64) {
	if c.stats == nil {
		c.stats = map[string]int64{}
	}
	c.stats[name] += delta
}

// MarkChanged records that the pass changed the program even though the
// entry that did so reported otherwise (a node fix that mutates a node
// and returns false, a backend prepare).
func (c *Ctx) MarkChanged() { c.changed = true }

// Fired records that the running pass (or the patch or fix it is driving)
// acted on n; n may be nil for program-level actions. Drivers record the
// firing of the entries they run themselves.
func (c *Ctx) Fired(n *ir.Node, detail string) {
	f := Firing{Pass: c.inst.Name, Entry: c.pass.Name, Kind: EntryPass, ID: c.pass.ID, Detail: detail}
	if c.entry != nil {
		f.Entry, f.Kind, f.ID = c.entry.name, c.entry.kind, c.entry.id
	}
	if n != nil {
		f.Node = n.Short()
		if n.Graph != nil {
			f.Graph = n.Graph.Name
		}
	}
	c.fired = append(c.fired, f)
}

// Debugf writes one debug line in the stable format "pass: node: message"
// (pass is "pass/entry" inside a patch or fix; the node part is left out
// when n is nil), so tests can assert a pass's decisions.
func (c *Ctx) Debugf(n *ir.Node, format string, args ...any) {
	if c.debug == nil {
		return
	}
	var b strings.Builder
	b.WriteString(c.inst.Name)
	if c.entry != nil {
		b.WriteString("/" + c.entry.name)
	}
	b.WriteString(": ")
	if n != nil {
		b.WriteString(n.Short() + ": ")
	}
	fmt.Fprintf(&b, format, args...)
	b.WriteByte('\n')
	io.WriteString(c.debug, b.String())
}

// Option returns the value the pipeline text gave the option, or its
// declared default. It panics when the pass did not declare the option.
func (c *Ctx) Option(name string) string {
	spec, ok := c.pass.option(name)
	if !ok {
		panic(fmt.Sprintf("pm: pass %q reads undeclared option %q", c.pass.Name, name))
	}
	if v, ok := c.inst.Options.Get(name); ok {
		return v
	}
	return spec.Default
}

// BoolOption reads a boolean option (declared with BoolOption).
func (c *Ctx) BoolOption(name string) bool {
	v, _ := strconv.ParseBool(c.Option(name))
	return v
}

// enter marks the start of a registry entry's work on n.
func (c *Ctx) enter(kind EntryKind, name, id string, n *ir.Node) {
	c.entry = &entryRef{kind: kind, name: name, id: id}
	c.node = n
	c.entryMark = len(c.fired)
}

// leave ends the entry's work.
func (c *Ctx) leave() { c.entry, c.node = nil, nil }

// fireEntry records the current entry's firing on n unless the entry
// already recorded one for n itself.
func (c *Ctx) fireEntry(n *ir.Node) {
	short := ""
	if n != nil {
		short = n.Short()
	}
	for _, f := range c.fired[c.entryMark:] {
		if f.Node == short {
			return
		}
	}
	c.Fired(n, "")
}
