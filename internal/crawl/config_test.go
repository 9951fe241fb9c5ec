package crawl

import (
	"reflect"
	"testing"
	"time"

	"github.com/weft-crawler/weft/internal/recrawl"
	"github.com/weft-crawler/weft/internal/scope"
)

// A zero field means the table's default, through the fields of nested
// configs one by one; what a caller set, a negative "none" and a No...
// switch are kept; applying the defaults twice changes nothing.
func TestWithDefaultsFillsZeroFieldsOnly(t *testing.T) {
	d := Defaults()
	got := Config{}.WithDefaults()
	want := d
	want.MaxActiveHosts, want.IPGap, want.InLinkBytes = 1024, time.Second/4, 4_000_000 // what follows Workers, Delay, ExpectedURLs
	if !reflect.DeepEqual(got, want) {
		t.Errorf("the zero Config with its defaults:\n%+v\nwant Defaults() and what follows from it:\n%+v", got, want)
	}
	for name, v := range map[string]any{
		"Delay": got.Delay, "MaxURLsPerHost": got.MaxURLsPerHost, "Scope.MaxDepth": got.Scope.MaxDepth,
		"Render.Mode": got.Render.Mode, "Render.MemoryMB": got.Render.MemoryMB, "Workers": got.Workers,
	} {
		if reflect.ValueOf(v).IsZero() {
			t.Errorf("%s has no default", name)
		}
	}

	cfg := Config{Delay: -1, MaxURLsPerHost: -1, Workers: 3, NoRequisites: true, NoSitemaps: true}
	cfg.Scope = scope.Config{Include: []string{"x"}, MaxDepth: -1, DenyExtensions: []string{}}
	cfg.Render.Mode = RenderNever
	cfg.Politeness.LatencyFactor = -1
	once := cfg.WithDefaults()
	if once.Delay != -1 || once.MaxURLsPerHost != -1 || once.Workers != 3 || !once.NoRequisites || !once.NoSitemaps ||
		once.Scope.MaxDepth != -1 || once.Render.Mode != RenderNever || once.Politeness.LatencyFactor != -1 {
		t.Errorf("what was set changed: %+v", once)
	}
	if len(once.Scope.DenyExtensions) != 0 || once.Scope.Include[0] != "x" {
		t.Errorf("an empty, non-nil DenyExtensions denies none, and stays so: %v", once.Scope.DenyExtensions)
	}
	if once.Scope.MaxPathRepeats != scope.DefaultMaxPathRepeats || once.Politeness.MaxBackoff != d.Politeness.MaxBackoff || once.RobotsTTL != d.RobotsTTL {
		t.Errorf("a nested config's other fields did not take their defaults: %+v", once)
	}
	if twice := once.WithDefaults(); !reflect.DeepEqual(twice, once) {
		t.Errorf("twice:\n%+v\nonce:\n%+v", twice, once)
	}
}

// What New works out from the table: the defaults that follow other
// settings, and the negative "none" of the fields whose users read zero
// as none.
func TestSetDefaultsWorksOutTheRest(t *testing.T) {
	c := Config{}
	c.setDefaults()
	if c.Delay != time.Second || c.IPGap != time.Second/4 || c.MaxActiveHosts != 1024 || c.Politeness.GiveUpAfter != 20 ||
		c.Render.Mode != RenderAuto || c.NoRequisites || c.Scope.MaxDepth != 20 || c.MaxURLsPerHost != 100_000 {
		t.Errorf("defaults: %+v", c)
	}
	c = Config{Delay: -1, MaxURLsPerHost: -1, Workers: 1000, Recrawl: &recrawl.Policy{}}
	c.Render.MemoryMB = -1
	if err := c.Validate(); err == nil {
		t.Fatal("a Config without DataDir and UserAgent is valid")
	}
	c.DataDir, c.UserAgent = t.TempDir(), "weft/test"
	if err := c.Validate(); err != nil {
		t.Fatalf("negative Delay, MaxURLsPerHost and Render.MemoryMB mean none: %v", err)
	}
	c.setDefaults()
	if c.Delay != 0 || c.IPGap != 0 || c.MaxURLsPerHost != 0 || c.Render.MemoryMB != 0 || c.MaxActiveHosts != 4000 {
		t.Errorf("the nones: %+v", c)
	}
	if c.Politeness.GiveUpAfter != -1 {
		t.Errorf("a continuous crawl gives hosts up after %d failures; want never", c.Politeness.GiveUpAfter)
	}
	if c.MaxCrawlDelay != -1 {
		t.Errorf("a continuous crawl refuses hosts asking for a Crawl-delay over %v; want none refused", c.MaxCrawlDelay)
	}
	if d := (Config{}).WithDefaults().MaxCrawlDelay; d != DefaultMaxCrawlDelay {
		t.Errorf("a crawl that ends waits for a Crawl-delay up to %v; want %v", d, DefaultMaxCrawlDelay)
	}
}
