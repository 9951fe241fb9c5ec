package scope

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/weft-crawler/weft/internal/canon"
)

var canonicalizer = canon.New(canon.Config{})

func mustURL(tb testing.TB, raw string) canon.URL {
	tb.Helper()
	u, err := canonicalizer.Parse(raw)
	if err != nil {
		tb.Fatalf("%v", err)
	}
	return u
}

func mustFilter(tb testing.TB, cfg Config, seeds ...string) *Filter {
	tb.Helper()
	f, err := New(cfg)
	if err != nil {
		tb.Fatalf("New(%+v): %v", cfg, err)
	}
	for _, s := range seeds {
		f.AddSeed(mustURL(tb, s))
	}
	return f
}

type checkCase struct {
	url   string
	depth int
	want  Reason
}

func runCases(t *testing.T, f *Filter, cases []checkCase) {
	t.Helper()
	for _, tc := range cases {
		u := mustURL(t, tc.url)
		if got := f.Check(u, tc.depth); got != tc.want {
			t.Errorf("Check(%q, %d) = %q, want %q", u.String, tc.depth, got, tc.want)
		}
	}
}

func TestDomainMode(t *testing.T) {
	f := mustFilter(t, Config{}, // zero Mode is Domain
		"http://www.example.com/",
		"https://a.b.co.uk/x",
		"http://192.168.1.10:8080/",
		"http://[::1]/",
		"http://site.test:8001/",
		"http://github.io/",        // a public suffix itself: exact host only
		"http://localhost:9000/",   // no registrable domain: exact host only
		"http://www.amazonaws.com", // s3.amazonaws.com below it is a public suffix
	)
	runCases(t, f, []checkCase{
		{"http://www.example.com/", 0, ""},
		{"http://example.com/", 1, ""},
		{"https://www.example.com:8443/a", 1, ""},
		{"http://deep.sub.example.com/x", 1, ""},
		{"http://WWW.Example.COM./", 1, ""},
		{"http://example.org/", 1, ReasonScope},
		{"http://notexample.com/", 1, ReasonScope},
		{"http://example.com.evil.org/", 1, ReasonScope},

		{"https://a.b.co.uk/", 0, ""},
		{"http://b.co.uk/", 1, ""},
		{"http://x.y.b.co.uk/", 1, ""},
		{"http://c.co.uk/", 1, ReasonScope},
		{"http://co.uk/", 1, ReasonScope},

		{"http://192.168.1.10/", 1, ""},
		{"http://192.168.1.10:9999/", 1, ""},
		{"http://192.168.1.11:8080/", 1, ReasonScope},
		{"http://192.168.1.1/", 1, ReasonScope},
		{"http://[::1]:8080/", 1, ""},
		{"http://[0:0::1]/", 1, ""},
		{"http://[::2]/", 1, ReasonScope},

		{"http://site.test:8002/", 1, ""},
		{"http://www.site.test/", 1, ""},
		{"http://other.test/", 1, ReasonScope},
		{"http://test/", 1, ReasonScope},

		{"http://github.io/", 1, ""},
		{"http://someone.github.io/", 1, ReasonScope},
		{"http://localhost/", 1, ""},
		{"http://a.localhost/", 1, ReasonScope},

		{"http://amazonaws.com/", 1, ""},
		{"http://b.amazonaws.com/", 1, ""},
		{"http://bucket.s3.amazonaws.com/", 1, ReasonScope},
		{"http://bucket.s3.amazonaws.com/", 1, ReasonScope}, // cached now

		{"ftp://www.example.com/", 1, ReasonFilter},
		{"mailto:a@example.com", 1, ReasonFilter},
	})
}

func TestDomainModeNoSeeds(t *testing.T) {
	f := mustFilter(t, Config{})
	runCases(t, f, []checkCase{{"http://example.com/", 0, ReasonScope}})
}

func TestHostMode(t *testing.T) {
	f := mustFilter(t, Config{Mode: Host}, "http://www.example.com/", "http://site.test:8001/a")
	runCases(t, f, []checkCase{
		{"http://www.example.com/x", 1, ""},
		{"https://www.example.com:8443/x", 1, ""},
		{"http://example.com/", 1, ReasonScope},
		{"http://a.www.example.com/", 1, ReasonScope},
		{"http://site.test/", 1, ""},
		{"http://site.test:8002/b", 1, ""},
		{"http://other.test:8001/", 1, ReasonScope},
	})
}

