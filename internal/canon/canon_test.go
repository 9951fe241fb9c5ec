package canon

import (
	"errors"
	"strings"
	"sync"
	"testing"
)

// parseCases are absolute URLs and their canonical form; want "" means the
// input must be rejected.
var parseCases = []struct {
	name, in, want string
}{
	// Case.
	{"scheme and host case", "HTTP://EXAMPLE.COM/Path/To", "http://example.com/Path/To"},
	{"mixed case https", "hTTpS://Example.Com/", "https://example.com/"},

	// Ports.
	{"http default port", "http://example.com:80/", "http://example.com/"},
	{"https default port", "https://example.com:443/a", "https://example.com/a"},
	{"http on 443 kept", "http://example.com:443/", "http://example.com:443/"},
	{"https on 80 kept", "https://example.com:80/", "https://example.com:80/"},
	{"other port", "http://example.com:8080", "http://example.com:8080/"},
	{"port leading zeros", "http://example.com:0080/", "http://example.com/"},
	{"empty port", "http://example.com:/x", "http://example.com/x"},

	// Fragment and empty path.
	{"fragment", "http://example.com/a#section-2", "http://example.com/a"},
	{"fragment after query", "http://example.com/a?b=1#x", "http://example.com/a?b=1"},
	{"empty fragment", "http://example.com/#", "http://example.com/"},
	{"empty path", "http://example.com", "http://example.com/"},
	{"empty path with query", "http://example.com?a=1", "http://example.com/?a=1"},

	// Dot segments.
	{"dot segments", "http://example.com/a/./b/../c", "http://example.com/a/c"},
	{"dot segments above root", "http://example.com/../../a", "http://example.com/a"},
	{"trailing dot dot", "http://example.com/a/b/..", "http://example.com/a/"},
	{"escaped dot segments", "http://example.com/a/%2e%2E/b/%2E/c", "http://example.com/b/c"},
	{"dots inside names kept", "http://example.com/a..b/.c/d.", "http://example.com/a..b/.c/d."},

	// Slashes and www are left alone.
	{"trailing slash kept", "http://example.com/a/", "http://example.com/a/"},
	{"no trailing slash kept", "http://example.com/a", "http://example.com/a"},
	{"www kept", "http://www.example.com/", "http://www.example.com/"},
	{"double slash kept", "http://example.com/a//b", "http://example.com/a//b"},

	// Tracking parameters.
	{"utm params", "http://example.com/?utm_source=x&utm_medium=y&id=3", "http://example.com/?id=3"},
	{"utm upper case", "http://example.com/?UTM_Source=x&Utm_campaign=y", "http://example.com/"},
	{"click ids", "http://example.com/p?gclid=1&fbclid=2&msclkid=3&q=a", "http://example.com/p?q=a"},
	{"click id upper case", "http://example.com/p?GCLID=1&FbClId=2&q=a", "http://example.com/p?q=a"},
	{"escaped param name", "http://example.com/p?%67clid=1&utm%5Fsource=2&q=a", "http://example.com/p?q=a"},
	{"more trackers", "http://example.com/p?_ga=1&mc_eid=2&yclid=3&dclid=4&x=0", "http://example.com/p?x=0"},
	{"lookalike kept", "http://example.com/p?gclidx=1&xutm_source=2", "http://example.com/p?gclidx=1&xutm_source=2"},

	// Session parameters.
	{"session in query", "http://example.com/p?PHPSESSID=abc&page=2", "http://example.com/p?page=2"},
	{"session ids in query", "http://example.com/p?jsessionid=a&sid=b&sessionid=c&aspsessionid=d", "http://example.com/p"},
	{"session in last segment", "http://example.com/a/b;jsessionid=XYZ?x=1", "http://example.com/a/b?x=1"},
	{"session upper case", "http://example.com/a/b;JSESSIONID=XYZ", "http://example.com/a/b"},
	{"session in middle segment", "http://example.com/a;sid=1/b", "http://example.com/a/b"},
	{"session among path params", "http://example.com/a;v=1;phpsessid=2;w=3", "http://example.com/a;v=1;w=3"},
	{"session without value", "http://example.com/a;jsessionid", "http://example.com/a"},
	{"session alone in segment", "http://example.com/a/;jsessionid=1", "http://example.com/a/"},
	{"other path param kept", "http://example.com/a;version=2/b", "http://example.com/a;version=2/b"},
	{"session uncovers dot dot", "http://example.com/a/b/..;jsessionid=1/c", "http://example.com/a/c"},
	{"session uncovers escaped dot", "http://example.com/a/%2e;sid=1", "http://example.com/a/"},
	{"session uncovers inner dot", "http://example.com/%2e;sid=1/a", "http://example.com/a"},
	{"session uncovers dot dot at root", "http://example.com/..;sid=1", "http://example.com/"},

	// Query order and shape.
	{"sorted", "http://example.com/?c=3&b=2&a=1", "http://example.com/?a=1&b=2&c=3"},
	{"duplicates kept and sorted by value", "http://example.com/?a=2&b=1&a=1", "http://example.com/?a=1&a=2&b=1"},
	{"empty values distinct", "http://example.com/?b=&a=&a", "http://example.com/?a&a=&b="},
	{"name before value", "http://example.com/?a-b=1&a=2", "http://example.com/?a=2&a-b=1"},
	{"empty params dropped", "http://example.com/?&a=1&&b=2&", "http://example.com/?a=1&b=2"},
	{"empty query", "http://example.com/p?", "http://example.com/p"},
	{"only ampersands", "http://example.com/p?&&", "http://example.com/p"},
	{"query emptied by stripping", "http://example.com/p?utm_source=x#top", "http://example.com/p"},
	{"plus kept", "http://example.com/?q=a+b", "http://example.com/?q=a+b"},
	{"equals in value", "http://example.com/?q=a=b&p=1", "http://example.com/?p=1&q=a=b"},

	// Percent-encoding.
	{"unreserved escapes decoded", "http://example.com/%7euser/%41%2d?q=%7E%5f", "http://example.com/~user/A-?q=~_"},
	{"hex upper-cased", "http://example.com/caf%c3%a9?q=%c3%A9&r=%2f", "http://example.com/caf%C3%A9?q=%C3%A9&r=%2F"},
	{"escaped slash kept escaped", "http://example.com/a%2Fb", "http://example.com/a%2Fb"},
	{"non-ascii path", "http://example.com/café", "http://example.com/caf%C3%A9"},
	{"space in path", "http://example.com/a b", "http://example.com/a%20b"},
	{"space in query", "http://example.com/?q=a b", "http://example.com/?q=a%20b"},
	{"malformed escape kept", "http://example.com/100%zz?p=%", "http://example.com/100%zz?p=%"},

	// Hosts.
	{"idna", "http://Bücher.example/", "http://xn--bcher-kva.example/"},
	{"punycode kept", "http://xn--bcher-kva.example/", "http://xn--bcher-kva.example/"},
	{"full-width host", "http://ＥＸＡＭＰＬＥ.com/", "http://example.com/"},
	{"trailing dot host", "http://example.com./a", "http://example.com/a"},
	{"trailing dots host", "http://a.0x1g../", "http://a.0x1g/"},
	{"dots kept before a number", "http://00../", "http://00../"},
	{"dots kept before a hex number", "http://a.0xff../", "http://a.0xff../"},
	{"dots only host", "http://../", "http://../"},
	{"ipv4", "http://192.168.0.1/", "http://192.168.0.1/"},
	{"ipv4 hex and octal", "http://0xC0.0250.1/", "http://192.168.0.1/"},
	{"ipv4 as integer", "http://3232235521:8080/", "http://192.168.0.1:8080/"},
	{"ipv6", "http://[2001:DB8:0:0::1]:8080/", "http://[2001:db8::1]:8080/"},
	{"ipv6 default port", "https://[::1]:443/x", "https://[::1]/x"},

	// User info is dropped.
	{"user and password", "http://user:pass@example.com/", "http://example.com/"},
	{"user only with port", "http://user@example.com:81/a", "http://example.com:81/a"},
	{"empty user info", "http://@example.com/", "http://example.com/"},

	// Whitespace and backslashes.
	{"surrounding and inner whitespace", "  http://example.com/a\n\tb\r  ", "http://example.com/ab"},
	{"tab in scheme", "ht\ttp://example.com/", "http://example.com/"},
	{"backslashes", `http:\\example.com\a\b`, "http://example.com/a/b"},
	{"missing slashes", "http:example.com/a", "http://example.com/a"},

	// Other schemes are returned for the caller to filter.
	{"ftp default port", "ftp://example.com:21/x", "ftp://example.com/x"},
	{"mailto", "mailto:Someone@Example.com", "mailto:Someone@Example.com"},
	{"javascript", "javascript:void(0)", "javascript:void(0)"},
	{"opaque trailing space before fragment", "javascript:x #f", "javascript:x"},
	{"non-special with host", "foo://Host/p?b&a", "foo://Host/p?a&b"},

	// Rejected.
	{"empty", "", ""},
	{"blank", " \t\n ", ""},
	{"no scheme", "example.com/a", ""},
	{"relative", "/a/b", ""},
	{"no host", "http://", ""},
	{"space in host", "http://exa mple.com/", ""},
	{"unclosed ipv6", "http://[::1/", ""},
	{"port out of range", "http://example.com:65536/", ""},
	{"port not a number", "http://example.com:8a/", ""},
	{"forbidden host code point", "http://exa<mple.com/", ""},
	{"bad ipv4", "http://1.2.3.256/", ""},
}

