package robots

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func TestOutcomeString(t *testing.T) {
	for o, want := range map[Outcome]string{Rules: "rules", NoRules: "no-rules", DisallowAll: "disallow-all", 0: "outcome(0)"} {
		if got := o.String(); got != want {
			t.Errorf("Outcome(%d).String() = %q, want %q", int(o), got, want)
		}
	}
}

func TestFromStatus(t *testing.T) {
	body := []byte("User-agent: *\nDisallow: /private\n")
	tests := []struct {
		status  int
		outcome Outcome
		private bool // Allowed("/private")
	}{
		{200, Rules, false},
		{204, Rules, false},
		{299, Rules, false},
		{301, NoRules, true}, // a redirect not followed: the limit was exceeded
		{308, NoRules, true},
		{400, NoRules, true},
		{401, NoRules, true},
		{403, NoRules, true},
		{404, NoRules, true},
		{410, NoRules, true},
		{429, DisallowAll, false},
		{499, NoRules, true},
		{500, DisallowAll, false},
		{503, DisallowAll, false},
		{599, DisallowAll, false},
		{0, DisallowAll, false},
		{100, DisallowAll, false},
		{600, DisallowAll, false},
	}
	for _, tc := range tests {
		p := FromStatus(tc.status, body, "weft", t0)
		if p.Outcome != tc.outcome || p.Status != tc.status || !p.FetchedAt.Equal(t0) {
			t.Errorf("FromStatus(%d) = %v/%d/%v, want %v/%d", tc.status, p.Outcome, p.Status, p.FetchedAt, tc.outcome, tc.status)
		}
		if got := p.Allowed("/private"); got != tc.private {
			t.Errorf("FromStatus(%d).Allowed(/private) = %v, want %v", tc.status, got, tc.private)
		}
		if got := p.Allowed("/public"); got != (tc.outcome != DisallowAll) {
			t.Errorf("FromStatus(%d).Allowed(/public) = %v", tc.status, got)
		}
		if (p.Outcome == DisallowAll) != (p.Err != "") {
			t.Errorf("FromStatus(%d).Err = %q", tc.status, p.Err)
		}
		if p.Err != strings.ToLower(p.Err) {
			t.Errorf("FromStatus(%d).Err = %q is not lower case", tc.status, p.Err)
		}
	}
}

func TestOutcomePolicies(t *testing.T) {
	tests := []struct {
		name  string
		p     *Policy
		paths map[string]bool
	}{
		{"nil", nil, map[string]bool{"/": false, "/robots.txt": false}},
		{"zero", &Policy{}, map[string]bool{"/": false, "/x": false, "/robots.txt": true}},
		{"no rules", NoRulesPolicy(404, t0), map[string]bool{"/": true, "/x?y": true, "/robots.txt": true}},
		{"disallow all", DisallowAllPolicy(0, "dial tcp: timeout", t0), map[string]bool{
			"/": false, "/x": false, "/robots.txt": true, "/robots.txt?x=1": true, "/robots%2Etxt": true,
			"/robots.txt/x": false, "/robots.txtx": false, "": false,
		}},
		{"rules disallowing all", Parse([]byte("User-agent: *\nDisallow: /\n"), "weft", 200, t0), map[string]bool{
			"/": false, "/x": false, "/robots.txt": true, "robots.txt": true, "/robots.txt#x": true,
		}},
		{"empty rules", Parse(nil, "weft", 200, t0), map[string]bool{"/": true, "/x": true}},
		{"empty disallow", Parse([]byte("User-agent: *\nDisallow:\n"), "weft", 200, t0), map[string]bool{"/": true, "/x": true}},
	}
	for _, tc := range tests {
		for path, want := range tc.paths {
			if got := tc.p.Allowed(path); got != want {
				t.Errorf("%s: Allowed(%q) = %v, want %v", tc.name, path, got, want)
			}
		}
	}
	if p := DisallowAllPolicy(0, "dial tcp: timeout", t0); p.Err != "dial tcp: timeout" || p.Status != 0 {
		t.Errorf("DisallowAllPolicy = %+v", p)
	}
}