func TestPrefixMode(t *testing.T) {
	f := mustFilter(t, Config{Mode: Prefix},
		"http://example.com/docs/guide/intro.html",
		"https://example.com/blog/",
		"http://example.com:8080/a",
		"http://example.com/docs/guide/other.html", // same prefix again
	)
	runCases(t, f, []checkCase{
		{"http://example.com/docs/guide/intro.html", 0, ""},
		{"http://example.com/docs/guide/", 1, ""},
		{"http://example.com/docs/guide/ch1/x?y=1", 1, ""},
		{"http://example.com/docs/guide", 1, ReasonScope},
		{"http://example.com/docs/", 1, ReasonScope},
		{"https://example.com/docs/guide/x", 1, ReasonScope},
		{"https://example.com/blog/post", 1, ""},
		{"https://example.com/blog", 1, ReasonScope},
		{"http://example.com/blog/post", 1, ReasonScope},
		{"http://example.com:8080/anything", 1, ""},
		{"http://example.com:8081/a", 1, ReasonScope},
		{"http://www.example.com/docs/guide/x", 1, ReasonScope},
	})
	if n := len(f.prefixes["http://example.com"]); n != 1 {
		t.Errorf("a repeated prefix is stored %d times", n)
	}
}

func TestAnyMode(t *testing.T) {
	f := mustFilter(t, Config{Mode: Any})
	runCases(t, f, []checkCase{
		{"http://anything.example/", 5, ""},
		{"https://[::1]:8443/x", 5, ""},
		{"ftp://anything.example/", 5, ReasonFilter},
		{"javascript:void(0)", 5, ReasonFilter},
	})
}

func TestIncludeExclude(t *testing.T) {
	f := mustFilter(t, Config{
		Mode:    Any,
		Include: []string{`^https?://[^/]+/docs/`, `/blog/`},
		Exclude: []string{`/docs/private/`, `[?&]print=1`},
	})
	runCases(t, f, []checkCase{
		{"http://example.com/docs/x", 1, ""},
		{"http://example.com/a/blog/y", 1, ""},
		{"http://example.com/other", 1, ReasonScope},
		{"http://example.com/other?next=/docs/", 1, ReasonScope}, // anchored include
		{"http://example.com/docs/private/z", 1, ReasonScope},    // exclude beats include
		{"http://example.com/blog/a?print=1", 1, ReasonScope},
	})

	excludeOnly := mustFilter(t, Config{Exclude: []string{`/calendar/`}}, "http://example.com/calendar/")
	runCases(t, excludeOnly, []checkCase{
		{"http://example.com/x", 1, ""},
		{"http://example.com/calendar/", 0, ReasonScope}, // even a seed
		{"http://example.com/calendar/2024", 1, ReasonScope},
	})

	// Include narrows the seeds' scope; it does not widen it.
	includeOnly := mustFilter(t, Config{Include: []string{`example`}}, "http://example.com/")
	runCases(t, includeOnly, []checkCase{
		{"http://www.example.com/", 1, ""},
		{"http://example.org/", 1, ReasonScope},
		{"http://www.example.com/", 1, ""},
	})
}

func TestExtensions(t *testing.T) {
	f := mustFilter(t, Config{Mode: Any})
	runCases(t, f, []checkCase{
		{"http://example.com/a.pdf", 1, ""}, // a document: crawled
		{"http://example.com/a.mP4", 1, ReasonFilter},
		{"http://example.com/dir/file.JpG?size=large", 1, ReasonFilter},
		{"http://example.com/a.m%504", 1, ReasonFilter}, // canon decodes to a.mP4
		{"http://example.com/a.mp4;v=1", 1, ReasonFilter},
		{"http://example.com/archive.tar.gz", 1, ReasonFilter},
		{"http://example.com/setup.exe#top", 1, ReasonFilter},
		{"http://example.com/x.jpg/", 1, ""},
		{"http://example.com/x.jpg/page", 1, ""},
		{"http://example.com/a.html", 1, ""},
		{"http://example.com/a.pdf.html", 1, ""},
		{"http://example.com/noext", 1, ""},
		{"http://example.com/trailing.", 1, ""},
		{"http://example.com/view?file=a.pdf", 1, ""},
		{"http://example.com/a.thisextensionislongerthan16", 1, ""},
		{"http://example.com/", 1, ""},
	})

	custom := mustFilter(t, Config{Mode: Any, DenyExtensions: []string{".HTML", "php"}})
	runCases(t, custom, []checkCase{
		{"http://example.com/a.html", 1, ReasonFilter},
		{"http://example.com/a.Php?x=1", 1, ReasonFilter},
		{"http://example.com/a.pdf", 1, ""},
	})
	none := mustFilter(t, Config{Mode: Any, DenyExtensions: []string{}})
	runCases(t, none, []checkCase{{"http://example.com/a.pdf", 1, ""}})
}

