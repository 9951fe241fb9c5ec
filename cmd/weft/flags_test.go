package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"weft/internal/crawl"
)

// parseCrawlFlags turns command-line flags into the crawl's Config, as
// weft crawl does.
func parseCrawlFlags(t *testing.T, args ...string) (crawl.Config, error) {
	t.Helper()
	var f crawlFlags
	fs := pflag.NewFlagSet("crawl", pflag.ContinueOnError)
	f.register(fs)
	if err := fs.Parse(args); err != nil {
		return crawl.Config{}, err
	}
	return f.config([]string{"http://a.test/"}, &bytes.Buffer{})
}

// --max-redirects reaches the crawl's cap; 0 follows none, which the
// crawl's Config spells as a negative number (its zero is the default).
func TestMaxRedirectsFlag(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want int
	}{
		{nil, 5},
		{[]string{"--max-redirects", "3"}, 3},
		{[]string{"--max-redirects", "0"}, -1},
	} {
		cfg, err := parseCrawlFlags(t, tc.args...)
		if err != nil {
			t.Fatalf("%v: %v", tc.args, err)
		}
		if cfg.MaxRedirects != tc.want {
			t.Errorf("%v: MaxRedirects %d, want %d", tc.args, cfg.MaxRedirects, tc.want)
		}
		if err := cfg.Validate(); err != nil {
			t.Errorf("%v: %v", tc.args, err)
		}
	}
	if _, err := parseCrawlFlags(t, "--max-redirects", "-1"); err == nil || !strings.Contains(err.Error(), "--max-redirects -1") {
		t.Errorf("--max-redirects -1: error %v, want one naming the flag and value", err)
	}
}