func TestParse(t *testing.T) {
	c := New(Config{})
	for _, tc := range parseCases {
		t.Run(tc.name, func(t *testing.T) {
			u, err := c.Parse(tc.in)
			if tc.want == "" {
				if err == nil {
					t.Fatalf("Parse(%q) = %q, want error", tc.in, u.String)
				}
				return
			}
			if err != nil {
				t.Fatalf("Parse(%q): %v", tc.in, err)
			}
			if u.String != tc.want {
				t.Errorf("Parse(%q) = %q, want %q", tc.in, u.String, tc.want)
			}
			checkIdempotent(t, c, u)
		})
	}
}

// resolveCases resolve refs against bases without a trailing slash, with
// one, and with a query.
var resolveCases = []struct {
	base, ref, want string // want "" means an error
}{
	{"http://example.com/a/b/c", "d", "http://example.com/a/b/d"},
	{"http://example.com/a/b/c", "./d", "http://example.com/a/b/d"},
	{"http://example.com/a/b/c", "d/", "http://example.com/a/b/d/"},
	{"http://example.com/a/b/c", "../d", "http://example.com/a/d"},
	{"http://example.com/a/b/c", "../../d", "http://example.com/d"},
	{"http://example.com/a/b/c", "../../../../d", "http://example.com/d"},
	{"http://example.com/a/b/c", ".", "http://example.com/a/b/"},
	{"http://example.com/a/b/c", "..", "http://example.com/a/"},
	{"http://example.com/a/b/c", "/d", "http://example.com/d"},
	{"http://example.com/a/b/c", "?y=2", "http://example.com/a/b/c?y=2"},
	{"http://example.com/a/b/c", "#frag", "http://example.com/a/b/c"},
	{"http://example.com/a/b/c", "d?q=1#f", "http://example.com/a/b/d?q=1"},
	{"http://example.com/a/b/c", "d;jsessionid=1?utm_medium=x", "http://example.com/a/b/d"},
	{"http://example.com/a/b/c", "//other.example/x", "http://other.example/x"},
	{"http://example.com/a/b/c", "https://Other.Example", "https://other.example/"},
	{"http://example.com/a/b/c", "http:d", "http://example.com/a/b/d"},
	{"http://example.com/a/b/c", `..\d\e`, "http://example.com/a/d/e"},
	{"http://example.com/a/b/c", `\\other.example\x`, "http://other.example/x"},
	{"http://example.com/a/b/c", " \t/d\n/e ", "http://example.com/d/e"},
	{"http://example.com/a/b/c", "d%7e", "http://example.com/a/b/d~"},
	{"http://example.com/a/b/", "d", "http://example.com/a/b/d"},
	{"http://example.com/a/b/", "..", "http://example.com/a/"},
	{"http://example.com/a/b/", "./", "http://example.com/a/b/"},
	{"http://example.com/a/b/", "?", "http://example.com/a/b/"},
	{"http://example.com/a/b/c?x=1", "#f", "http://example.com/a/b/c?x=1"},
	{"http://example.com/a/b/c?x=1", "d", "http://example.com/a/b/d"},
	{"http://example.com/a/b/c?x=1", "?", "http://example.com/a/b/c"},
	{"http://example.com/a/b/c?x=1", "?z=1&y=2", "http://example.com/a/b/c?y=2&z=1"},
	{"https://example.com/", "//cdn.example.com/x.js", "https://cdn.example.com/x.js"},
	{"https://example.com:8443/a", "b", "https://example.com:8443/b"},
	{"https://user:pw@example.com/a", "b", "https://example.com/b"},
	{"http://example.com/a", "javascript:void(0)", "javascript:void(0)"},
	{"http://example.com/a", "mailto:x@example.com", "mailto:x@example.com"},
	{"http://example.com/a", "data:text/plain,hi", "data:text/plain,hi"},
	{"http://example.com/a", "javascript:", "javascript:"},
	{"http://example.com/a", "tel:+1-555", "tel:+1-555"},
	{"http://example.com/a", "", ""},
	{"http://example.com/a", "  \n", ""},
	{"http://example.com/a", "http://[::1", ""},
	{"http://example.com/a", "//", ""},
	{"http://example.com/a", "http://exa mple/", ""},
	{"mailto:x@example.com", "y", ""},
	{"", "d", ""},
}