// An Include expression that matches a URL lets it in whatever its
// extension; one that does not leaves the extension rule as it is.
func TestIncludeOverridesExtension(t *testing.T) {
	f := mustFilter(t, Config{Mode: Any, Include: []string{`\.mp4$`, `^http://a\.test/`}})
	for u, want := range map[string]Reason{
		"http://b.test/film.mp4": "",           // matched: fetched
		"http://a.test/x.zip":    "",           // matched by the host's expression
		"http://b.test/x.zip":    ReasonFilter, // matched by none: the extension rule
		"http://b.test/page":     ReasonScope,  // matched by none: out
	} {
		if got := f.Check(mustURL(t, u), 1); got != want {
			t.Errorf("%s: %q, want %q", u, got, want)
		}
	}
}

func TestDefaultDenyExtensions(t *testing.T) {
	exts := DefaultDenyExtensions()
	seen := map[string]bool{}
	for _, e := range exts {
		if e != normalizeExt(e) || e == "" || len(e) > maxExt {
			t.Errorf("extension %q: want lower case, without dot, at most %d bytes", e, maxExt)
		}
		if seen[e] {
			t.Errorf("extension %q listed twice", e)
		}
		seen[e] = true
	}
	for _, e := range []string{"jpg", "png", "mp3", "mp4", "zip", "gz", "woff2", "exe"} {
		if !seen[e] {
			t.Errorf("%q missing from the defaults", e)
		}
	}
	if seen["pdf"] {
		t.Error("PDFs are denied by default: they are documents, to archive")
	}
	exts[0] = "changed"
	if DefaultDenyExtensions()[0] == "changed" {
		t.Error("DefaultDenyExtensions returns shared state")
	}
}

func TestLimits(t *testing.T) {
	short := mustFilter(t, Config{Mode: Any, MaxURLLength: 30, MaxQueryParams: 2})
	runCases(t, short, []checkCase{
		{"http://example.com/aaaaaaaaaaa", 1, ""},            // 30 bytes
		{"http://example.com/aaaaaaaaaaaa", 1, ReasonFilter}, // 31 bytes
		{"http://e.com/?a=1&b=2", 1, ""},                     // 2 parameters
		{"http://e.com/?a=1&b=2&c=3", 1, ReasonFilter},       // 3
		{"http://e.com/?a=1&b=2&utm_source=x", 1, ""},        // stripped ones do not count
		{"http://e.com/?a=1&a=1", 1, ""},                     // duplicates count
	})

	long := "http://example.com/" + strings.Repeat("a", DefaultMaxURLLength-len("http://example.com/"))
	var params []string
	for i := range DefaultMaxQueryParams {
		params = append(params, fmt.Sprintf("p%d=1", i))
	}
	many := "http://example.com/?" + strings.Join(params, "&")
	defaults := mustFilter(t, Config{Mode: Any})
	runCases(t, defaults, []checkCase{
		{long, 1, ""},
		{long + "a", 1, ReasonFilter},
		{many, 1, ""},
		{many + "&x=1", 1, ReasonFilter},
	})

	unlimited := mustFilter(t, Config{Mode: Any, MaxURLLength: -1, MaxQueryParams: -1})
	runCases(t, unlimited, []checkCase{
		{long + strings.Repeat("a", 3000), 1, ""},
		{many + "&x=1&y=2", 1, ""},
	})
}

func TestDepth(t *testing.T) {
	f := mustFilter(t, Config{MaxDepth: 2}, "http://example.com/")
	runCases(t, f, []checkCase{
		{"http://example.com/", 0, ""},
		{"http://example.com/a", 2, ""},
		{"http://example.com/a", 3, ReasonDepth},
		{"http://example.com/a.zip", 3, ReasonFilter}, // filter comes first
		{"http://example.org/", 3, ReasonDepth},       // depth before scope
	})
	// Zero is the default, as every other limit's zero is; negative is
	// no limit.
	byDefault := mustFilter(t, Config{}, "http://example.com/")
	runCases(t, byDefault, []checkCase{
		{"http://example.com/a", DefaultMaxDepth, ""},
		{"http://example.com/a", DefaultMaxDepth + 1, ReasonDepth},
	})
	unlimited := mustFilter(t, Config{MaxDepth: -1}, "http://example.com/")
	runCases(t, unlimited, []checkCase{{"http://example.com/a", 1000, ""}})
}

