package canon

import (
	"errors"
	"math/rand/v2"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// fastBases are bases of every kind the fast path serves or refuses.
var fastBases = []string{
	"http://example.com/a/b/c",
	"http://example.com/a/b/",
	"https://www.example.com/news/2024/05/article-1234.html?page=2&utm_source=feed",
	"https://Example.COM.:8443/a;jsessionid=1/b",
	"http://127.0.0.1:8080/x/y",
	"http://[::1]/x",
	"http://xn--bcher-kva.example/",
	"https://user:pw@example.com/a?x=%7e",
	"http://example.com",
	"http://example.com/a/%2e%2E/b/%7E",
	"file:///etc/passwd",
	"mailto:x@example.com",
}

// fastRefs are references of the shapes links take, and their edges.
var fastRefs = []string{
	"d", "./d", "d/", "../d", "../../../../d", ".", "..", "./", "../", "/d", "/", "//", "///x",
	"?y=2", "?", "#f", "", "d?q=1#f", "d;jsessionid=1?utm_medium=x", "%2e%2E/x", ".%2e", "%2E.", "%2e",
	"//other.example/x", "//Other.Example", "//other.example?q", "//other.example:80/x", "//other.example:0080",
	"https://Other.Example", "http://other.example:443/", "https://other.example:443/", "http://other.example:65535/",
	"http://other.example:65536/", "http://other.example:/x", "http://other.example:x/", "HTTP://A.B/C?D#E",
	"http:d", "https:d", "http:/d", `..\d`, `\\x\y`, " /d", "/d ", "d\te", "é", "/%zz/%41", "/a?b='c'", "/a?b=\"c\"",
	"/a?b=<c>", "/a?x=1&utm_source=2&b=3", "/a?z=1&y=2&y=1", "/a{b}", "/a`b", "/a|b^c[d]", "/a?b|c^d[e]{f}",
	"http://example.com./x", "http://.example.com/", "http://a..b/", "http://xn--bcher-kva.example/", "http://XN--x.y/",
	"http://1.2.3.4/", "http://a.0x10/", "http://a.b.123/", "http://a.123b/", "http://0x/", "http://a_b.example/",
	"http://u@h/", "http://h:1@x/", "http://[::1]/", "c:/x", "a:b", "javascript:void(0)", "mailto:a@b", "./a:b",
	"a/b/../../..", "a/./b/.", "a//b", "/a/b;sid=1;x=2/c", "/a;jsessionid=x/..;sid=1/b", "?a&&b=&c",
	"/news/2024/06/article-5678.html?utm_campaign=x&ref=home&page=2", "/s/a1b2c3", "../06/article-5678.html?page=2&utm_source=feed",
	"http://127.0.1.4:41234/a?b=1&c=2", "//10.0.0.255/x", "http://0.0.0.0/", "http://255.255.255.255:80/", "http://01.2.3.4/",
	"http://1.02.3.4/", "http://1.2.3/", "http://1.2.3.256/", "http://1.2.3.4./", "http://1.2.3.4.5/", "http://0x7f.0.0.1/",
	"http://1.2.3.4a/", "http://1234.2.3.4/", "http://1.2.3.04/",
}

// TestFastPathAgrees resolves every reference against every base both
// ways: where the fast path answers, the WHATWG parser must give the same
// URL; and it must answer for the common shapes of links.
func TestFastPathAgrees(t *testing.T) {
	c := New(Config{})
	refs := append([]string(nil), fastRefs...)
	for _, tc := range resolveCases {
		refs = append(refs, tc.ref)
	}
	for _, tc := range parseCases {
		refs = append(refs, tc.in)
	}
	bases := append([]string(nil), fastBases...)
	for _, tc := range resolveCases {
		bases = append(bases, tc.base)
	}
	fast := 0
	for _, base := range bases {
		b, err := c.NewBase(base)
		if err != nil {
			continue // resolveCases has bases that do not parse
		}
		for _, ref := range refs {
			if agree(t, c, b, base, ref) {
				fast++
			}
		}
	}
	if fast < len(bases)*len(refs)/3 {
		t.Errorf("the fast path answered %d of %d resolutions", fast, len(bases)*len(refs))
	}
	// The common shapes, against an ordinary page and against one of a
	// host named by its address (a web served so, as wget2 needs it).
	for _, tc := range []struct{ base, other string }{
		{"https://www.example.com/news/2024/05/article-1234.html", "https://other.example/a?utm_source=x&b=1"},
		{"http://127.0.1.4:41234/news/2024/05/article-1234.html", "http://127.0.1.9:39411/a?utm_source=x&b=1"},
	} {
		b, _ := c.NewBase(tc.base)
		for _, ref := range []string{"d", "../d", "/d?x=1", "?page=2", "#top", "//cdn.example.com/x.js", tc.other} {
			if err := c.check(ref); err != nil {
				t.Fatal(err)
			}
			if _, ok := c.fastResolve(b.fast, ref); !ok {
				t.Errorf("base %q, ref %q: not on the fast path", tc.base, ref)
			}
		}
	}
}

// agree checks one resolution both ways and reports whether the fast
// path answered it.
func agree(t *testing.T, c *Canonicalizer, b *Base, base, ref string) bool {
	t.Helper()
	if b.fast == nil || c.check(ref) != nil {
		return false
	}
	got, ok := c.fastResolve(b.fast, ref)
	if !ok {
		return false
	}
	want, err := b.slowResolve(ref)
	if err != nil {
		t.Errorf("base %q, ref %q: fast path gave %q, the parser an error: %v", base, ref, got.String, err)
		return true
	}
	if got != want {
		t.Errorf("base %q, ref %q:\n fast %+v\nparser %+v", base, ref, got, want)
	}
	return true
}

// TestFastPathRandom checks the fast path against the parser on links
// made of the pieces where they could disagree.
func TestFastPathRandom(t *testing.T) {
	c := New(Config{})
	r := rand.New(rand.NewPCG(21, 2))
	pieces := []string{"a", "B", "..", ".", "%2e", "%2E", "/", "//", "?", "&", "=", "#", ";", "sid=1", ";jsessionid=2", ":", "@", "%41", "%7e", "%zz", "'", "~", "-", "_", "utm_x=1", "!", "$", "(", "*", "+", ",", "^", "|", "[", "]"}
	prefixes := []string{"", "/", "//h.example", "//h.example:8080", "http://H.example", "https://h.example:443", "?", "#", "./", "../"}
	n, fast := 0, 0
	for range 20000 {
		base := fastBases[r.IntN(4)]
		var sb strings.Builder
		sb.WriteString(prefixes[r.IntN(len(prefixes))])
		for range r.IntN(8) {
			sb.WriteString(pieces[r.IntN(len(pieces))])
		}
		b, err := c.NewBase(base)
		if err != nil {
			t.Fatal(err)
		}
		n++
		if agree(t, c, b, base, sb.String()) {
			fast++
		}
		if t.Failed() {
			return
		}
	}
	t.Logf("fast path: %d of %d", fast, n)
	if fast < n/4 {
		t.Errorf("the fast path answered %d of %d", fast, n)
	}
}

// FuzzFastPath: where the fast path answers, it agrees with the parser.
func FuzzFastPath(f *testing.F) {
	for i, ref := range fastRefs {
		f.Add(fastBases[i%len(fastBases)], ref)
	}
	c := New(Config{})
	f.Fuzz(func(t *testing.T, base, ref string) {
		b, err := c.NewBase(base)
		if err != nil {
			return
		}
		agree(t, c, b, base, ref)
	})
}

func BenchmarkBaseResolveSlow(b *testing.B) {
	c := New(Config{})
	base, err := c.NewBase("https://www.example.com/news/2024/05/article-1234.html")
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := base.slowResolve("../06/article-5678.html?page=2&utm_source=feed"); err != nil {
			b.Fatal(err)
		}
	}
}