func TestFresh(t *testing.T) {
	p := NoRulesPolicy(404, t0)
	tests := []struct {
		now  time.Time
		ttl  time.Duration
		want bool
	}{
		{t0, time.Hour, true},
		{t0.Add(59 * time.Minute), time.Hour, true},
		{t0.Add(time.Hour), time.Hour, false},
		{t0.Add(2 * time.Hour), time.Hour, false},
		{t0.Add(-time.Second), time.Hour, false}, // clock stepped back
		{t0, 0, false},
	}
	for _, tc := range tests {
		if got := p.Fresh(tc.now, tc.ttl); got != tc.want {
			t.Errorf("Fresh(t0%+v, %v) = %v, want %v", tc.now.Sub(t0), tc.ttl, got, tc.want)
		}
	}
	if (*Policy)(nil).Fresh(t0, time.Hour) {
		t.Error("nil policy is fresh")
	}
}

func TestProductToken(t *testing.T) {
	tests := map[string]string{
		"weft/0.1 (+https://x.example/bot)":     "weft",
		"Weft":                                  "weft",
		"WeftBot/2.0":                           "weftbot",
		"weft (compatible)":                     "weft",
		"weft(compatible)":                      "weft",
		"  weft/1":                              "weft",
		"web-crawler_x/1":                       "web-crawler_x",
		"weft2.bot/1":                           "weftbot",
		"Mozilla/5.0 (compatible; weftbot/1.0)": "mozilla",
		"":                                      "",
		"/1.0":                                  "",
		"wéft/1":                                "wft",
	}
	for ua, want := range tests {
		if got := ProductToken(ua); got != want {
			t.Errorf("ProductToken(%q) = %q, want %q", ua, got, want)
		}
	}
}

func TestCrawlDelay(t *testing.T) {
	tests := []struct {
		name, body string
		want       time.Duration
	}{
		{"none", "User-agent: *\nDisallow: /x\n", 0},
		{"integer", "User-agent: *\nCrawl-delay: 10\n", 10 * time.Second},
		{"decimal", "User-agent: *\nCrawl-delay: 0.5\n", 500 * time.Millisecond},
		{"leading dot", "User-agent: *\ncrawl-delay: .25\n", 250 * time.Millisecond},
		{"trailing dot", "User-agent: *\nCRAWL-DELAY: 2.\n", 2 * time.Second},
		{"comment", "User-agent: *\nCrawl-delay: 3 # be nice\n", 3 * time.Second},
		{"negative", "User-agent: *\nCrawl-delay: -5\n", 0},
		{"garbage", "User-agent: *\nCrawl-delay: soon\n", 0},
		{"unit", "User-agent: *\nCrawl-delay: 10s\n", 0},
		{"exponent", "User-agent: *\nCrawl-delay: 1e3\n", 0},
		{"nan", "User-agent: *\nCrawl-delay: NaN\n", 0},
		{"two dots", "User-agent: *\nCrawl-delay: 1.2.3\n", 0},
		{"dot only", "User-agent: *\nCrawl-delay: .\n", 0},
		{"empty", "User-agent: *\nCrawl-delay:\n", 0},
		{"a day, in full", "User-agent: *\nCrawl-delay: 86400\n", 24 * time.Hour},
		{"clamped", "User-agent: *\nCrawl-delay: 99999999\n", MaxCrawlDelay},
		{"clamped huge", "User-agent: *\nCrawl-delay: 1" + strings.Repeat("0", 400) + "\n", MaxCrawlDelay},
		{"at max", "User-agent: *\nCrawl-delay: 2592000\n", MaxCrawlDelay},
		{"largest of several", "User-agent: *\nCrawl-delay: 2\nUser-agent: *\nCrawl-delay: 7\nCrawl-delay: 1\n", 7 * time.Second},
		{"specific group", "User-agent: *\nCrawl-delay: 9\n\nUser-agent: weft\nCrawl-delay: 4\n", 4 * time.Second},
		{"specific group without delay ignores global", "User-agent: *\nCrawl-delay: 9\n\nUser-agent: weft\nDisallow: /x\n", 0},
		{"other agent", "User-agent: otherbot\nCrawl-delay: 9\n", 0},
		{"before any user-agent", "Crawl-delay: 9\nUser-agent: *\nDisallow: /x\n", 0},
		{"weftbot is not weft", "User-agent: weftbot\nCrawl-delay: 9\n", 0},
		// Crawl-delay is a group member: a user-agent line after it starts
		// a new group (for rules, grobotstxt would run the list on).
		{"delay of the group before ours", "User-agent: other\nCrawl-delay: 5\nUser-agent: weft\nDisallow: /x\n", 0},
		{"delay of a shared group", "User-agent: other\nUser-agent: weft\nCrawl-delay: 5\n", 5 * time.Second},
		{"delay of a shared group with star", "User-agent: *\nUser-agent: weft\nCrawl-delay: 5\n", 5 * time.Second},
		{"delay after rules", "User-agent: weft\nDisallow: /x\nCrawl-delay: 6\nUser-agent: other\nCrawl-delay: 8\n", 6 * time.Second},
	}
	for _, tc := range tests {
		p := Parse([]byte(tc.body), "weft", 200, t0)
		if p.CrawlDelay != tc.want {
			t.Errorf("%s: CrawlDelay = %v, want %v", tc.name, p.CrawlDelay, tc.want)
		}
	}
}

