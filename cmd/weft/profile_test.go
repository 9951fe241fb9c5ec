package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeFile(t *testing.T, name, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

const shopProfile = `# a shop crawl
delay = "2s"
max-pages = 500
include = ['^https://shop\.test/(c|p)/\d+$', "say \"hi\""]
sitemaps = false
latency-factor = 2.5
reject-ext = []
urls = ["https://shop.test/", "https://shop.test/c/1"]

[policies."shop.test"]
crawl_delay = "5s"
disallowed = ["/cart/", "/*?sort="]

[policies."CDN.test:8080"]
max_urls = 200
`

// A profile round-trips: printed, loaded and printed again, the text is
// the same, and it holds the file's settings, seeds and policies; a flag
// on the command line overrides the file.
func TestProfileRoundTrip(t *testing.T) {
	for _, command := range []string{"crawl", "serve"} {
		src := shopProfile
		if command == "serve" {
			src = "recrawl-min = \"1h\"\n" + src
		}
		code, first, errOut := runWeft(t, "config", "print", command, "--config", writeFile(t, "shop.toml", src), "--workers", "4")
		if code != 0 {
			t.Fatalf("%s: config print exited %d: %s", command, code, errOut)
		}
		for _, want := range []string{
			"delay = \"2s\"\n", "max-pages = 500\n", "workers = 4\n", "sitemaps = false\n", "latency-factor = 2.5\n", "reject-ext = []\n",
			`include = ['^https://shop\.test/(c|p)/\d+$', "say \"hi\""]` + "\n",
			`urls = ["https://shop.test/", "https://shop.test/c/1"]` + "\n",
			"# max-depth = 20\n",
			"[policies.\"shop.test\"]\ncrawl_delay = \"5s\"\ndisallowed = [\"/cart/\", \"/*?sort=\"]\n",
			"[policies.\"cdn.test:8080\"]\nmax_urls = 200\n", // as URLs name the host
		} {
			if !strings.Contains(first, want) {
				t.Errorf("%s: the printed profile lacks %q:\n%s", command, want, first)
			}
		}
		if command == "serve" && !strings.Contains(first, "recrawl-min = \"1h0m0s\"\n") {
			t.Errorf("serve: recrawl-min missing:\n%s", first)
		}
		code, second, errOut := runWeft(t, "config", "print", command, "--config", writeFile(t, "printed.toml", first))
		if code != 0 {
			t.Fatalf("%s: printing the printed profile exited %d: %s", command, code, errOut)
		}
		if second != first {
			t.Errorf("%s: printed, loaded and printed again differs:\n--- first\n%s\n--- second\n%s", command, first, second)
		}
		if _, over, _ := runWeft(t, "config", "print", command, "--config", writeFile(t, "printed.toml", first), "--delay", "3s", "https://other.test/"); !strings.Contains(over, "delay = \"3s\"\n") ||
			!strings.Contains(over, `urls = ["https://other.test/"]`) {
			t.Errorf("%s: the command line should override the file's delay and seeds:\n%s", command, over)
		}
	}
}

// A --policy JSON file and a profile's tables are one schema: the file's
// policies print as tables, which load back to the same policies.
func TestPolicyFileBecomesProfileTables(t *testing.T) {
	js := writeFile(t, "policies.json", `{"a.test": {"crawl_delay": "5s", "disallowed": ["/x"]}, "b.test:8080": {"max_urls": 9}}`)
	code, printed, errOut := runWeft(t, "config", "print", "--policy", js)
	if code != 0 {
		t.Fatal(errOut)
	}
	if strings.Contains(printed, "\npolicy = ") || !strings.Contains(printed, "[policies.\"a.test\"]\ncrawl_delay = \"5s\"\ndisallowed = [\"/x\"]\n") ||
		!strings.Contains(printed, "[policies.\"b.test:8080\"]\nmax_urls = 9\n") {
		t.Errorf("the policy file, printed:\n%s", printed)
	}
	_, again, _ := runWeft(t, "config", "print", "--config", writeFile(t, "p.toml", printed))
	if again != printed {
		t.Errorf("the tables did not load back alike:\n%s\n---\n%s", printed, again)
	}
}

// Every fault of a profile is reported with its file, line and key, and
// exits 2, whether the TOML, the flag's parser, a policy or the checks of
// the crawl's settings find it.
func TestBadProfiles(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		line       int
		field      string
		reason     string
	}{
		{"syntax", "delay = \"2s\"\nworkers = \n", 2, "(document)", "unexpected character"},
		{"same key twice", "delay = \"2s\"\n\ndelay = \"3s\"\n", 3, "delay", "already defined"},
		{"no such flag", "# x\n\ndelya = \"2s\"\n", 3, "delya", "no such setting"},
		{"a number as a string", "max-pages = \"ten\"\n", 1, "max-pages", `want a whole number, not the string "ten"`},
		{"a duration's syntax", "\ndelay = \"2 seconds\"\n", 2, "delay", `in duration "2 seconds"`},
		{"a duration as a number", "delay = 2\n", 1, "delay", `want a duration in a string, such as "1m30s", not a number`},
		{"a list for a number", "workers = [1]\n", 1, "workers", "want a whole number"},
		{"a string for a list", "include = \"x\"\n", 1, "include", "want a list of strings"},
		{"a fraction for a count", "workers = 1.5\n", 1, "workers", "want a whole number, not 1.5"},
		{"a table for a flag", "urls = [\"http://a.test/\"]\n[delay]\nx = 1\n", 2, "delay", "a flag's value is not a table"},
		{"urls not a list", "urls = \"http://a.test/\"\n", 1, "urls", "want a list of URLs"},
		{"the profile names a profile", "config = \"other.toml\"\n", 1, "config", "cannot be set in a profile"},
		{"a value the crawl refuses", "urls = [\"http://a.test/\"]\nworkers = 0\n", 2, "workers", "--workers 0: must be at least 1"},
		{"a threshold out of range", "urls = [\"http://a.test/\"]\n\nnear-dup-threshold = 50\n", 3, "near-dup-threshold", "want 1 to 11 bits"},
		{"a bad seed", "urls = [\"ftp://a.test/\"]\n", 1, "urls", `scheme "ftp"`},
		{"a policy's unknown field", "urls = [\"http://a.test/\"]\n[policies.\"a.test\"]\ncrawl_delay = \"5s\"\nallow = [\"/\"]\n", 4, `policies."a.test".allow`, `unknown field "allow"`},
		{"a policy's type", "urls = [\"http://a.test/\"]\n[policies.\"a.test\"]\nmax_urls = \"many\"\n", 3, `policies."a.test".max_urls`, `max_urls "many": want a whole number of URLs`},
		{"a policy looser than the crawl", "urls = [\"http://a.test/\"]\ndelay = \"2s\"\n[policies.\"a.test\"]\n\ncrawl_delay = \"1s\"\n", 5, `policies."a.test".crawl_delay`, "shorter than the crawl's delay 2s"},
		{"a policy's pattern", "urls = [\"http://a.test/\"]\n[policies.\"a.test\"]\ndisallowed = [\"private\"]\n", 3, `policies."a.test".disallowed`, `disallowed[0] "private": want a path pattern`},
		{"a policy for a URL", "urls = [\"http://a.test/\"]\n\n[policies.\"http://a.test/\"]\nmax_urls = 5\n", 3, `policies."http://a.test/"`, "is not a host name"},
		{"one host twice", "urls = [\"http://a.test/\"]\n[policies.\"a.test\"]\nmax_urls = 5\n[policies.\"A.TEST\"]\nmax_urls = 6\n", 4, `policies."A.TEST"`, "a second policy for a.test"},
		{"policies not tables", "urls = [\"http://a.test/\"]\npolicies = 5\n", 2, "policies", "want tables of policies by host"},
	} {
		file := writeFile(t, "bad.toml", tc.text)
		code, _, errOut := runWeft(t, "crawl", "--config", file, "--data", t.TempDir())
		want := fmt.Sprintf("%s:%d: %s: ", file, tc.line, tc.field)
		if code != 2 || !strings.Contains(errOut, want) || !strings.Contains(errOut, tc.reason) {
			t.Errorf("%s: exit %d, %q; want exit 2 and %q ... %q", tc.name, code, errOut, want, tc.reason)
		}
	}
	// Per-host policies in two places are refused.
	js := writeFile(t, "p.json", `{"b.test": {"max_urls": 5}}`)
	file := writeFile(t, "p.toml", "urls = [\"http://a.test/\"]\n[policies.\"a.test\"]\nmax_urls = 5\n")
	if code, _, errOut := runWeft(t, "crawl", "--config", file, "--policy", js, "--data", t.TempDir()); code != 2 || !strings.Contains(errOut, "give per-host policies in one place") {
		t.Errorf("--policy with [policies]: exit %d, %s", code, errOut)
	}
	if code, _, errOut := runWeft(t, "crawl", "--config", filepath.Join(t.TempDir(), "missing.toml")); code != 2 || !strings.Contains(errOut, "missing.toml") {
		t.Errorf("a missing profile: exit %d, %s", code, errOut)
	}
}
