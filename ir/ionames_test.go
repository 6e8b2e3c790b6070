package ir

import "testing"

func TestJSONStringsKeepsNamesVerbatim(t *testing.T) {
	if got := jsonStrings([]string{"a<b", `q"`, "é"}); got != `["a<b","q\"","é"]` {
		t.Errorf("got %s", got)
	}
	if got := jsonStrings(nil); got != "[]" {
		t.Errorf("nil: %s", got)
	}
}