func TestParseMode(t *testing.T) {
	for in, want := range map[string]Mode{
		"domain": Domain, "host": Host, "prefix": Prefix, "any": Any, "HOST": Host, " prefix ": Prefix,
	} {
		if got, err := ParseMode(in); err != nil || got != want {
			t.Errorf("ParseMode(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"", "domains", "url"} {
		_, err := ParseMode(in)
		if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("%q", in)) {
			t.Errorf("ParseMode(%q): error %v, want one naming the input", in, err)
		}
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		cfg  Config
		want []string // substrings of the error; nil means valid
	}{
		{Config{}, nil},
		{Config{Mode: Prefix, Include: []string{`^https://`}, Exclude: []string{`\.php$`}, MaxDepth: 3}, nil},
		{Config{Mode: "bogus"}, []string{"Mode", `"bogus"`}},
		{Config{Include: []string{"ok", "("}}, []string{"include[1]", `"("`, "missing closing )"}},
		{Config{Exclude: []string{"[a-"}}, []string{"exclude[0]", `"[a-"`}},
		{Config{DenyExtensions: []string{"pdf", " . "}}, []string{"DenyExtensions[1]"}},
		{Config{MaxDepth: -1}, nil},
	}
	for _, tc := range tests {
		err := tc.cfg.Validate()
		if tc.want == nil {
			if err != nil {
				t.Errorf("Validate(%+v): %v", tc.cfg, err)
			}
			continue
		}
		if err == nil {
			t.Errorf("Validate(%+v) = nil, want an error", tc.cfg)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("Validate(%+v) = %q, want it to contain %q", tc.cfg, err, w)
			}
		}
		if !strings.HasPrefix(err.Error(), "scope: ") {
			t.Errorf("error %q lacks the package prefix", err)
		}
		if _, err2 := New(tc.cfg); err2 == nil || err2.Error() != err.Error() {
			t.Errorf("New(%+v) error %v, want %v", tc.cfg, err2, err)
		}
	}
}

func TestKeyCacheBounded(t *testing.T) {
	f := mustFilter(t, Config{}, "http://example.com/")
	for i := range maxKeyCache + 10 {
		u := canon.URL{String: "http://x", Scheme: "http", Host: fmt.Sprintf("h%d.example.com", i), Path: "/"}
		if r := f.Check(u, 1); r != "" {
			t.Fatalf("Check(%q) = %q", u.Host, r)
		}
	}
	if n := len(f.keys); n > maxKeyCache {
		t.Errorf("cache holds %d entries, want at most %d", n, maxKeyCache)
	}
}

func TestCheckAllocs(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("allocation counts")
	}
	tests := []struct {
		name string
		f    *Filter
		url  string
	}{
		{"domain sub-domain", mustFilter(t, Config{}, "http://www.example.co.uk/"), "http://news.example.co.uk/a/b.html?x=1"},
		{"domain exact", mustFilter(t, Config{}, "http://example.com/"), "http://example.com/a"},
		{"domain ip", mustFilter(t, Config{}, "http://127.0.0.1:8001/"), "http://127.0.0.1:8002/a"},
		{"domain reject", mustFilter(t, Config{}, "http://example.com/"), "http://example.org/a"},
		{"host", mustFilter(t, Config{Mode: Host}, "http://example.com/"), "http://example.com:8080/a"},
		{"prefix", mustFilter(t, Config{Mode: Prefix}, "http://example.com/docs/"), "http://example.com/docs/a/b"},
		{"regexps", mustFilter(t, Config{Include: []string{`/docs/`}, Exclude: []string{`\?print`}}, "http://example.com/"), "http://example.com/docs/a"},
		{"deep path", mustFilter(t, Config{}, "http://example.com/"), "http://example.com/a/b/c/a/b/c/a/b/d/e/f/g"},
	}
	for _, tc := range tests {
		u := mustURL(t, tc.url)
		tc.f.Check(u, 1) // warm the cache
		if n := testing.AllocsPerRun(100, func() { tc.f.Check(u, 1) }); n != 0 {
			t.Errorf("%s: Check allocates %.1f times", tc.name, n)
		}
	}
}