func TestResolve(t *testing.T) {
	c := New(Config{})
	for _, tc := range resolveCases {
		got, err := c.ResolveString(tc.base, tc.ref)
		if tc.want == "" {
			if err == nil {
				t.Errorf("ResolveString(%q, %q) = %q, want error", tc.base, tc.ref, got.String)
			}
			continue
		}
		if err != nil {
			t.Errorf("ResolveString(%q, %q): %v", tc.base, tc.ref, err)
			continue
		}
		if got.String != tc.want {
			t.Errorf("ResolveString(%q, %q) = %q, want %q", tc.base, tc.ref, got.String, tc.want)
		}
		checkIdempotent(t, c, got)

		// Resolving against the canonical base must agree.
		base, err := c.Parse(tc.base)
		if err != nil {
			t.Errorf("Parse(%q): %v", tc.base, err)
			continue
		}
		got2, err := c.Resolve(base, tc.ref)
		if err != nil || got2 != got {
			t.Errorf("Resolve(%q, %q) = %+v, %v; want %+v", base.String, tc.ref, got2, err, got)
		}
		b, err := c.NewBase(tc.base)
		if err != nil {
			t.Errorf("NewBase(%q): %v", tc.base, err)
			continue
		}
		// Twice: a Base must not change when used.
		for range 2 {
			if got3, err := b.Resolve(tc.ref); err != nil || got3 != got {
				t.Errorf("NewBase(%q).Resolve(%q) = %+v, %v; want %+v", tc.base, tc.ref, got3, err, got)
			}
		}
	}
}