func TestSitemaps(t *testing.T) {
	body := "Sitemap: https://a.example/s1.xml\nUser-agent: other\nDisallow: /\n" +
		"sitemap: https://a.example/s2.xml # comment\nSite-map:https://a.example/s1.xml\n" +
		"User-agent: weft\nSitemap: /relative.xml\nSitemap:\n"
	p := Parse([]byte(body), "weft", 200, t0)
	want := []string{"https://a.example/s1.xml", "https://a.example/s2.xml", "/relative.xml"}
	if !slices.Equal(p.Sitemaps, want) {
		t.Errorf("Sitemaps = %q, want %q", p.Sitemaps, want)
	}

	var b strings.Builder
	for i := range 2 * maxSitemaps {
		fmt.Fprintf(&b, "Sitemap: https://a.example/%d.xml\n", i)
	}
	if p := Parse([]byte(b.String()), "weft", 200, t0); len(p.Sitemaps) != maxSitemaps {
		t.Errorf("%d sitemaps kept, want %d", len(p.Sitemaps), maxSitemaps)
	}
}

func TestMaxBytes(t *testing.T) {
	head := "User-agent: *\nDisallow: /early\n"
	pad := "# " + strings.Repeat("x", 98) + "\n"
	var b strings.Builder
	b.WriteString(head)
	for b.Len()+len(pad) <= MaxBytes-200 {
		b.WriteString(pad)
	}
	// The limit falls inside the Allow line: parsed short, it would read
	// "Allow: /early" and win the tie with "Disallow: /early".
	b.WriteString(strings.Repeat("\n", MaxBytes-b.Len()-len("Allow: /early")))
	b.WriteString("Allow: /early/late\nDisallow: /after\n")
	body := []byte(b.String())
	if len(body) <= MaxBytes {
		t.Fatal("body too short")
	}
	p := Parse(body, "weft", 200, t0)
	if !p.Truncated {
		t.Error("Truncated = false")
	}
	for path, want := range map[string]bool{"/early": false, "/early/late": false, "/after": true, "/other": true} {
		if got := p.Allowed(path); got != want {
			t.Errorf("Allowed(%q) = %v, want %v", path, got, want)
		}
	}
	if p := Parse([]byte(head), "weft", 200, t0); p.Truncated {
		t.Error("short body Truncated")
	}
	// No line end within the limit: nothing is parsed.
	one := []byte("User-agent: * Disallow: /" + strings.Repeat("x", MaxBytes))
	if p := Parse(one, "weft", 200, t0); !p.Truncated || !p.Allowed("/x") {
		t.Errorf("one long line: Truncated=%v Allowed=%v", p.Truncated, p.Allowed("/x"))
	}
}