// TestConcurrentSeeds adds seeds while checking; run with -race.
func TestConcurrentSeeds(t *testing.T) {
	for _, mode := range []Mode{Domain, Host, Prefix} {
		f := mustFilter(t, Config{Mode: mode}, "http://seed0.example/")
		var wg sync.WaitGroup
		wg.Go(func() {
			for i := range 200 {
				f.AddSeed(mustURL(t, fmt.Sprintf("http://www.seed%d.example/dir/", i)))
			}
		})
		for range 2 {
			wg.Go(func() {
				for i := range 400 {
					f.Check(mustURL(t, fmt.Sprintf("http://www.seed%d.example/dir/x", i%250)), 1)
				}
			})
		}
		wg.Wait()
		if r := f.Check(mustURL(t, "http://www.seed199.example/dir/x"), 1); r != "" {
			t.Errorf("%s: seed added concurrently is not in scope: %q", mode, r)
		}
	}
}

func BenchmarkCheck(b *testing.B) {
	benches := []struct {
		name string
		cfg  Config
		seed string
		url  string
	}{
		{"domain/sub-domain", Config{}, "http://www.example.co.uk/", "http://news.example.co.uk/2024/05/story.html?id=7"},
		{"domain/exact", Config{}, "http://example.com/", "http://example.com/2024/05/story.html?id=7"},
		{"domain/external", Config{}, "http://example.com/", "http://cdn.other-site.net/2024/05/story.html?id=7"},
		{"host", Config{Mode: Host}, "http://example.com/", "http://example.com/2024/05/story.html?id=7"},
		{"prefix", Config{Mode: Prefix}, "http://example.com/2024/", "http://example.com/2024/05/story.html?id=7"},
		{"domain+regexps", Config{Include: []string{`/20\d\d/`}, Exclude: []string{`[?&]print=`, `/calendar/`}}, "http://example.com/", "http://example.com/2024/05/story.html?id=7"},
	}
	for _, bb := range benches {
		b.Run(bb.name, func(b *testing.B) {
			f := mustFilter(b, bb.cfg, bb.seed)
			u := mustURL(b, bb.url)
			b.ReportAllocs()
			for b.Loop() {
				f.Check(u, 3)
			}
		})
	}
	// What the key cache saves: the public suffix lookup Check would
	// otherwise make for every sub-domain URL.
	b.Run("registrable", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			registrable("news.example.co.uk")
		}
	})
}

// TestCheckEmbed: an image a page shows passes the extension rule that
// keeps the same URL out as a link, and no other rule.
func TestCheckEmbed(t *testing.T) {
	f := mustFilter(t, Config{Mode: Host, MaxDepth: 2, MaxURLLength: 60, Exclude: []string{`/private/`}}, "http://example.com/")
	for _, c := range []struct {
		url         string
		depth       int
		link, embed Reason
	}{
		{"http://example.com/img/a.jpg", 1, ReasonFilter, ""},
		{"http://example.com/page", 1, "", ""},
		{"http://other.test/img/a.jpg", 1, ReasonFilter, ReasonScope},
		{"http://example.com/img/a.png", 3, ReasonFilter, ReasonDepth},
		{"http://example.com/private/a.png", 1, ReasonFilter, ReasonScope},
		{"http://example.com/img/" + strings.Repeat("a", 40) + ".png", 1, ReasonFilter, ReasonFilter},
	} {
		u := mustURL(t, c.url)
		if got := f.Check(u, c.depth); got != c.link {
			t.Errorf("Check(%s) = %q, want %q", c.url, got, c.link)
		}
		if got := f.CheckEmbed(u, c.depth); got != c.embed {
			t.Errorf("CheckEmbed(%s) = %q, want %q", c.url, got, c.embed)
		}
	}
}

// TestCheckSeed: a URL offered as a seed is out of no one's scope, but the
// filters and the Exclude expressions still apply to it.
func TestCheckSeed(t *testing.T) {
	f := mustFilter(t, Config{Mode: Host, Exclude: []string{`/private/`}}, "http://a.test/")
	for raw, want := range map[string]Reason{
		"http://elsewhere.test/":          "",
		"http://elsewhere.test/private/x": ReasonScope,
		"http://elsewhere.test/a.jpg":     ReasonFilter,
		"ftp://elsewhere.test/":           ReasonFilter,
	} {
		if got := f.CheckSeed(mustURL(t, raw)); got != want {
			t.Errorf("CheckSeed(%s) = %q, want %q", raw, got, want)
		}
	}
	if got := f.Check(mustURL(t, "http://elsewhere.test/"), 1); got != ReasonScope {
		t.Errorf("CheckSeed widened the scope: Check says %q", got)
	}
}

