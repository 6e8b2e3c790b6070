package fxtext

// The intermediate form every FX text form is parsed into before the IR is
// built: a module (GraphModule class) with a forward function and nested
// submodule classes (the bodies of higher-order ops).

// fxModule is one GraphModule: its forward and its child modules.
type fxModule struct {
	name     string // class name ("GraphModule", "true_graph_0", "<lambda>")
	pos      pos
	forward  *fxFunc
	children []*fxModule
	// lambdas maps attribute names to the "<lambda>" classes older dumps
	// print, assigned in order of first reference.
	lambdas map[string]*fxModule
}

// fxParam is one input of a forward (a placeholder).
type fxParam struct {
	name  string
	annot *annot
	pos   pos
}

// fxStmt is one node: "name[: annot] = rhs".
type fxStmt struct {
	name  string // the FX node name; "" for a bare expression statement
	alias []string
	annot *annot
	rhs   *expr
	pos   pos
	stack string // the stack trace comment in force ("" when none)
	// rebind is set for "x += y": the node's result takes over the name x.
	rebind bool
}

// fxFunc is a forward: its inputs, nodes and output.
type fxFunc struct {
	name      string
	pos       pos
	params    []*fxParam
	stmts     []*fxStmt
	ret       *expr
	retPos    pos
	hasReturn bool
	graphForm bool
	// leafAnnots holds "name: annot" declarations of names that are not
	// inputs yet: unflattened modules declare the pytree leaves that a
	// following tree_flatten_spec assigns.
	leafAnnots map[string]*annot
}

// annot is a type annotation as written (quotes removed).
type annot struct {
	text string
	pos  pos
}

// child finds the submodule an attribute name refers to.
func (m *fxModule) child(name string) *fxModule {
	for _, c := range m.children {
		if c.name == name {
			return c
		}
	}
	if c, ok := m.lambdas[name]; ok {
		return c
	}
	// Older dumps print every subgraph class as "<lambda>": hand them out in
	// the order the forward first refers to them.
	for _, c := range m.children {
		if c.name != "<lambda>" || m.lambdaTaken(c) {
			continue
		}
		if m.lambdas == nil {
			m.lambdas = map[string]*fxModule{}
		}
		m.lambdas[name] = c
		return c
	}
	return nil
}

func (m *fxModule) lambdaTaken(c *fxModule) bool {
	for _, t := range m.lambdas {
		if t == c {
			return true
		}
	}
	return false
}