// fastParseAgrees checks that where the fast path parses the absolute URL
// raw, Parse gives what the parser gives, and NewBase the base the parser's
// parts would make; it reports whether the fast path answered.
func fastParseAgrees(t *testing.T, c *Canonicalizer, raw string) bool {
	t.Helper()
	if c.check(raw) != nil {
		return false
	}
	p, ok := fastAbsolute(raw)
	if !ok {
		return false
	}
	want, err := c.slowParse(raw)
	if err != nil {
		t.Errorf("%q: the fast path parsed it, the parser gave an error: %v", raw, err)
		return true
	}
	if got, err := c.Parse(raw); err != nil || got != want {
		t.Errorf("Parse(%q):\n fast %+v (%v)\nparser %+v", raw, got, err, want)
	}
	u, err := c.parser.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	fromParser := newFastBase(u.Scheme(), u.Hostname(), u.Port(), u.Pathname(), u.Query(), u.IsIPv4() || u.IsIPv6())
	if fromFast := newFastBase(p.scheme, p.host, p.port, p.path, p.query, p.ip); !reflect.DeepEqual(fromFast, fromParser) {
		t.Errorf("NewBase(%q):\n fast %+v\nparser %+v", raw, fromFast, fromParser)
	}
	return true
}

// TestFastParseAgrees holds Parse's and NewBase's fast path to the parser
// on every URL of the tests, and on absolute URLs made of the pieces where
// they could disagree.
func TestFastParseAgrees(t *testing.T) {
	c := New(Config{})
	raws := append([]string(nil), fastBases...)
	for _, tc := range parseCases {
		raws = append(raws, tc.in)
	}
	for _, tc := range resolveCases {
		raws = append(raws, tc.base, tc.ref)
	}
	raws = append(raws, fastRefs...)
	r := rand.New(rand.NewPCG(5, 8))
	schemes := []string{"http://", "https://", "HTTP://", "hTtPs://", "http:", "https:/", "http:///", "ftp://"}
	hosts := []string{"a.example", "A.Example", "a.example:80", "a.example:443", "a.example:0080", "a.example:", "a.example:99999", "1.2.3.4", "a.0x10",
		"xn--nxasmq6b.example", "a..b", "a.example.", "u@a.example", "[::1]", "a.123", "a_b.example", "", "-a.example",
		"127.0.1.4:41234", "0.0.0.0", "255.255.255.255", "01.2.3.4", "1.02.3.4", "1.2.3", "1.2.3.256", "1.2.3.4.", "1.2.3.4.5", "0x7f.0.0.1", "1.2.3.04"}
	pieces := []string{"/", "/", "/", "a", "B", "..", ".", "%2e", "%2E", "//", "?", "&", "=", "#", ";", ":", "@", "%41", "%zz", "'", "~", "-", "_", "utm_x=1", "[", "]", "\\", " ", "\t", "é", "{"}
	for range 20000 {
		var sb strings.Builder
		sb.WriteString(schemes[r.IntN(len(schemes))])
		sb.WriteString(hosts[r.IntN(len(hosts))])
		for range r.IntN(10) {
			sb.WriteString(pieces[r.IntN(len(pieces))])
		}
		raws = append(raws, sb.String())
	}
	fast := 0
	for _, raw := range raws {
		if fastParseAgrees(t, c, raw) {
			fast++
		}
		if t.Failed() {
			return
		}
	}
	t.Logf("fast path: %d of %d", fast, len(raws))
	// Most of the random URLs hold a piece the fast path leaves to the
	// parser; the rest are where the two could disagree.
	if fast < len(raws)/50 {
		t.Errorf("the fast path parsed %d of %d", fast, len(raws))
	}
	for _, raw := range []string{"http://example.com", "https://www.example.com/news/2024/05/article-1234.html?page=2&utm_source=x#top", "http://h.example:8080/a/./b/../c?"} {
		if !fastParseAgrees(t, c, raw) {
			t.Errorf("%q: not on the fast path", raw)
		}
	}
}