func TestZeroBase(t *testing.T) {
	if u, err := New(Config{}).Resolve(URL{}, "/a"); err == nil {
		t.Errorf("Resolve(URL{}, \"/a\") = %q, want error", u.String)
	}
}

func checkIdempotent(t *testing.T, c *Canonicalizer, u URL) {
	t.Helper()
	again, err := c.Parse(u.String)
	if err != nil {
		t.Errorf("Parse(%q) of a canonical URL: %v", u.String, err)
		return
	}
	if again != u {
		t.Errorf("not idempotent:\n first %+v\nsecond %+v", u, again)
	}
}

func TestParts(t *testing.T) {
	c := New(Config{})
	tests := []struct {
		in        string
		want      URL
		pathQuery string
	}{
		{
			"HTTPS://User@Example.COM:8443/a/b;sid=1?utm_source=x&z=1&a=2#f",
			URL{
				String: "https://example.com:8443/a/b?a=2&z=1", Scheme: "https",
				Host: "example.com", Port: "8443", Authority: "example.com:8443",
				Path: "/a/b", Query: "a=2&z=1", NQuery: 2,
			},
			"/a/b?a=2&z=1",
		},
		{
			"http://[::1]:80",
			URL{
				String: "http://[::1]/", Scheme: "http", Host: "[::1]",
				Authority: "[::1]", Path: "/",
			},
			"/",
		},
		{
			"http://example.com/?a&a&b=",
			URL{
				String: "http://example.com/?a&a&b=", Scheme: "http", Host: "example.com",
				Authority: "example.com", Path: "/", Query: "a&a&b=", NQuery: 3,
			},
			"/?a&a&b=",
		},
		{
			"mailto:a@example.com?subject=hi",
			URL{
				String: "mailto:a@example.com?subject=hi", Scheme: "mailto",
				Path: "a@example.com", Query: "subject=hi", NQuery: 1,
			},
			"a@example.com?subject=hi",
		},
	}
	for _, tc := range tests {
		got, err := c.Parse(tc.in)
		if err != nil {
			t.Errorf("Parse(%q): %v", tc.in, err)
			continue
		}
		if got != tc.want {
			t.Errorf("Parse(%q)\n got %+v\nwant %+v", tc.in, got, tc.want)
		}
		if pq := got.PathQuery(); pq != tc.pathQuery {
			t.Errorf("Parse(%q).PathQuery() = %q, want %q", tc.in, pq, tc.pathQuery)
		}
	}
}