func TestPolicyKeepsNoReferenceToBody(t *testing.T) {
	body := []byte("User-agent: *\nDisallow: /private\nSitemap: https://a.example/s.xml\n")
	p := Parse(body, "weft", 200, t0)
	for i := range body {
		body[i] = 'x'
	}
	if p.Allowed("/private") || p.Sitemaps[0] != "https://a.example/s.xml" {
		t.Error("policy changed with the body")
	}
}

func TestAppendCanon(t *testing.T) {
	tests := map[string]string{
		"/foo/bar?baz=quz":    "/foo/bar?baz=quz",
		"/foo/bar/ツ":          "/foo/bar/%E3%83%84",
		"/foo/bar/%e3%83%84":  "/foo/bar/%E3%83%84",
		"/foo/bar/%62%61%7A":  "/foo/bar/baz",
		"/%7Ejoe":             "/~joe",
		"/%2f%2F/":            "/%2F%2F/",
		"/a b":                "/a%20b",
		"/a%20b":              "/a%20b",
		"/100%":               "/100%25",
		"/100%2":              "/100%252",
		"/100%zz":             "/100%25zz",
		"/%25":                "/%25",
		"/*$":                 "/*$",
		"/%2A%24":             "/%2A%24",
		"/<>\"\\^`{|}":        "/%3C%3E%22%5C%5E%60%7B%7C%7D",
		"/\x00\x1f\x7f":       "/%00%1F%7F",
		"/[]@!$&'()*+,;=:#?~": "/[]@!$&'()*+,;=:#?~",
		"/\xff":               "/%FF",
		"":                    "",
	}
	for in, want := range tests {
		got := string(appendCanon(nil, in))
		if got != want {
			t.Errorf("appendCanon(%q) = %q, want %q", in, got, want)
		}
		if again := string(appendCanon(nil, got)); again != got {
			t.Errorf("appendCanon not idempotent on %q: %q", got, again)
		}
	}
}

func TestIsPlain(t *testing.T) {
	const plain = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~:/?#[]@!$&'()*+,;="
	for c := 0; c < 256; c++ {
		if want := strings.IndexByte(plain, byte(c)) >= 0; isPlain(byte(c)) != want {
			t.Errorf("isPlain(%q) = %v", byte(c), !want)
		}
	}
}