func TestPathRepeats(t *testing.T) {
	for _, tc := range []struct {
		path string
		n    int
		want bool
	}{
		{"/", 3, false},
		{"/a/b/a/b/a/b/", 3, false},  // a and b three times each
		{"/a/b/a/b/a/b/a/", 3, true}, // a four times
		{"/a/b/c/a/b/c/a/b/c/a", 3, true},
		{"/a/b/a/b/c/a/b/", 3, false}, // a three times, interleaved
		{"/a/b/a/b/c/a/b/a/", 3, true},
		{"/2024/01/01/", 3, false},
		{"/tiles/3/3/3.png", 3, false},
		{"/x/3/3/3/3", 3, true},
		{"/////", 3, true}, // five empty segments
		{"/a//b//c//", 3, true},
		{"/a/b/a/", 1, true},
		{"/a/b/c/", 1, false},
		{"/a/ab/a/ab", 2, false}, // prefixes are not the same segment
		{"/ab/a/ab/a/ab", 2, true},
		{strings.Repeat("/a/b/c/d/e/f/g/h", 8), 8, false},         // 64 segments, each 8 times
		{strings.Repeat("/a/b/c/d/e/f/g/h", 8) + "/i", 8, true},   // 65: too deep
		{strings.Repeat("/a/b/c/d/e/f/g/h", 8) + "/i", 100, true}, // whatever n
	} {
		if got := RepeatsOver(tc.path, tc.n); got != tc.want {
			t.Errorf("RepeatsOver(%q, %d) = %v, want %v", tc.path, tc.n, got, tc.want)
		}
	}
	f := mustFilter(t, Config{Mode: Any})
	runCases(t, f, []checkCase{
		{"http://example.com/a/b/a/b/a/b/", 1, ""},
		{"http://example.com/a/b/a/b/a/b/a/b/", 1, ReasonRepeats},
		{"http://example.com/x/./x/../x/x/x/x", 1, ReasonRepeats}, // canonical /x/x/x/x/x
	})
	runCases(t, mustFilter(t, Config{Mode: Any, MaxPathRepeats: -1}), []checkCase{
		{"http://example.com/a/b/a/b/a/b/a/b/", 1, ""},
	})
	runCases(t, mustFilter(t, Config{Mode: Any, MaxPathRepeats: 1}), []checkCase{
		{"http://example.com/a/b/a/", 1, ReasonRepeats},
		{"http://example.com/a/b/c/", 1, ""},
	})
}

