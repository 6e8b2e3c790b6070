package main

import (
	"bytes"
	"context"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fxport/fxport/internal/testenv"
)

// explorePage writes the explorer page of one export and returns it, with
// the number of IR dumps `export --print-after-change --dump-dir` writes
// for the same export (the diffs the page must show).
func explorePage(t *testing.T, program, target string) (page string, dumps int) {
	t.Helper()
	dir := t.TempDir()
	out := filepath.Join(dir, "page.html")
	_, errOut, code := fxport(t, "explore", program, "--target", target, "-o", out, "--no-time")
	require.Equal(t, 0, code, errOut)
	b, err := os.ReadFile(out)
	require.NoError(t, err)
	dumpDir := filepath.Join(dir, "dumps")
	_, errOut, code = fxport(t, "export", program, "--target", target, "-o", filepath.Join(dir, "x.fxir"), "--print-after-change", "--dump-dir", dumpDir)
	require.Equal(t, 0, code, errOut)
	entries, err := os.ReadDir(dumpDir)
	require.NoError(t, err)
	return string(b), len(entries)
}

// The page has one diff per pass that changed the IR, links every firing
// on a node to that node's line and its catalog ID to the ID's row, loads
// nothing from outside, and is byte-identical for the same input.
func TestExplorePageContents(t *testing.T) {
	page, dumps := explorePage(t, example, "onnx")
	again, _ := explorePage(t, example, "onnx")
	require.Equal(t, page, again, "explore --no-time is deterministic")
	require.Positive(t, dumps)
	require.Equal(t, dumps, strings.Count(page, `<div class="diff"`))
	require.Equal(t, dumps, strings.Count(page, "IR after the pass (changed lines highlighted)"))
	// The example's where() over mixed dtypes fires ONNX-P01 on %where.
	require.Contains(t, page, `id="cat-ONNX-P01"`)
	ids := map[string]bool{}
	for _, m := range regexp.MustCompile(` id="([^"]+)"`).FindAllStringSubmatch(page, -1) {
		require.False(t, ids[m[1]], "duplicate id %q", m[1])
		ids[m[1]] = true
	}
	links := regexp.MustCompile(` href="#([^"]+)"`).FindAllStringSubmatch(page, -1)
	require.NotEmpty(t, links)
	nodeLinks := 0
	for _, m := range links {
		require.True(t, ids[m[1]], "link to #%s, which the page lacks", m[1])
		if strings.HasPrefix(m[1], "p") {
			nodeLinks++
		}
	}
	require.Positive(t, nodeLinks, "firings link to their nodes")
	require.Regexp(t, `href="#cat-ONNX-P01">ONNX-P01</a> <code>where-promote</code> \(patch\) on <a href="#p\d+-forward-where">`, page)
	// Self-contained: no script, style or image from anywhere else.
	require.NotRegexp(t, `(src|href)="(https?:)?//`, page)
	require.NotContains(t, page, "<link")
	require.Contains(t, page, "<b>onnx</b>")
	require.Contains(t, page, `<tr><th>nodes</th>`)
}

// A .pte's page draws each planned buffer with one rectangle per planned
// tensor: as many as `fxport inspect` lists in its memory plan.
func TestExplorePageMemoryPlan(t *testing.T) {
	dir := t.TempDir()
	page, art := filepath.Join(dir, "page.html"), filepath.Join(dir, "m.pte")
	_, errOut, code := fxport(t, "explore", example, "--target", "executorch-portable", "-o", page, "--artifact", art, "--no-time")
	require.Equal(t, 0, code, errOut)
	b, err := os.ReadFile(page)
	require.NoError(t, err)
	inspect, errOut, code := fxport(t, "inspect", art)
	require.Equal(t, 0, code, errOut)
	planned := regexp.MustCompile(`(?m)^    buffer \d+ \[`).FindAllString(inspect, -1)
	require.NotEmpty(t, planned)
	svg := regexp.MustCompile(`(?s)<svg .*?</svg>`).FindAllString(string(b), -1)
	require.NotEmpty(t, svg)
	rects := 0
	for _, s := range svg {
		rects += strings.Count(s, "<rect") - 1 // the plot's background
	}
	require.Equal(t, len(planned), rects)
	require.Contains(t, string(b), "<h3>Operators</h3>")
}

