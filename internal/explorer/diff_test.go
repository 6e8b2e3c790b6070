package explorer

import (
	"math/rand"
	"strings"
	"testing"
)

// sides rebuilds the old and new texts from a diff.
func sides(d []Line) (a, b []string) {
	for _, l := range d {
		if l.Op != Add {
			a = append(a, l.Text)
		}
		if l.Op != Del {
			b = append(b, l.Text)
		}
	}
	return a, b
}

func lcs(a, b []string) int {
	dp := make([][]int, len(a)+1)
	for i := range dp {
		dp[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			switch {
			case a[i] == b[j]:
				dp[i][j] = dp[i+1][j+1] + 1
			case dp[i+1][j] > dp[i][j+1]:
				dp[i][j] = dp[i+1][j]
			default:
				dp[i][j] = dp[i][j+1]
			}
		}
	}
	return dp[0][0]
}

// Diff reproduces both texts and is shortest: its unchanged lines are a
// longest common subsequence (checked against dynamic programming).
func TestDiffIsShortestAndExact(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	words := []string{"a", "b", "c", "d"}
	gen := func() []string {
		n := rng.Intn(12)
		out := make([]string, n)
		for i := range out {
			out[i] = words[rng.Intn(len(words))]
		}
		return out
	}
	for i := 0; i < 3000; i++ {
		a, b := gen(), gen()
		d := Diff(a, b)
		ga, gb := sides(d)
		if strings.Join(ga, ",") != strings.Join(a, ",") || strings.Join(gb, ",") != strings.Join(b, ",") {
			t.Fatalf("Diff(%q, %q) = %v rebuilds %q, %q", a, b, d, ga, gb)
		}
		same := 0
		for _, l := range d {
			if l.Op == Same {
				same++
			}
		}
		if want := lcs(a, b); same != want {
			t.Fatalf("Diff(%q, %q) keeps %d lines, the LCS has %d", a, b, same, want)
		}
	}
}

// Past maxEdits the middle is replaced whole: still exact, bounded.
func TestDiffBounded(t *testing.T) {
	var a, b []string
	for i := 0; i < 3*maxEdits; i++ {
		a = append(a, "x"+string(rune('a'+i%26)))
		b = append(b, "y"+string(rune('a'+i%26)))
	}
	a = append([]string{"head"}, a...)
	b = append([]string{"head"}, b...)
	d := Diff(a, b)
	ga, gb := sides(d)
	if len(ga) != len(a) || len(gb) != len(b) || d[0] != (Line{Same, "head"}) {
		t.Fatalf("bounded diff does not rebuild the texts")
	}
}

func TestHunks(t *testing.T) {
	a := strings.Split("1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20", " ")
	b := append([]string(nil), a...)
	b[1] = "two"                                              // line 2
	b = append(b[:10], append([]string{"new"}, b[10:]...)...) // after line 10
	b[19] = "nineteen"                                        // old line 19
	hs := Hunks(Diff(a, b), 2)
	if len(hs) != 3 {
		t.Fatalf("want 3 hunks, got %d: %+v", len(hs), hs)
	}
	if hs[0].A != 1 || hs[0].B != 1 || len(hs[0].Lines) != 1+2+2 {
		t.Errorf("hunk 0 = %+v", hs[0])
	}
	if hs[1].A != 9 || hs[1].B != 9 || len(hs[1].Lines) != 5 || hs[1].Lines[2] != (Line{Add, "new"}) {
		t.Errorf("hunk 1 = %+v", hs[1])
	}
	if hs[2].A != 17 || hs[2].B != 18 || hs[2].Lines[2] != (Line{Del, "19"}) || hs[2].Lines[3] != (Line{Add, "nineteen"}) {
		t.Errorf("hunk 2 = %+v", hs[2])
	}
	// Close changes share one hunk.
	c := append([]string(nil), a...)
	c[3], c[6] = "x", "y"
	if hs := Hunks(Diff(a, c), 2); len(hs) != 1 || hs[0].A != 2 {
		t.Errorf("close changes: %+v", hs)
	}
}
