package main

import (
	"bytes"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/weft-crawler/weft/internal/bytesize"
	"github.com/weft-crawler/weft/internal/crawl"
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

// --resolve takes an internationalised name and gives the crawl its
// punycode form, which is what URLs' hosts are matched in; a name that
// cannot be converted is refused, naming the entry.
func TestResolveFlagConvertsInternationalNames(t *testing.T) {
	cfg, err := parseCrawlFlags(t, "--resolve", "Bücher.test=127.0.0.5", "--resolve", "a.test=127.0.0.6")
	if err != nil {
		t.Fatal(err)
	}
	if want := map[string]string{"xn--bcher-kva.test": "127.0.0.5", "a.test": "127.0.0.6"}; !maps.Equal(cfg.Fetch.Resolve, want) {
		t.Errorf("Resolve %v, want %v", cfg.Fetch.Resolve, want)
	}
	for _, tc := range []struct {
		entries     []string
		bad, reason string
	}{
		{[]string{"xn--zz.test=127.0.0.5"}, "xn--zz.test=127.0.0.5", "not a valid internationalised host name"},
		{[]string{"a.test:8080=127.0.0.5"}, "a.test:8080=127.0.0.5", "port"},
		{[]string{"bücher.test=127.0.0.5", "BÜCHER.test=127.0.0.6"}, "BÜCHER.test=127.0.0.6", "xn--bcher-kva.test is given 127.0.0.5 already"},
	} {
		var args []string
		for _, e := range tc.entries {
			args = append(args, "--resolve", e)
		}
		if _, err := parseCrawlFlags(t, args...); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("--resolve %q", tc.bad)) || !strings.Contains(err.Error(), tc.reason) {
			t.Errorf("%v: error %v, want one naming %q and %q", args, err, tc.bad, tc.reason)
		}
	}
}

// --max-links-per-page reaches the crawl, 50,000 unless given.
func TestMaxLinksPerPageFlag(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want int
	}{
		{nil, 50000},
		{[]string{"--max-links-per-page", "200000"}, 200000},
	} {
		cfg, err := parseCrawlFlags(t, tc.args...)
		if err != nil || cfg.MaxLinksPerPage != tc.want {
			t.Errorf("%v: MaxLinksPerPage %d (err %v), want %d", tc.args, cfg.MaxLinksPerPage, err, tc.want)
		}
	}
	if _, err := parseCrawlFlags(t, "--max-links-per-page", "0"); err == nil || !strings.Contains(err.Error(), "--max-links-per-page 0") {
		t.Errorf("--max-links-per-page 0: error %v, want one naming the flag and value", err)
	}
}

// --failure-wait reaches the crawl; 0 waits for every clock, which the
// crawl's Config spells as a negative duration (its zero is the default);
// a negative value is refused, naming the flag.
func TestFailureWaitFlag(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want time.Duration
	}{
		{nil, crawl.DefaultFailureWait},
		{[]string{"--failure-wait", "5m"}, 5 * time.Minute},
		{[]string{"--failure-wait", "0"}, -1},
	} {
		cfg, err := parseCrawlFlags(t, tc.args...)
		if err != nil {
			t.Fatalf("%v: %v", tc.args, err)
		}
		if cfg.FailureWait != tc.want {
			t.Errorf("%v: FailureWait %v, want %v", tc.args, cfg.FailureWait, tc.want)
		}
	}
	if _, err := parseCrawlFlags(t, "--failure-wait", "-1s"); err == nil || !strings.Contains(err.Error(), "--failure-wait") {
		t.Errorf("--failure-wait -1s: error %v, want one naming the flag", err)
	}
}

// sizeFlags are the flags that take a size, by command: every one takes
// the one syntax of package bytesize.
var sizeFlags = map[string][]string{
	"weft crawl":        {"handler-memory", "max-body", "memory-limit", "render-memory", "warc-max-size"},
	"weft serve":        {"handler-memory", "inlink-memory", "max-body", "memory-limit", "render-memory", "warc-max-size"},
	"weft bench render": {"memory"},
}