// The explorer page of a corpus program renders in headless Chromium
// (Debian's chromium; `make chromium` installs it): its script runs without
// a console message, the DOM it leaves holds one diff per pass that changed
// the IR, and the screenshot has the window's size and is not blank. A page
// with a script error, rendered beside it, shows that console errors are
// caught.
func TestExplorePageInChromium(t *testing.T) {
	browser, err := exec.LookPath("chromium")
	if err != nil {
		testenv.Missing(t, "chromium (the headless browser of the explorer page test)", "make chromium")
	}
	program := filepath.Join(testenv.Root(t), "tests/corpus/resnet18/program.pt2")
	if _, err := os.Stat(program); err != nil {
		testenv.Missing(t, "tests/corpus", "make fixtures")
	}
	page, dumps := explorePage(t, program, "executorch-xnnpack")
	require.Positive(t, dumps)
	dir := t.TempDir()
	good, bad := filepath.Join(dir, "page.html"), filepath.Join(dir, "bad.html")
	require.NoError(t, os.WriteFile(good, []byte(page), 0o644))
	require.NoError(t, os.WriteFile(bad, []byte(`<!DOCTYPE html><html><body><p>x</p><script>notDefined();</script></body></html>`), 0o644))

	type result struct {
		dom, log string
		err      error
	}
	render := func(html, shot string) result {
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second) // a loaded machine; it takes 3-7 s
		defer cancel()
		cmd := exec.CommandContext(ctx, browser, "--headless", "--disable-gpu", "--no-sandbox", "--no-first-run",
			"--user-data-dir="+filepath.Join(dir, "profile-"+filepath.Base(html)),
			"--enable-logging=stderr", "--v=0", "--window-size=1200,900", "--screenshot="+shot, "--dump-dom", "file://"+html)
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		return result{out.String(), errb.String(), err}
	}
	var wg sync.WaitGroup
	var rg, rb result
	shot := filepath.Join(dir, "page.png")
	wg.Add(2)
	go func() { defer wg.Done(); rg = render(good, shot) }()
	go func() { defer wg.Done(); rb = render(bad, filepath.Join(dir, "bad.png")) }()
	wg.Wait()
	require.NoError(t, rg.err, rg.log)
	require.NoError(t, rb.err, rb.log)
	console := regexp.MustCompile(`(?m)^.*:CONSOLE[:(].*$`)
	require.Regexp(t, `notDefined is not defined`, strings.Join(console.FindAllString(rb.log, -1), "\n"), "the console check catches a script error")
	require.Empty(t, console.FindAllString(rg.log, -1), "console messages of the explorer page")

	body := regexp.MustCompile(`<body[^>]*>`).FindString(rg.dom)
	require.Contains(t, body, `data-js="ok"`, "the page's script ran to its end")
	require.Contains(t, body, `data-diffs="`+strconv.Itoa(dumps)+`"`)
	require.Equal(t, dumps, strings.Count(rg.dom, `<div class="diff"`))
	for _, d := range regexp.MustCompile(`(?s)<div class="diff".*?</div>`).FindAllString(rg.dom, -1) {
		require.Regexp(t, `<span class="(add|del)">`, d, "every diff shows a change")
	}
	require.Contains(t, rg.dom, "<svg", "the memory plan is drawn")

	f, err := os.Open(shot)
	require.NoError(t, err)
	defer f.Close()
	img, err := png.Decode(f)
	require.NoError(t, err)
	bnd := img.Bounds()
	require.Equal(t, 1200, bnd.Dx())
	require.Equal(t, 900, bnd.Dy())
	colors := map[uint32]bool{}
	dark := 0
	for y := bnd.Min.Y; y < bnd.Max.Y; y += 2 {
		for x := bnd.Min.X; x < bnd.Max.X; x += 2 {
			r, g, b, _ := img.At(x, y).RGBA()
			colors[r>>12<<8|g>>12<<4|b>>12] = true
			if r+g+b < 3*0x8000 {
				dark++
			}
		}
	}
	require.Greater(t, len(colors), 16, "the screenshot is not blank")
	require.Greater(t, dark, 2000, "the screenshot shows text")
}

// A failing export still gets its page: the passes up to the failing one
// and the error, and the command exits 1 saying so.
func TestExplorePageOfAFailedExport(t *testing.T) {
	dir := t.TempDir()
	src, err := os.ReadFile(example)
	require.NoError(t, err)
	crashing := filepath.Join(dir, "crash.fxir")
	require.NoError(t, os.WriteFile(crashing, append([]byte("meta \"test.crash\" = \"yes\"\n"), src...), 0o644))
	page := filepath.Join(dir, "page.html")
	stdout, errOut, code := fxport(t, "explore", crashing, "--target", "onnx", "-o", page, "--no-time",
		"--pipeline", "onnx: onnx.fx-node-fixes(onnx-node-fixes, test-crash)")
	require.Equal(t, 1, code, errOut)
	require.Contains(t, stdout, "wrote "+page)
	require.Contains(t, errOut, "the export failed (the page shows the passes up to the failure)")
	b, err := os.ReadFile(page)
	require.NoError(t, err)
	require.Contains(t, string(b), `<p class="err">export failed: `)
	require.Contains(t, string(b), "deliberate crash")
	require.Contains(t, string(b), "<td>test-crash</td>")
}