func TestConfig(t *testing.T) {
	const in = "http://example.com/a;jsessionid=1;token=2?utm_source=x&gclid=y&ref=z&Token=t&q=1"
	tests := []struct {
		name string
		cfg  Config
		want string
	}{
		{"defaults", Config{}, "http://example.com/a;token=2?Token=t&q=1&ref=z"}, // byte order: upper case first
		{
			"nothing stripped",
			Config{StripParams: []string{}, StripParamPrefixes: []string{}, PathSessionParams: []string{}},
			"http://example.com/a;jsessionid=1;token=2?Token=t&gclid=y&q=1&ref=z&utm_source=x",
		},
		{
			"custom",
			Config{StripParams: []string{"REF"}, StripParamPrefixes: []string{"TOK"}, PathSessionParams: []string{"Token"}},
			"http://example.com/a;jsessionid=1?gclid=y&q=1&utm_source=x",
		},
	}
	for _, tc := range tests {
		got, err := New(tc.cfg).Parse(in)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if got.String != tc.want {
			t.Errorf("%s: got %q, want %q", tc.name, got.String, tc.want)
		}
	}
}

func TestDefaultStripParamsIsACopy(t *testing.T) {
	a := DefaultStripParams()
	a[0] = "changed"
	if DefaultStripParams()[0] == "changed" {
		t.Fatal("DefaultStripParams returns shared state")
	}
}

func TestErrors(t *testing.T) {
	c := New(Config{})
	_, err := c.Parse(" ")
	if !errors.Is(err, ErrEmpty) {
		t.Errorf("Parse(\" \") error %v, want ErrEmpty", err)
	}
	_, err = c.ResolveString("http://example.com/", "")
	if !errors.Is(err, ErrEmpty) {
		t.Errorf("ResolveString with empty ref: error %v, want ErrEmpty", err)
	}

	_, err = c.Parse("http://[::1/x")
	var e *Error
	if !errors.As(err, &e) || e.Op != "parse" || e.URL != "http://[::1/x" {
		t.Fatalf("Parse error = %#v, want *Error for the URL", err)
	}
	msg := err.Error()
	if !strings.HasPrefix(msg, `canon: parse "http://[::1/x": `) || strings.Contains(msg, "Error") {
		t.Errorf("message %q: want lower case, prefixed, naming the URL", msg)
	}

	_, err = c.ResolveString("http://example.com/", "http://a b/")
	if msg := err.Error(); !strings.Contains(msg, `resolve "http://a b/" against "http://example.com/"`) {
		t.Errorf("message %q does not name ref and base", msg)
	}

	long := "http://exa mple.com/" + strings.Repeat("x", 10000)
	_, err = c.Parse(long)
	if n := len(err.Error()); n > 600 {
		t.Errorf("error message for a 10 kB URL is %d bytes long", n)
	}
}

