package pm

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// SyntaxError is a malformed pipeline text.
type SyntaxError struct {
	// Offset is the byte offset of the problem in the text.
	Offset int
	Msg    string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("pipeline text: offset %d: %s", e.Offset, e.Msg)
}

// ParsePipeline parses pipeline text against Default and validates it.
func ParsePipeline(text string) (*Pipeline, error) { return Default.ParsePipeline(text) }

// ParsePipeline parses pipeline text, resolves its pass names in c and
// validates the result (see Validate); stage names come back qualified.
func (c *Catalog) ParsePipeline(text string) (*Pipeline, error) {
	ps := &pipelineParser{src: text}
	pl, err := ps.pipeline()
	if err != nil {
		return nil, err
	}
	pl.Catalog = c
	return c.resolve(pl)
}

type pipelineParser struct {
	src string
	pos int
}

func (p *pipelineParser) errorf(format string, args ...any) error {
	return &SyntaxError{Offset: p.pos, Msg: fmt.Sprintf(format, args...)}
}

func (p *pipelineParser) skipSpace() {
	for p.pos < len(p.src) && strings.IndexByte(" \t\r\n", p.src[p.pos]) >= 0 {
		p.pos++
	}
}

// accept consumes c (after spaces) if it is next.
func (p *pipelineParser) accept(c byte) bool {
	p.skipSpace()
	if p.pos < len(p.src) && p.src[p.pos] == c {
		p.pos++
		return true
	}
	return false
}

func (p *pipelineParser) expect(c byte) error {
	if !p.accept(c) {
		return p.errorf("expected %q, found %s", c, p.found())
	}
	return nil
}

func (p *pipelineParser) found() string {
	if p.pos >= len(p.src) {
		return "end of text"
	}
	return strconv.Quote(p.src[p.pos : p.pos+1])
}

// word reads a run of bytes in set.
func (p *pipelineParser) word(what string, ok func(byte) bool) (string, error) {
	p.skipSpace()
	start := p.pos
	for p.pos < len(p.src) && ok(p.src[p.pos]) {
		p.pos++
	}
	if p.pos == start {
		return "", p.errorf("expected %s, found %s", what, p.found())
	}
	return p.src[start:p.pos], nil
}

func isNameByte(c byte) bool { return c == '-' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' }

func isDottedByte(c byte) bool { return c == '.' || isNameByte(c) }

func isBareByte(c byte) bool { return bareValueRE.MatchString(string(c)) }

// pipeline := header ':' [ group { ',' group } ]
func (p *pipelineParser) pipeline() (*Pipeline, error) {
	h, err := p.word("pipeline target", isDottedByte)
	if err != nil {
		return nil, err
	}
	target, backend, err := parseHeader(h)
	if err != nil {
		p.pos -= len(h)
		return nil, p.errorf("%v", err)
	}
	if err := p.expect(':'); err != nil {
		return nil, err
	}
	pl := &Pipeline{Target: target, Backend: backend}
	p.skipSpace()
	for p.pos < len(p.src) {
		if len(pl.Groups) > 0 {
			if err := p.expect(','); err != nil {
				return nil, err
			}
		}
		g, err := p.group()
		if err != nil {
			return nil, err
		}
		pl.Groups = append(pl.Groups, g)
		p.skipSpace()
	}
	return pl, nil
}

// group := stage '(' [ instance { ',' instance } ] ')'
func (p *pipelineParser) group() (Group, error) {
	stage, err := p.word("stage name", isDottedByte)
	if err != nil {
		return Group{}, err
	}
	if err := p.expect('('); err != nil {
		return Group{}, err
	}
	g := Group{Stage: stage}
	if p.accept(')') {
		return g, nil
	}
	for {
		in, err := p.instance()
		if err != nil {
			return Group{}, err
		}
		g.Instances = append(g.Instances, in)
		if p.accept(')') {
			return g, nil
		}
		if err := p.expect(','); err != nil {
			return Group{}, err
		}
	}
}

// instance := name [ '{' { key '=' value } '}' ]
func (p *pipelineParser) instance() (Instance, error) {
	name, err := p.word("pass name", isNameByte)
	if err != nil {
		return Instance{}, err
	}
	in := Instance{Name: name}
	if !p.accept('{') {
		return in, nil
	}
	for !p.accept('}') {
		keyPos := p.pos
		key, err := p.word("option name or '}'", isNameByte)
		if err != nil {
			return Instance{}, err
		}
		if _, dup := in.Options.Get(key); dup {
			p.pos = keyPos
			return Instance{}, p.errorf("pass %s: option %q given twice", name, key)
		}
		if err := p.expect('='); err != nil {
			return Instance{}, err
		}
		val, err := p.value()
		if err != nil {
			return Instance{}, err
		}
		in.Options = append(in.Options, Option{key, val})
	}
	sort.Slice(in.Options, func(i, j int) bool { return in.Options[i].Key < in.Options[j].Key })
	return in, nil
}

// value := bare | Go-quoted string
func (p *pipelineParser) value() (string, error) {
	p.skipSpace()
	if p.pos < len(p.src) && p.src[p.pos] == '"' {
		end := p.pos + 1
		for end < len(p.src) && p.src[end] != '"' {
			if p.src[end] == '\\' {
				end++
			}
			end++
		}
		if end >= len(p.src) {
			return "", p.errorf("unterminated string")
		}
		s, err := strconv.Unquote(p.src[p.pos : end+1])
		if err != nil {
			return "", p.errorf("bad string: %v", err)
		}
		p.pos = end + 1
		return s, nil
	}
	return p.word("option value", isBareByte)
}