func TestPattern(t *testing.T) {
	for _, tc := range []struct{ url, want string }{
		{"http://example.com/", "example.com/"},
		{"http://example.com", "example.com/"},
		{"http://Example.com:8080/cal/2026/11/", "example.com:8080/cal/#/#/"},
		{"http://example.com/cal/1999/01/?view=week", "example.com/cal/#/#/"},
		{"http://example.com/s/9f3a1c0d2b44e1f07a6b5c3d/p/4", "example.com/s/*/p/#"},
		{"http://example.com/s/550e8400-e29b-41d4-a716-446655440000/p", "example.com/s/*/p"},
		{"http://example.com/(S(lit3py55t21z5v55vlm25s55))/default.aspx", "example.com/*/default.aspx"},
		{"http://example.com/shop?color=red&size=m", "example.com/shop"},
		{"http://example.com/docs/intro.html", "example.com/docs/intro.html"},
		{"http://example.com/a//b/", "example.com/a//b/"},
		{"http://example.com/v2/api", "example.com/v#/api"},
		{"http://example.com/l/123", "example.com/l/#"},
		// Words are kept: titles, slugs, escapes.
		{"http://example.com/news/how-to-build-a-polite-web-crawler-in-go", "example.com/news/how-to-build-a-polite-web-crawler-in-go"},
		{"http://example.com/news/a-polite-crawler-12345", "example.com/news/a-polite-crawler-#"},
		{"http://example.com/news/how-to-build-a-crawler-in-2026", "example.com/news/how-to-build-a-crawler-in-#"},
		{"http://example.com/wiki/Caf%C3%A9", "example.com/wiki/Caf%C3%A9"},
		{"http://example.com/wiki/%E6%97%A5%E6%9C%AC", "example.com/wiki/%E6%97%A5%E6%9C%AC"},
		{"http://example.com/wiki/a%20b", "example.com/wiki/a%20b"},
		{"http://example.com/wiki/Albert_Einstein", "example.com/wiki/Albert_Einstein"},
		{"http://example.com/aGVsbG8gd29ybGQ", "example.com/aGVsbG#gd#ybGQ"}, // 15 letters and digits: short of a token
		// Session ids as servers make them, and tokens with an extension.
		{"http://example.com/(S(abcdeflmnopqrstuvwxyz012))/x", "example.com/*/x"},
		{"http://example.com/(X(1)S(lit3py55t21z5v55vlm25s55))/x", "example.com/*/x"},
		{"http://example.com/s/q3Xk9mZ2pL7vR4tY8wB1/p", "example.com/s/*/p"},
		{"http://example.com/f/0123456789abcdef0123456789abcdef.html", "example.com/f/*.html"},
		{"http://example.com/p/B07XJ8C8F5", "example.com/p/B#XJ#C#F#"}, // 10 characters: its own
		{"http://example.com/wiki/Windows_10", "example.com/wiki/Windows_#"},
	} {
		if got := Pattern(mustURL(t, tc.url)); got != tc.want {
			t.Errorf("Pattern(%s) = %q, want %q", tc.url, got, tc.want)
		}
	}
}

// TestExplainFilter: ExplainFilter names the filter behind each
// ReasonFilter, with its numbers, and nothing for a URL the filters pass.
func TestExplainFilter(t *testing.T) {
	f := mustFilter(t, Config{MaxURLLength: 40, MaxQueryParams: 2}, "http://a.test/")
	for _, tc := range []struct{ url, cause, detail string }{
		{"ftp://a.test/x", CauseScheme, `scheme "ftp"`},
		{"http://a.test/" + strings.Repeat("x", 30), CauseTooLong, "44 bytes long, over the limit of 40"},
		{"http://a.test/?a=1&b=2&c=3", CauseParams, "3 query parameters, over the limit of 2"},
		{"http://a.test/p/photo.JPG;v=1", CauseExtension, `extension "JPG"`},
		{"http://a.test/page.html", "", ""},
	} {
		u := mustURL(t, tc.url)
		e := f.ExplainFilter(u, false)
		if (f.CheckSeed(u) == ReasonFilter) != (e != nil) {
			t.Errorf("%s: CheckSeed %q but ExplainFilter %v", tc.url, f.CheckSeed(u), e)
		}
		if tc.cause == "" {
			if e != nil {
				t.Errorf("%s: %v, want no filter", tc.url, e)
			}
			continue
		}
		if e == nil || e.Cause != tc.cause || !strings.Contains(e.Detail, tc.detail) || !strings.Contains(e.Error(), tc.url[:13]) {
			t.Errorf("%s: %+v, want cause %s and %q", tc.url, e, tc.cause, tc.detail)
		}
	}
	if e := f.ExplainFilter(mustURL(t, "http://a.test/photo.jpg"), true); e != nil {
		t.Errorf("an embedded image: %v, want no filter", e)
	}
}

// A requisite may leave the scope by one hop, past the depth limit and
// the Include expressions, but not past the filters or an Exclude.
func TestCheckRequisite(t *testing.T) {
	f := mustFilter(t, Config{MaxDepth: 1, Include: []string{`/docs/`}, Exclude: []string{`/ads/`}}, "http://example.com/docs/")
	for u, want := range map[string]Reason{
		"http://cdn.example.net/site.css":       "",
		"http://example.com/img/a.png":          "",
		"http://cdn.example.net/ads/banner.png": ReasonScope,
		"ftp://example.com/a.css":               ReasonFilter,
		"http://example.com/a/a/a/a/x.png":      ReasonRepeats,
	} {
		if got := f.CheckRequisite(mustURL(t, u)); got != want {
			t.Errorf("%s: %q, want %q", u, got, want)
		}
		if u == "http://cdn.example.net/site.css" && f.CheckEmbed(mustURL(t, u), 2) == "" {
			t.Errorf("%s: CheckEmbed lets it in too: the test proves nothing", u)
		}
	}
}
