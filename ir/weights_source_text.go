package ir

// ParseWeightSource reads one weight source in its IR text spelling, such as
// inline("0000803f") or file("w.bin", offset=0, size=64), through the
// registered source parsers. Sources that wrap another source (a pass that
// changes a weight's layout lazily) use it to read their inner spelling.
func ParseWeightSource(text string) (WeightSource, error) {
	ps := &parser{src: text, file: "weight source", line: 1, col: 1}
	src, err := ps.weightSource()
	if err != nil {
		return nil, err
	}
	ps.skipSpace()
	if !ps.eof() {
		return nil, ps.errorf("unexpected %q after weight source", ps.rest(10))
	}
	return src, nil
}