func TestRepairEscapes(t *testing.T) {
	tests := map[string]string{
		"/plain":              "/plain",
		"/%E3%83%84":          "/%E3%83%84",
		"/%E\x13%\x18\x13%AB": "/%E3%83%AB",
		"/%\x12Fb":            "/%2Fb",
		"/%\x12":              "/%\x12", // too short to be an escape
		"/%\x12G":             "/%\x12G",
		"%":                   "%",
	}
	for in, want := range tests {
		if got := repairEscapes(in); got != want {
			t.Errorf("repairEscapes(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestRuleOrderAndDedup(t *testing.T) {
	p := Parse([]byte("User-agent: *\nDisallow: /a\nAllow: /a\nDisallow: /a\nDisallow: /abc*\nAllow: /ab\nDisallow: /%61\n"), "weft", 200, t0)
	var got []string
	for _, r := range p.rules {
		got = append(got, fmt.Sprintf("%v:%d", r.allow, r.prio))
	}
	want := []string{"false:5", "true:3", "true:2", "false:2"}
	if !slices.Equal(got, want) {
		t.Errorf("rules = %v, want %v", got, want)
	}
	// "/%61" is "/a" in comparison form: it ties with "Allow: /a".
	if !p.Allowed("/a") || !p.Allowed("/%61") || p.Allowed("/abcd") {
		t.Error("wrong verdicts")
	}
}

func TestPrefixIndexAgreesWithScan(t *testing.T) {
	var sb strings.Builder
	sb.WriteString("User-agent: weft\n")
	for i := range 300 {
		switch i % 6 {
		case 0:
			fmt.Fprintf(&sb, "Disallow: /*?p%d=\n", i%7)
		case 1:
			fmt.Fprintf(&sb, "Allow: /%c/%d*.html$\n", 'a'+i%5, i%13)
		case 2:
			fmt.Fprintf(&sb, "Allow: /%c/%d\n", 'a'+i%5, i%11)
		case 3:
			fmt.Fprintf(&sb, "Disallow: /%c\n", 'a'+i%5)
		default:
			fmt.Fprintf(&sb, "Disallow: /%c/%d/\n", 'a'+i%5, i%17)
		}
	}
	p := Parse([]byte(sb.String()), "weft", 200, t0)
	if p.index == nil {
		t.Fatalf("no index for %d rules", len(p.rules))
	}
	linear := *p
	linear.index = nil
	checked := map[bool]int{}
	for c := range 5 {
		for n := range 20 {
			for _, tail := range []string{"", "/", "/x.html", "/x.html?p3=1", "?p4=", "/9/y.html"} {
				path := fmt.Sprintf("/%c/%d%s", 'a'+c, n, tail)
				got, want := p.Allowed(path), linear.Allowed(path)
				if got != want {
					t.Errorf("Allowed(%q): index %v, scan %v", path, got, want)
				}
				checked[want]++
			}
		}
	}
	if checked[true] == 0 || checked[false] == 0 {
		t.Errorf("one-sided test: %v", checked)
	}
}

func TestAllowedDoesNotAllocate(t *testing.T) {
	p := Parse([]byte(typicalRobots), "weft", 200, t0)
	paths := []string{"/", "/search?q=x&sessionid=1", "/caf%C3%A9/menu%20x", "/a/b/c/d/e/f/g.html"}
	for _, path := range paths {
		if n := testing.AllocsPerRun(100, func() { p.Allowed(path) }); n != 0 {
			t.Errorf("Allowed(%q): %v allocations", path, n)
		}
	}
}

func TestAllowedConcurrent(t *testing.T) {
	p := Parse([]byte(typicalRobots), "weft", 200, t0)
	want := p.Allowed("/private/x")
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 1000 {
				if p.Allowed("/private/x") != want {
					t.Error("verdict changed")
					return
				}
			}
		})
	}
	wg.Wait()
}

// typicalRobots is a 30-rule file in the shape of a large site's.
const typicalRobots = `# robots.txt for www.example.com
User-agent: *
Disallow: /cgi-bin/
Disallow: /tmp/
Disallow: /admin/
Disallow: /login
Disallow: /logout
Disallow: /cart
Disallow: /checkout/
Disallow: /account/
Disallow: /search
Disallow: /*?sessionid=
Disallow: /*&sessionid=
Disallow: /*.json$
Disallow: /*/print/
Disallow: /api/
Disallow: /private
Allow: /search/about
Allow: /api/public/
Allow: /*.css$
Allow: /*.js$
Allow: /tmp/public/

User-agent: weft
Disallow: /private/
Disallow: /drafts/
Disallow: /*?sort=
Disallow: /*?filter=
Disallow: /*.pdf$
Disallow: /users/*/settings
Disallow: /search
Allow: /private/press/
Allow: /search/help
Crawl-delay: 2

User-agent: otherbot
Disallow: /

Sitemap: https://www.example.com/sitemap.xml
`