func TestLimits(t *testing.T) {
	long := "http://example.com/" + strings.Repeat("x", DefaultMaxLength)
	deep := "http://example.com/" + strings.Repeat("a/", DefaultMaxSegments)
	deepQuery := "http://example.com/?next=" + strings.Repeat("a/", DefaultMaxSegments)
	c := New(Config{})
	if _, err := c.Parse(long); !errors.Is(err, ErrTooLong) {
		t.Errorf("Parse of %d bytes: error %v, want ErrTooLong", len(long), err)
	}
	if _, err := c.ResolveString("http://example.com/", long); !errors.Is(err, ErrTooLong) {
		t.Errorf("ResolveString of %d bytes: error %v, want ErrTooLong", len(long), err)
	}
	if _, err := c.Parse(deep); !errors.Is(err, ErrTooManySegments) {
		t.Errorf("Parse of %d segments: error %v, want ErrTooManySegments", DefaultMaxSegments, err)
	}
	if _, err := c.ResolveString(deep, "x"); !errors.Is(err, ErrTooManySegments) {
		t.Errorf("ResolveString against %d segments: error %v, want ErrTooManySegments", DefaultMaxSegments, err)
	}
	if _, err := c.Parse(deepQuery); err != nil {
		t.Errorf("slashes in the query count as segments: %v", err)
	}
	if _, err := c.Parse("http://example.com/" + strings.Repeat("a/", DefaultMaxSegments-3)); err != nil {
		t.Errorf("at the segment limit: %v", err)
	}

	unlimited := New(Config{MaxLength: -1, MaxSegments: -1})
	for _, in := range []string{long, deep} {
		if _, err := unlimited.Parse(in); err != nil {
			t.Errorf("without limits: %v", err)
		}
	}
	small := New(Config{MaxLength: 20, MaxSegments: 3})
	if _, err := small.Parse("http://example.com/a"); err != nil {
		t.Errorf("within small limits: %v", err)
	}
	if _, err := small.Parse("http://example.com/a/b"); !errors.Is(err, ErrTooLong) {
		t.Errorf("beyond MaxLength 20: error %v, want ErrTooLong", err)
	}
	if _, err := small.Parse("http://e.com/a/b"); !errors.Is(err, ErrTooManySegments) {
		t.Errorf("beyond MaxSegments 3: error %v, want ErrTooManySegments", err)
	}
}

// TestConcurrent runs one Canonicalizer from many goroutines; run with -race.
func TestConcurrent(t *testing.T) {
	c := New(Config{})
	base, err := c.Parse("http://example.com/a/b?x=1")
	if err != nil {
		t.Fatal(err)
	}
	shared, err := c.NewBase("http://example.com/a/b?x=1&y=2#f")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Go(func() {
			for _, tc := range resolveCases[:20] {
				if _, err := c.Resolve(base, tc.ref); err != nil {
					t.Error(err)
				}
				if _, err := shared.Resolve(tc.ref); err != nil {
					t.Error(err)
				}
			}
			for _, tc := range parseCases[:40] {
				_, _ = c.Parse(tc.in)
			}
		})
	}
	wg.Wait()
}