// Every size flag takes a size with any unit, 10MiB and 10MB alike, on
// the command line and in a profile, and refuses an ambiguous one naming
// the flag and the value; a flag whose name says it holds bytes is a
// size flag.
func TestEverySizeFlagTakesOneSyntax(t *testing.T) {
	found := map[string][]string{}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		c.LocalNonPersistentFlags().VisitAll(func(fl *pflag.Flag) {
			if fl.Value.Type() == bytesize.Type {
				found[c.CommandPath()] = append(found[c.CommandPath()], fl.Name)
			} else if regexp.MustCompile(`memory|max-size|bytes|mib|body$`).MatchString(fl.Name) && fl.Deprecated == "" {
				t.Errorf("%s --%s is of type %s: a flag of bytes takes a size", c.CommandPath(), fl.Name, fl.Value.Type())
			}
		})
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(newRootCmd())
	if !maps.EqualFunc(found, sizeFlags, slices.Equal) {
		t.Errorf("size flags %v, want %v", found, sizeFlags)
	}
	for path, names := range sizeFlags {
		for _, name := range names {
			for value, want := range map[string]string{"10MiB": "10MiB", "10 mib": "10MiB", "10MB": "10MB", "10485760": "10MiB"} {
				c, _, err := newRootCmd().Find(strings.Fields(path)[1:])
				if err != nil {
					t.Fatal(err)
				}
				if err := c.ParseFlags([]string{"--" + name, value}); err != nil {
					t.Errorf("%s --%s %s: %v", path, name, value, err)
				} else if got := c.Flags().Lookup(name).Value.String(); got != want {
					t.Errorf("%s --%s %s: %s, want %s", path, name, value, got, want)
				}
			}
			c, _, _ := newRootCmd().Find(strings.Fields(path)[1:])
			if err := c.ParseFlags([]string{"--" + name, "10M"}); err == nil || !strings.Contains(err.Error(), `"--`+name+`"`) || !strings.Contains(err.Error(), `"10M"`) {
				t.Errorf("%s --%s 10M: %v, want an error naming the flag and the value", path, name, err)
			}
			if path == "weft bench render" {
				continue // no profile
			}
			// 20MiB: 10MiB is --max-body's default, which a printed
			// profile comments out.
			code, out, errOut := runWeft(t, "config", "print", strings.Fields(path)[1], "--config", writeFile(t, "p.toml", name+" = \"20MiB\"\n"))
			if code != 0 || !strings.Contains(out, "\n"+name+" = \"20MiB\"\n") {
				t.Errorf("%s: a profile's %s = \"20MiB\": exit %d, %s\n%s", path, name, code, errOut, out)
			}
		}
	}
	// And the crawl gets them.
	cfg, err := parseCrawlFlags(t, "--max-body", "10MiB", "--warc-max-size", "10MiB", "--render-memory", "10MiB", "--max-body-for", "application/pdf=10MiB")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Fetch.MaxBodyBytes != 10<<20 || cfg.WARCMaxFileSize != 10<<20 || cfg.Render.MemoryMB != 10 {
		t.Errorf("max body %d, WARC size %d, render memory %d MiB; want 10MiB each", cfg.Fetch.MaxBodyBytes, cfg.WARCMaxFileSize, cfg.Render.MemoryMB)
	}
	if n, ok := cfg.Media.BodyLimit("application/pdf"); !ok || n != 10<<20 {
		t.Errorf("--max-body-for application/pdf=10MiB: cap %d", n)
	}
}

// --inlink-mib, which --inlink-memory replaced, still sets it in MiB for
// a release; a printed profile says it as --inlink-memory.
func TestInlinkMiBSetsInlinkMemory(t *testing.T) {
	code, out, errOut := runWeft(t, "config", "print", "serve", "--inlink-mib", "64")
	if code != 0 || !strings.Contains(out, "\ninlink-memory = \"64MiB\"\n") || strings.Contains(out, "inlink-mib") {
		t.Errorf("exit %d, %s\n%s", code, errOut, out)
	}
}

// --sitemap takes a sitemap's URL or a file of them; a seed of the
// sitemaps alone is enough, and a bad line is named by file and line.
func TestSitemapFlag(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "sitemaps.txt")
	os.WriteFile(good, []byte("\ufeff# the site's indexes\nhttps://b.test/sitemap_index.xml\n\n  https://c.test/news.xml  # news\n"), 0o644)
	bad := filepath.Join(dir, "bad.txt")
	os.WriteFile(bad, []byte("https://b.test/sitemap.xml\n/relative.xml\n"), 0o644)
	var f crawlFlags
	fs := pflag.NewFlagSet("crawl", pflag.ContinueOnError)
	f.register(fs)
	if err := fs.Parse([]string{"--sitemap", "https://a.test/sitemap.xml", "--sitemap", good, "--sitemap-only"}); err != nil {
		t.Fatal(err)
	}
	cfg, err := f.config(nil, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"https://a.test/sitemap.xml", "https://b.test/sitemap_index.xml", "https://c.test/news.xml"}; !slices.Equal(cfg.Sitemaps, want) || len(cfg.Seeds) != 0 || !cfg.SitemapOnly {
		t.Errorf("sitemaps %q, seeds %q, only %v; want %q, none, true", cfg.Sitemaps, cfg.Seeds, cfg.SitemapOnly, want)
	}
	for _, tc := range []struct{ value, want string }{
		{bad, bad + ":2"},
		{filepath.Join(dir, "none.txt"), "none.txt"},
		{"ftp://a.test/sitemap.xml", "--sitemap ftp://a.test/sitemap.xml"},
	} {
		var f crawlFlags
		fs := pflag.NewFlagSet("crawl", pflag.ContinueOnError)
		f.register(fs)
		if err := fs.Parse([]string{"--sitemap", tc.value}); err != nil {
			t.Fatal(err)
		}
		if _, err := f.config(nil, &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("--sitemap %s: %v; want an error naming %s", tc.value, err, tc.want)
		}
	}
}

// --crawl-log reaches the crawl as the file its crawl.log goes to.
func TestCrawlLogFlag(t *testing.T) {
	for args, want := range map[string]string{"": "", "--crawl-log=/tmp/x/crawl.log": "/tmp/x/crawl.log"} {
		cfg, err := parseCrawlFlags(t, strings.Fields(args)...)
		if err != nil || cfg.CrawlLog != want {
			t.Errorf("%q: CrawlLog %q, %v; want %q", args, cfg.CrawlLog, err, want)
		}
	}
}
