package fetch

import (
	"fmt"
	"net/netip"
	"strings"
	"testing"

	"github.com/weft-crawler/weft/internal/canon"
)

// A Resolve name is matched in the form a canonical URL gives its host: the
// conversion must agree with the canonicaliser's for every name it takes.
func TestResolveKeyAgreesWithCanon(t *testing.T) {
	c := canon.New(canon.Config{})
	for _, tc := range []struct{ name, want string }{
		{"bücher.test", "xn--bcher-kva.test"},
		{"BÜCHER.Test", "xn--bcher-kva.test"},
		{"faß.de", "xn--fa-hia.de"}, // non-transitional, as browsers: not "fass.de"
		{"ＡＢＣ.test", "abc.test"},    // full-width letters are mapped
		{"例え.テスト", "xn--r8jz45g.xn--zckzah"},
		{"münchen.de.", "xn--mnchen-3ya.de"},
		{"xn--bcher-kva.test", "xn--bcher-kva.test"},
		{"A.Test", "a.test"},
		{"a_b.test", "a_b.test"}, // not a DNS name, but one a URL may carry
	} {
		got, err := ResolveKey(tc.name)
		if err != nil || got != tc.want {
			t.Errorf("ResolveKey(%q) = %q, %v; want %q", tc.name, got, err, tc.want)
			continue
		}
		u, err := c.Parse("http://" + tc.name + ":8080/")
		if err != nil || u.Host != got {
			t.Errorf("%q: the canonicaliser makes host %q (err %v), ResolveKey %q", tc.name, u.Host, err, got)
		}
	}
}

// A name that cannot be converted is refused, by name, in ResolveKey and in
// Config.Validate; two spellings of one name with different addresses too.
func TestResolveKeyRefuses(t *testing.T) {
	for _, name := range []string{"", ".", "xn--zz.test", "\u200d.test", "x.\u0663", "a.test:8080", "a b.test", "a/b.test", "a%41.test", "\xc3.test", "Xn--", "10.0.0.1", "0x7f.1", "a.0"} {
		if got, err := ResolveKey(name); err == nil {
			t.Errorf("ResolveKey(%q) = %q, want an error", name, got)
		}
		cfg := testConfig()
		cfg.Resolve = map[string]string{name: "127.0.0.5"}
		if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "Config.Resolve key") || !strings.Contains(err.Error(), fmt.Sprintf("%q", name)) {
			t.Errorf("Validate with Resolve key %q: %v", name, err)
		}
	}
	cfg := testConfig()
	cfg.Resolve = map[string]string{"bücher.test": "127.0.0.5", "BÜCHER.test": "127.0.0.6"}
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "xn--bcher-kva.test") {
		t.Errorf("two spellings of one host with two addresses: %v", err)
	}
	cfg.Resolve["BÜCHER.test"] = "127.0.0.5"
	if err := cfg.Validate(); err != nil {
		t.Errorf("two spellings of one host with one address: %v", err)
	}
}

func isIP(host string) bool {
	_, err := netip.ParseAddr(strings.Trim(host, "[]"))
	return err == nil
}

// A name given in Unicode pins the host its URLs name in punycode.
func TestResolveInternationalName(t *testing.T) {
	srv := newRawServer(t, "tcp", "127.0.0.5:0", okServer)
	_, port, _ := strings.Cut(srv.addr(), ":")
	cfg := testConfig()
	cfg.Resolve = map[string]string{"Bücher.test": "127.0.0.5"}
	f := newFetcher(t, cfg)
	if r := get(t, f, "http://xn--bcher-kva.test:"+port+"/"); string(r.Body) != "ok" {
		t.Errorf("Body %q", r.Body)
	}
	if err := f.Permits("xn--bcher-kva.test"); err != nil {
		t.Errorf("Permits: %v", err)
	}
}

// FuzzResolveKey: any name either is refused or comes out as an ASCII,
// lower-case name that converts to itself, and that is the host the
// canonicaliser gives a URL of the name, when that host is a name (the URL
// parser reads some odd ones, "0+0", as IPv4 addresses: no URL then has
// the name for its host, and the entry is never used).
func FuzzResolveKey(f *testing.F) {
	for _, s := range []string{"bücher.test", "BÜCHER.Test.", "a_b.test", "faß.de", "xn--zz.test", "a.test:80", "例え.テスト", "..", "1.2.3.4", "[::1]"} {
		f.Add(s)
	}
	c := canon.New(canon.Config{})
	f.Fuzz(func(t *testing.T, name string) {
		key, err := ResolveKey(name)
		if err != nil {
			return
		}
		if !isASCII(key) || strings.ToLower(key) != key || key == "" {
			t.Fatalf("ResolveKey(%q) = %q: not a lower-case ASCII name", name, key)
		}
		if again, err := ResolveKey(key); err != nil || again != key {
			t.Fatalf("ResolveKey(%q) = %q, but ResolveKey(%q) = %q, %v", name, key, key, again, err)
		}
		if u, err := c.Parse("http://" + name + "/"); err == nil && !isIP(u.Host) && u.Host != key {
			t.Fatalf("ResolveKey(%q) = %q, but a URL of it has host %q", name, key, u.Host)
		}
	})
}