func BenchmarkResolve(b *testing.B) {
	c := New(Config{})
	base, err := c.Parse("https://www.example.com/news/2024/05/article-1234.html")
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.Resolve(base, "../06/article-5678.html?page=2&utm_source=feed"); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkBaseResolve(b *testing.B) {
	c := New(Config{})
	base, err := c.NewBase("https://www.example.com/news/2024/05/article-1234.html")
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := base.Resolve("../06/article-5678.html?page=2&utm_source=feed"); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParse(b *testing.B) {
	c := New(Config{})
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.Parse("https://www.example.com/news/2024/06/article-5678.html?page=2&utm_source=feed"); err != nil {
			b.Fatal(err)
		}
	}
}

func TestSURT(t *testing.T) {
	c := New(Config{})
	// As the Internet Archive's surt library (and so pywb) keys them.
	for raw, want := range map[string]string{
		"http://www.Example.com/":                "com,example)/",
		"https://example.com:8443/a/b?z=1&a=2":   "com,example:8443)/a/b?a=2&z=1",
		"http://www.com/":                        "com)/",
		"http://www2.example.com/x":              "com,example)/x",
		"http://wwwx.example.com/x":              "com,example,wwwx)/x",
		"http://sub.www.example.co.uk/x":         "uk,co,example,www,sub)/x",
		"http://example.com/Wiki/Main_Page?Q=Up": "com,example)/wiki/main_page?q=up",
		"http://example.com/dir/":                "com,example)/dir",
		"http://127.0.0.1:8080/p":                "127.0.0.1:8080)/p",
		"http://[::1]/p":                         "[::1])/p",
		"http://h001.weft.test:37665/caf%C3%A9/": "test,weft,h001:37665)/caf%c3%a9",
	} {
		u, err := c.Parse(raw)
		if err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		if got := u.SURT(); got != want {
			t.Errorf("SURT(%s) = %q, want %q", raw, got, want)
		}
	}
}

// TestCanonicalFormTooLong (found by FuzzCanonical): input within
// MaxLength whose canonical form is longer (each invalid UTF-8 byte
// becomes %EF%BF%BD) fails with ErrTooLong, so every URL Parse returns
// parses again; Resolve likewise.
func TestCanonicalFormTooLong(t *testing.T) {
	c := New(Config{MaxLength: 1000})
	raw := "http://a.test/" + strings.Repeat("\x9f", 500)
	if _, err := c.Parse(raw); !errors.Is(err, ErrTooLong) {
		t.Errorf("Parse: %v, want ErrTooLong", err)
	}
	if _, err := c.ResolveString("http://a.test/", strings.Repeat("\x9f", 500)); !errors.Is(err, ErrTooLong) {
		t.Errorf("Resolve: %v, want ErrTooLong", err)
	}
	if u, err := c.Parse("http://a.test/" + strings.Repeat("\x9f", 100)); err != nil || len(u.String) > 1000 {
		t.Errorf("a short one: %q, %v", u.String, err)
	}
}

// BenchmarkBaseResolveForms resolves the forms of link the seeds world's
// pages are made of, against a base with a port as weft bench's hosts
// have: a path from the root, a page-relative path, the same host
// spelled absolutely and scheme-relatively, another host, a query only.
func BenchmarkBaseResolveForms(b *testing.B) {
	c := New(Config{})
	base, err := c.NewBase("http://h000.weft.test:34853/news/business/story-17.html")
	if err != nil {
		b.Fatal(err)
	}
	for _, ref := range []string{
		"/news/politics/",
		"story-18.html",
		"http://h000.weft.test:34853/news/food/",
		"//h000.weft.test:34853/news/world/#comments",
		"http://h001.weft.test:34853/news/tech/?sid=a4338c5b5433a698",
		"?page=2",
	} {
		b.Run(ref, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := base.Resolve(ref); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// A parameter dropped leaves the URL as if it had never been there.
func TestWithoutParams(t *testing.T) {
	c := New(Config{})
	for _, tc := range []struct{ in, want string }{
		{"http://a.test/p?visit=1&id=2", "http://a.test/p?id=2"},
		{"http://a.test/p?visit=1", "http://a.test/p"},
		{"http://a.test/p?visit=1&visit=2&z", "http://a.test/p?z"},
		{"http://a.test/p?id=2", "http://a.test/p?id=2"},
		{"http://a.test/p", "http://a.test/p"},
	} {
		u, err := c.Parse(tc.in)
		if err != nil {
			t.Fatal(err)
		}
		drop := func(name string) bool { return name == "visit" }
		got, dropped := u.WithoutParams(drop)
		want, err := c.Parse(tc.want)
		if err != nil {
			t.Fatal(err)
		}
		if got != want || dropped != (tc.in != tc.want) {
			t.Errorf("%s: %+v, %v; want %+v", tc.in, got, dropped, want)
		}
		if s := DropParams(u.String, drop); s != want.String {
			t.Errorf("DropParams(%s) = %s; want %s", u.String, s, want.String)
		}
	}
}
