package profile

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/weft-crawler/weft/internal/bytesize"
	"github.com/weft-crawler/weft/internal/policy"
)

// mode is a flag type the package has never heard of, as one another
// engineer may add (--render auto|always|never).
type mode string

func (m *mode) String() string { return string(*m) }
func (m *mode) Type() string   { return "mode" }
func (m *mode) Set(s string) error {
	if s != "auto" && s != "always" && s != "never" {
		return fmt.Errorf("want auto, always or never, not %q", s)
	}
	*m = mode(s)
	return nil
}

func flags() (*pflag.FlagSet, *mode) {
	fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
	fs.Duration("delay", time.Second, "")
	fs.Int("workers", 16, "")
	fs.Bool("fresh", false, "")
	fs.StringArray("include", nil, "")
	fs.String("token", "", "")
	fs.SetAnnotation("token", SecretAnnotation, []string{"x"})
	m := mode("auto")
	fs.Var(&m, "render", "")
	return fs, &m
}

// Keys reach flags through the flags' own parsers, whatever their type:
// a flag the package knows nothing of is a key as soon as it is defined.
func TestApplyAnyFlag(t *testing.T) {
	p, err := Parse("t.toml", []byte("render = \"always\"\nworkers = 4\ninclude = ['a\\.b']\ntoken = \"s3cret\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	fs, m := flags()
	if err := fs.Parse([]string{"--workers", "8"}); err != nil {
		t.Fatal(err)
	}
	if err := p.Apply(fs); err != nil {
		t.Fatal(err)
	}
	if w, _ := fs.GetInt("workers"); *m != "always" || w != 8 || !fs.Changed("render") {
		t.Errorf("render %s, workers %d (the command line's 8 wins)", *m, w)
	}
	if inc, _ := fs.GetStringArray("include"); !slices.Equal(inc, []string{`a\.b`}) {
		t.Errorf("include %q", inc)
	}
	var b strings.Builder
	if err := Print(&b, "crawl", fs, nil, nil, nil); err != nil {
		t.Fatal(err)
	}
	if out := b.String(); !strings.Contains(out, "render = \"always\"\n") || strings.Contains(out, "s3cret") || !strings.Contains(out, "# fresh = false\n") {
		t.Errorf("printed:\n%s", out)
	}
	p, _ = Parse("t.toml", []byte("\nrender = \"sometimes\"\n"))
	fs, _ = flags()
	var pe *Error
	if err := p.Apply(fs); !errors.As(err, &pe) || pe.Line != 2 || pe.Field != "render" || !strings.Contains(err.Error(), `t.toml:2: render: want auto, always or never, not "sometimes"`) {
		t.Errorf("a value the flag refuses: %v", err)
	}
}

// A policy written as a profile's table, as a --policy file's object and
// as the body of PUT /v1/policies/{host} is one policy, read by one
// schema, and refused alike.
func TestOneSchemaForProfileFileAndAPI(t *testing.T) {
	p, err := Parse("t.toml", []byte("[policies.\"a.test\"]\ncrawl_delay = \"5s\"\ndisallowed = [\"/x\"]\nmax_urls = 7\n"))
	if err != nil {
		t.Fatal(err)
	}
	set, err := p.PolicySet(policy.Limits{Delay: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	var api policy.Policy
	if err := json.Unmarshal([]byte(`{"crawl_delay": "5s", "disallowed": ["/x"], "max_urls": 7}`), &api); err != nil {
		t.Fatal(err)
	}
	file, err := policy.Parse([]byte(`{"a.test": {"crawl_delay": "5s", "disallowed": ["/x"], "max_urls": 7}}`), policy.Limits{Delay: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	fromProfile, fromFile := set.All()["a.test"], file.All()["a.test"]
	for _, q := range []policy.Policy{api, fromFile} {
		if q.Delay != fromProfile.Delay || !slices.Equal(q.Disallow, fromProfile.Disallow) || q.MaxURLs != fromProfile.MaxURLs {
			t.Errorf("profile %+v, other %+v", fromProfile, q)
		}
	}
	p, _ = Parse("t.toml", []byte("[policies.\"a.test\"]\nmax_urls = \"many\"\n"))
	_, perr := p.PolicySet(policy.Limits{})
	jerr := json.Unmarshal([]byte(`{"max_urls": "many"}`), &api)
	if perr == nil || jerr == nil || !strings.HasSuffix(perr.Error(), jerr.Error()) {
		t.Errorf("the profile's error %v should end as the API's %v", perr, jerr)
	}
}

// Boosts in a profile's table, inline or as an array of tables, are the
// policy the file's object and the API's body give; a bad factor is named
// with its line and field; printed, the table loads back alike.
func TestProfileBoosts(t *testing.T) {
	want, err := policy.Parse([]byte(`{"a.test": {"boost": 2, "boosts": [{"pattern": "/n/*", "factor": 8}, {"pattern": "/old/", "factor": 0.25}]}}`), policy.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	for _, text := range []string{
		"[policies.\"a.test\"]\nboost = 2\nboosts = [{pattern = \"/n/*\", factor = 8}, {pattern = \"/old/\", factor = 0.25}]\n",
		"[policies.\"a.test\"]\nboost = 2.0\n[[policies.\"a.test\".boosts]]\npattern = \"/n/*\"\nfactor = 8\n[[policies.\"a.test\".boosts]]\npattern = \"/old/\"\nfactor = 0.25\n",
	} {
		p, err := Parse("t.toml", []byte(text))
		if err != nil {
			t.Fatal(err)
		}
		set, err := p.PolicySet(policy.Limits{})
		if err != nil {
			t.Fatalf("%q: %v", text, err)
		}
		got, w := set.All()["a.test"], want.All()["a.test"]
		if got.Boost != w.Boost || !slices.Equal(got.Boosts, w.Boosts) {
			t.Errorf("%q: %+v, want %+v", text, got, w)
		}
		var b strings.Builder
		if err := Print(&b, "crawl", pflag.NewFlagSet("t", pflag.ContinueOnError), nil, nil, set.All()); err != nil {
			t.Fatal(err)
		}
		again, err := Parse("t.toml", []byte(b.String()))
		if err != nil {
			t.Fatalf("printed %s: %v", b.String(), err)
		}
		if set2, err := again.PolicySet(policy.Limits{}); err != nil || !slices.Equal(set2.All()["a.test"].Boosts, w.Boosts) || set2.All()["a.test"].Boost != 2 {
			t.Errorf("printed %s, read back %+v, %v", b.String(), set2.All()["a.test"], err)
		}
	}
	p, err := Parse("t.toml", []byte("[policies.\"a.test\"]\nmax_urls = 3\nboosts = [{pattern = \"/n/\", factor = 0}]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.PolicySet(policy.Limits{}); err == nil || !strings.Contains(err.Error(), `t.toml:3: policies."a.test".boosts: boosts[0].factor 0: want a factor from 0.01 to 1000`) {
		t.Errorf("a factor of 0: %v", err)
	}
}

// A size flag (package bytesize) takes a size as a string in any unit or
// as a number of bytes; a bad one is named with its file, line and key;
// printed, it is the string that loads back alike.
func TestSizeKeys(t *testing.T) {
	for text, want := range map[string]int64{
		"max-body = \"10MiB\"\n": 10 << 20, "max-body = \"500 KB\"\n": 500_000, "max-body = 65536\n": 65536, "max-body = -1\n": -1,
	} {
		fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
		var n int64
		fs.Var(bytesize.NewValueOrMinusOne(&n, 1<<20), "max-body", "")
		p, err := Parse("t.toml", []byte(text))
		if err != nil {
			t.Fatal(err)
		}
		if err := p.Apply(fs); err != nil || n != want {
			t.Errorf("%q: %d, %v; want %d", text, n, err, want)
		}
	}
	for text, why := range map[string]string{
		"\nmax-body = \"10 megs\"\n": `t.toml:2: max-body: bytesize: "10 megs" is not a size`,
		"max-body = \"10M\"\n":       `t.toml:1: max-body: bytesize: "10M": is M a power of 1000 or of 1024? write 10MB or 10MiB`,
		"max-body = 1.5\n":           `t.toml:1: max-body: want a size: a number of bytes, or a string such as "10MiB", not 1.5`,
		"max-body = true\n":          `t.toml:1: max-body: want a size`,
	} {
		fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
		var n int64
		fs.Var(bytesize.NewValue(&n, 1<<20), "max-body", "")
		p, _ := Parse("t.toml", []byte(text))
		if err := p.Apply(fs); err == nil || !strings.Contains(err.Error(), why) {
			t.Errorf("%q: %v, want %q", text, err, why)
		}
	}
	fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
	var n int64
	fs.Var(bytesize.NewValue(&n, 1<<20), "max-body", "")
	fs.Set("max-body", "64MiB")
	var b strings.Builder
	Print(&b, "crawl", fs, nil, nil, nil)
	if !strings.Contains(b.String(), "\nmax-body = \"64MiB\"\n") {
		t.Errorf("printed:\n%s", b.String())
	}
}

// TestProfileHeaders: a host's headers in a profile are the policy's, and
// a printed profile leaves them out: they are secrets.
func TestProfileHeaders(t *testing.T) {
	const secret = "s3cr3t-t0ken"
	p, err := Parse("t.toml", []byte("[policies.\"a.test\"]\nmax_urls = 7\nheaders = {X-Token = \""+secret+"\"}\n"))
	if err != nil {
		t.Fatal(err)
	}
	set, err := p.PolicySet(policy.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if h := set.All()["a.test"].Headers; h["X-Token"] != secret {
		t.Errorf("headers: %v", h)
	}
	var b strings.Builder
	if err := Print(&b, "crawl", pflag.NewFlagSet("t", pflag.ContinueOnError), nil, nil, set.All()); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), secret) || !strings.Contains(b.String(), "max_urls = 7") {
		t.Errorf("printed:\n%s", b.String())
	}
	p, _ = Parse("t.toml", []byte("[policies.\"a.test\"]\n\nheaders = {Cookie = \""+secret+"\"}\n"))
	_, err = p.PolicySet(policy.Limits{})
	if err == nil || !strings.Contains(err.Error(), `t.toml:3: policies."a.test".headers: headers: header "Cookie" cannot be set`) || strings.Contains(err.Error(), secret) {
		t.Errorf("a Cookie header: %v", err)
	}
}
