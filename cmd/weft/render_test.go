package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/weft-crawler/weft/internal/browsertest"
	"github.com/weft-crawler/weft/internal/synthweb"
)

// A crawl of plain pages with --render auto (the default) and Chromium at
// hand renders nothing, starts no browser, and its summary says nothing
// of rendering: a "render:" line of zeros would suggest it did.
func TestCrawlOfPlainPagesSaysNothingOfRendering(t *testing.T) {
	bin := browsertest.Chromium(t)
	web, err := synthweb.Start(synthweb.Config{Seed: 4, Hosts: 2, PagesPerHost: 12, IPAuthorities: true})
	if err != nil {
		t.Fatal(err)
	}
	defer web.Close()
	args := append([]string{"crawl", "--data", filepath.Join(t.TempDir(), "data"), "--delay", "2ms", "--allow-cidr", "127.0.0.0/8",
		"--progress", "never", "--sitemaps=false", "--render-chromium", bin}, web.Seeds()...)
	code, stdout, stderr := runWeft(t, args...)
	if code != 0 {
		t.Fatalf("crawl: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if !strings.Contains(stdout, "pages") {
		t.Fatalf("no summary:\n%s", stdout)
	}
	if out := stdout + stderr; strings.Contains(out, "render:") {
		t.Errorf("the summary speaks of rendering, though nothing was rendered:\n%s", out)
	}
}
