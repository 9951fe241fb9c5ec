package fetch

import (
	"math"
	"net/netip"
	"strings"
	"testing"
	"time"
)

func TestValidate(t *testing.T) {
	valid := Config{UserAgent: "weft/1"}
	if err := valid.Validate(); err != nil {
		t.Fatalf("minimal config: %v", err)
	}
	for _, tc := range []struct {
		field string // must appear in the error, with the value
		value string
		mod   func(*Config)
	}{
		{"UserAgent", `""`, func(c *Config) { c.UserAgent = "" }},
		{"UserAgent", `"a\r\nb"`, func(c *Config) { c.UserAgent = "a\r\nb" }},
		{"ConnectTimeout", "-1s", func(c *Config) { c.ConnectTimeout = -time.Second }},
		{"TLSHandshakeTimeout", "-1ns", func(c *Config) { c.TLSHandshakeTimeout = -1 }},
		{"ResponseHeaderTimeout", "-1ms", func(c *Config) { c.ResponseHeaderTimeout = -time.Millisecond }},
		{"IdleTimeout", "-2s", func(c *Config) { c.IdleTimeout = -2 * time.Second }},
		{"Timeout", "-1m0s", func(c *Config) { c.Timeout = -time.Minute }},
		{"DNSCacheTTL", "-1s", func(c *Config) { c.DNSCacheTTL = -time.Second }},
		{"DNSNegativeTTL", "-1s", func(c *Config) { c.DNSNegativeTTL = -time.Second }},
		{"MaxBodyBytes", "-5", func(c *Config) { c.MaxBodyBytes = -5 }},
		{"MaxBodyBytes", "9223372036854775807", func(c *Config) { c.MaxBodyBytes = math.MaxInt64 }},
		{"MaxHeaderBytes", "-1", func(c *Config) { c.MaxHeaderBytes = -1 }},
		{"MaxConnsPerHost", "-3", func(c *Config) { c.MaxConnsPerHost = -3 }},
		{"MaxIdleConns", "-1", func(c *Config) { c.MaxIdleConns = -1 }},
		{"Resolve", `"not-an-ip"`, func(c *Config) { c.Resolve = map[string]string{"h.test": "not-an-ip"} }},
		{"Resolve", `""`, func(c *Config) { c.Resolve = map[string]string{"": "127.0.0.1"} }},
		{"AllowCIDRs[1]", "invalid Prefix", func(c *Config) { c.AllowCIDRs = []netip.Prefix{loopback[0], {}} }},
	} {
		c := valid
		tc.mod(&c)
		err := c.Validate()
		if err == nil {
			t.Errorf("%s %s: no error", tc.field, tc.value)
			continue
		}
		if msg := err.Error(); !strings.Contains(msg, "Config."+tc.field) || !strings.Contains(msg, tc.value) {
			t.Errorf("%s %s: error %q does not name the field and value", tc.field, tc.value, msg)
		}
		if _, err := New(c); err == nil {
			t.Errorf("%s: New accepted an invalid config", tc.field)
		}
	}
}

func TestDefaults(t *testing.T) {
	c := Config{UserAgent: "x", Resolve: map[string]string{"a": "127.0.0.1"}}.withDefaults()
	if c.ConnectTimeout != 10*time.Second || c.TLSHandshakeTimeout != 10*time.Second ||
		c.ResponseHeaderTimeout != 15*time.Second || c.IdleTimeout != 15*time.Second ||
		c.Timeout != 60*time.Second || c.MaxBodyBytes != 10<<20 || c.MaxHeaderBytes != 1<<20 ||
		c.DNSCacheTTL != 5*time.Minute || c.DNSNegativeTTL != 30*time.Second || c.MaxConnsPerHost != 2 {
		t.Errorf("defaults = %+v", c)
	}
}

// The Fetcher keeps its own copy of the Config's maps.
func TestConfigCopied(t *testing.T) {
	srv := newRawServer(t, "tcp", "127.0.0.1:0", okServer)
	_, port, _ := strings.Cut(srv.addr(), ":")
	cfg := testConfig()
	cfg.Resolve = map[string]string{"h.test": "127.0.0.1"}
	f := newFetcher(t, cfg)
	cfg.Resolve["h.test"] = "127.0.0.99"
	cfg.AllowCIDRs[0] = netip.MustParsePrefix("10.0.0.0/8") // loopback is shared: restore below
	defer func() { cfg.AllowCIDRs[0] = netip.MustParsePrefix("127.0.0.0/8") }()
	if r := get(t, f, "http://h.test:"+port+"/"); string(r.Body) != "ok" {
		t.Errorf("Body %q", r.Body)
	}
}