// FuzzFastParse: where the fast path parses, it agrees with the parser.
func FuzzFastParse(f *testing.F) {
	for _, raw := range fastBases {
		f.Add(raw)
	}
	for _, tc := range parseCases {
		f.Add(tc.in)
	}
	c := New(Config{})
	f.Fuzz(func(t *testing.T, raw string) {
		fastParseAgrees(t, c, raw)
	})
}

// TestReadsAsNumber holds readsAsNumber to strconv.ParseInt, which the
// WHATWG library reads a host's numbers with.
func TestReadsAsNumber(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 9))
	ins := []string{"", "+", "-", "0", "+0", "-1", "9223372036854775807", "9223372036854775808", "18446744073709551615",
		"18446744073709551616", "100000000000000000000a", "10000000000000000000a", "7fffffffffffffff", "ffffffffffffffffff", "g", "com", "1st", "_1", "1_0"}
	digits := "0123456789abcdefxyzABCDEFXYZ+-_."
	for range 20000 {
		b := make([]byte, r.IntN(24))
		for i := range b {
			b[i] = digits[r.IntN(len(digits))]
		}
		ins = append(ins, string(b))
	}
	for _, s := range ins {
		for _, base := range []int{8, 10, 16} {
			_, err := strconv.ParseInt(s, base, 64)
			want := err == nil || errors.Is(err, strconv.ErrRange)
			if got := readsAsNumber(s, base); got != want {
				t.Errorf("readsAsNumber(%q, %d) = %v; strconv: %v", s, base, got, err)
			}
		}
	}
}

// slowParse is Parse through the WHATWG parser, for every URL: the fast
// path is checked against it (Parse itself uses the parser only where the
// fast path gives up).
func (c *Canonicalizer) slowParse(raw string) (URL, error) {
	u, err := c.parser.Parse(raw)
	if err != nil {
		return URL{}, err
	}
	return c.canonical(u), nil
}
