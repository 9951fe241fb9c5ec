package settings

import (
	"encoding/pem"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/weft-crawler/weft/internal/crawl"
	"github.com/weft-crawler/weft/internal/plugin"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// valid is the least Config that converts.
func valid(t *testing.T) Config {
	return Config{Seeds: []string{"http://a.test/"}, DataDir: t.TempDir(), UserAgent: "weft/test"}
}

// Each field of a Config reaches the crawl's: set to a value other than
// its zero, it changes the Config Crawl returns. A field added to Config
// and not to Crawl fails here.
func TestEveryFieldReachesTheCrawl(t *testing.T) {
	dir := t.TempDir()
	srv := httptest.NewTLSServer(nil)
	ca := filepath.Join(dir, "ca.pem")
	err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o644)
	srv.Close()
	if err != nil {
		t.Fatal(err)
	}
	policies := filepath.Join(dir, "policies.json")
	if err := os.WriteFile(policies, []byte(`{"a.test": {"crawl_delay": "5s"}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	cookies := filepath.Join(dir, "cookies.txt")
	if err := os.WriteFile(cookies, []byte("a.test\tFALSE\t/\tFALSE\t0\tsid\tv\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	scope := plugin.ScopeFunc(func(*url.URL) bool { return true })
	// A value of each field other than its zero, where its kind's (below)
	// will not do; fields that only work together are set together.
	values := map[string]func(*Config){
		"ScopeMode":     func(c *Config) { c.ScopeMode = "host" },
		"Scope":         func(c *Config) { c.Scope = scope },
		"RenderMode":    func(c *Config) { c.RenderMode = crawl.RenderAlways },
		"RenderMemory":  func(c *Config) { c.RenderMemory = 64 << 20 },
		"IPGroup":       func(c *Config) { c.IPGroup = crawl.IPGroupSubnet },
		"CAFiles":       func(c *Config) { c.CAFiles = []string{ca} },
		"InsecureTLS":   func(c *Config) { c.InsecureTLS = []string{"a.test"} },
		"PolicyFile":    func(c *Config) { c.PolicyFile = policies },
		"CookiesFile":   func(c *Config) { c.CookiesFile = cookies },
		"Headers":       func(c *Config) { c.Headers = http.Header{"X-Token": {"t"}} },
		"Include":       func(c *Config) { c.Include = []string{"a"} },
		"Exclude":       func(c *Config) { c.Exclude = []string{"b"} },
		"AllowNetworks": func(c *Config) { c.AllowNetworks = []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")} },
		"DenyNetworks":  func(c *Config) { c.DenyNetworks = []netip.Prefix{netip.MustParsePrefix("10.1.0.0/16")} },
		"Resolve":       func(c *Config) { c.Resolve = map[string]string{"a.test": "127.0.0.9"} },
		"AcceptMIME":    func(c *Config) { c.AcceptMIME = []string{"text/html"} },
		"RejectMIME":    func(c *Config) { c.RejectMIME = []string{"image/*"} },
		"MaxBodyFor":    func(c *Config) { c.MaxBodyFor = map[string]int64{"text/html": 1 << 20} },
		"MaxBodyBytes":  func(c *Config) { c.MaxBodyBytes = 1 << 20 },
		"SeedOptions":   func(c *Config) { c.SeedOptions = map[string]SeedOptions{c.Seeds[0]: {MaxPages: 5, Scope: "host"}} },
		"DNSMaxTTL":     func(c *Config) { c.DNSMaxTTL = 2 * time.Hour },
		"Filters": func(c *Config) {
			c.Filters = []plugin.LinkFilter{plugin.LinkFilterFunc(func(plugin.Link) string { return "" })}
		},
		"Handlers": func(c *Config) {
			c.Handlers = []plugin.Handler{plugin.HandlerFunc("h", func(*plugin.Response) (plugin.Result, error) { return plugin.Result{}, nil })}
		},
		"Consumers": func(c *Config) {
			c.Consumers = []plugin.Consumer{plugin.ConsumerFunc(func(*plugin.Page) error { return nil })}
		},
		"Logger":     func(c *Config) { c.Logger = slog.New(slog.DiscardHandler) },
		"DedupFrom":  func(c *Config) { c.DedupFrom = []string{os.TempDir()} }, // found when the Config is checked
		"S3Endpoint": func(c *Config) { c.S3Endpoint, c.S3Bucket = "http://127.0.0.1:1", "b" },
		"S3Bucket":   func(c *Config) { c.S3Endpoint, c.S3Bucket = "http://127.0.0.1:1", "b" },
		"S3Prefix":   func(c *Config) { c.S3Endpoint, c.S3Bucket, c.S3Prefix = "http://127.0.0.1:1", "b", "p/" },
		"S3Region":   func(c *Config) { c.S3Endpoint, c.S3Bucket, c.S3Region = "http://127.0.0.1:1", "b", "r" },
		"S3AccessKey": func(c *Config) {
			c.S3Endpoint, c.S3Bucket, c.S3AccessKey, c.S3SecretKey = "http://127.0.0.1:1", "b", "k", "s"
		},
		"S3SecretKey": func(c *Config) {
			c.S3Endpoint, c.S3Bucket, c.S3AccessKey, c.S3SecretKey = "http://127.0.0.1:1", "b", "k", "s"
		},
	}
	// Requisites is deprecated: it asks for what is done anyway.
	same := map[string]bool{"Requisites": true}
	// S3 keys only reach the store's client, which the crawl holds whole.
	base := map[string]func(*Config){
		"S3Prefix": values["S3Endpoint"], "S3Region": values["S3Endpoint"], "S3AccessKey": values["S3Endpoint"], "S3SecretKey": values["S3Endpoint"],
	}
	for f := range reflect.TypeFor[Config]().Fields() {
		t.Run(f.Name, func(t *testing.T) {
			def, cfg := valid(t), valid(t)
			def.DataDir = cfg.DataDir
			if b := base[f.Name]; b != nil {
				b(&def)
				b(&cfg)
			}
			if set := values[f.Name]; set != nil {
				set(&cfg)
			} else {
				v := reflect.ValueOf(&cfg).Elem().FieldByIndex(f.Index)
				switch v.Kind() {
				case reflect.Bool:
					v.SetBool(true)
				case reflect.Int, reflect.Int64:
					if v.Type() == reflect.TypeFor[time.Duration]() {
						v.SetInt(int64(7 * time.Second))
					} else {
						v.SetInt(7)
					}
				case reflect.Uint:
					v.SetUint(7)
				case reflect.Float64:
					v.SetFloat(7)
				case reflect.String:
					v.SetString("x")
				case reflect.Slice:
					v.Set(reflect.ValueOf([]string{"x"}))
				default:
					t.Fatalf("no value to try for a %s", v.Type())
				}
			}
			was, err := Crawl(def)
			if err != nil {
				t.Fatal(err)
			}
			is, err := Crawl(cfg)
			if err != nil {
				t.Fatal(err)
			}
			was.Logger, is.Logger = nil, nil // set by Logger alone
			if f.Name == "Logger" {
				was.Logger, is.Logger = def.Logger, cfg.Logger
			}
			switch changed := !reflect.DeepEqual(was, is); {
			case !changed && !same[f.Name]:
				t.Errorf("%s, set, changes nothing in the crawl's Config: Crawl does not pass it on", f.Name)
			case changed && same[f.Name]:
				t.Errorf("%s, set, changes the crawl's Config", f.Name)
			}
		})
	}
}

// What a Config spells differently from the crawl's: none and off.
func TestNoneAndOff(t *testing.T) {
	cfg := valid(t)
	cfg.DNSMinTTL, cfg.RenderMemory, cfg.NoRequisites = -1, -1, true
	cc, err := Crawl(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if cc.Fetch.DNSMinTTL != time.Nanosecond || cc.Render.MemoryMB != -1 || !cc.NoRequisites {
		t.Errorf("DNSMinTTL %v, MemoryMB %d, NoRequisites %v: want no floor, V8's heap, none", cc.Fetch.DNSMinTTL, cc.Render.MemoryMB, cc.NoRequisites)
	}
	cc, err = Crawl(valid(t))
	if err != nil {
		t.Fatal(err)
	}
	if d := cc.WithDefaults(); d.Delay != crawl.DefaultDelay || d.Scope.MaxDepth != 20 || d.NoRequisites || d.Render.Mode != crawl.RenderAuto {
		t.Errorf("the zero Config's crawl: delay %v, depth %d, no requisites %v, render %q; want the command's defaults", d.Delay, d.Scope.MaxDepth, d.NoRequisites, d.Render.Mode)
	}
}

// A bad setting is an error that names its field.
func TestBadSettingsNameTheField(t *testing.T) {
	for _, tc := range []struct {
		mod    func(*Config)
		fields string
		want   string
	}{
		{func(c *Config) { c.ScopeMode = "galaxy" }, "ScopeMode", "galaxy"},
		{func(c *Config) { c.ScopeMode, c.Scope = "host", plugin.ScopeFunc(func(*url.URL) bool { return true }) }, "Scope, ScopeMode", "give one"},
		{func(c *Config) { c.Requisites, c.NoRequisites = true, true }, "Requisites, NoRequisites", "give one"},
		{func(c *Config) { c.RenderMemory = 512 }, "RenderMemory", "under 1 MiB"},
		{func(c *Config) { c.AcceptMIME = []string{"html"} }, "AcceptMIME, RejectMIME, MaxBodyFor", "html"},
		{func(c *Config) { c.S3Bucket = "b" }, "S3Endpoint, S3Bucket", "no endpoint"},
		{func(c *Config) { c.PolicyFile = "/nonexistent/p.json" }, "PolicyFile", "p.json"},
		{func(c *Config) { c.CookiesFile = "/nonexistent/c.txt" }, "CookiesFile", "c.txt"},
		{func(c *Config) { c.Headers = http.Header{"Cookie": {"sid=v"}} }, "Headers", `"Cookie" cannot be set`},
		{func(c *Config) { c.CAFiles = []string{"/nonexistent/ca.pem"} }, "CAFiles", "ca.pem"},
	} {
		cfg := valid(t)
		tc.mod(&cfg)
		_, err := Crawl(cfg)
		var fe *FieldError
		if !errors.As(err, &fe) || strings.Join(fe.Fields, ", ") != tc.fields || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one of fields %s that says %q", tc.fields, err, tc.fields, tc.want)
		}
	}
}

// TestBadSeedOptionsNameTheField: a seed's invalid limits are an error
// naming SeedOptions, the seed and what is wrong.
func TestBadSeedOptionsNameTheField(t *testing.T) {
	cfg := valid(t)
	cfg.SeedOptions = map[string]SeedOptions{"http://a.test/": {Scope: "site"}}
	_, err := Crawl(cfg)
	var fe *FieldError
	if !errors.As(err, &fe) || !slices.Equal(fe.Fields, []string{"SeedOptions"}) || !strings.Contains(err.Error(), `http://a.test/: seeds: scope "site"`) {
		t.Errorf("error %v, want a FieldError of SeedOptions naming the seed and its scope", err)
	}
}
