package synthweb

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestValidate(t *testing.T) {
	if err := (Config{}).Validate(); err != nil {
		t.Fatalf("zero Config: %v", err)
	}
	tests := []struct {
		cfg  Config
		want string // the field the error must name
	}{
		{Config{Hosts: -1}, "Hosts -1"},
		{Config{PagesPerHost: -3}, "PagesPerHost -3"},
		{Config{MinLinks: 5}, "MinLinks 5"},
		{Config{MinLinks: 50, MaxLinks: 45}, "MaxLinks 45"},
		{Config{MinPageBytes: 70 << 10}, "MaxPageBytes 61440"},
		{Config{MinPageBytes: 4096}, "MinPageBytes 4096"},
		{Config{CrossHostFraction: 1.5}, "CrossHostFraction 1.5"},
		{Config{CrossHostFraction: math.NaN()}, "CrossHostFraction NaN"},
		{Config{MaxLatency: -time.Second}, "MaxLatency -1s"},
		{Config{CrawlDelay: -time.Second}, "CrawlDelay -1s"},
		{Config{HangLimit: -time.Second}, "HangLimit -1s"},
		{Config{DripInterval: -time.Second}, "DripInterval -1s"},
		{Config{HostileKinds: []string{HostileHang, "tarpit"}}, `HostileKinds[1] "tarpit"`},
		{Config{HostileKinds: []string{TrapDeep, HostileHang, TrapDeep}}, `HostileKinds[2] "deep" is named twice`},
		{Config{RobotsKinds: []RobotsKind{RobotsRules, 99}}, "RobotsKinds[1] 99"},
		{Config{Domain: "Weft.Test"}, `Domain "Weft.Test"`},
		{Config{Domain: "a..b"}, `Domain "a..b"`},
		{Config{IPPrefix: "10.0.0."}, `IPPrefix "10.0.0."`},
		{Config{IPPrefix: "127.0.1"}, `IPPrefix "127.0.1"`},
		{Config{IPPrefix: "127.0.255.", Hosts: 300}, `IPPrefix "127.0.255."`},
	}
	for _, tc := range tests {
		err := tc.cfg.Validate()
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "synthweb: ") {
			t.Errorf("Validate(%+v) = %v, want an error naming %q", tc.cfg, err, tc.want)
		}
		if _, err := Start(tc.cfg); err == nil {
			t.Errorf("Start(%+v) succeeded", tc.cfg)
		}
	}
}

func TestHostsAndAddressing(t *testing.T) {
	t.Parallel()
	cfg := Config{Seed: 1, Hosts: 256, PagesPerHost: 1, Hostile: true, MaxLatency: 50 * time.Millisecond}
	w := startWeb(t, cfg)
	hosts := w.Hosts()
	nh := len(HostileKindsAll())
	if len(hosts) != 256+nh || len(w.Seeds()) != 256 || len(w.HostileSeeds()) != nh {
		t.Fatalf("%d hosts, %d seeds, %d hostile seeds", len(hosts), len(w.Seeds()), len(w.HostileSeeds()))
	}
	res := w.Resolve()
	for i, h := range hosts {
		wantIP := fmt.Sprintf("127.0.%d.%d", 1+i/254, i%254+1)
		ip, port, _ := net.SplitHostPort(h.Addr)
		if ip != wantIP || res[h.Name] != wantIP || h.Authority != h.Name+":"+port {
			t.Errorf("host %d: %+v, resolve %s, want IP %s", i, h, res[h.Name], wantIP)
		}
		if i < 256 {
			if h.Name != fmt.Sprintf("h%03d.weft.test", i) || h.Hostile != "" || w.Seeds()[i] != "http://"+h.Authority+"/" {
				t.Errorf("host %d: %+v", i, h)
			}
			if h.Latency < 0 || h.Latency > cfg.MaxLatency {
				t.Errorf("host %d: latency %v", i, h.Latency)
			}
		}
	}
	// The first four hostile hosts keep their places (and addresses).
	if k := HostileKindsAll(); !slices.Equal(k[:4], []string{HostileGzipBomb, HostileEndless, HostileSilent, HostileCopies}) {
		t.Errorf("HostileKindsAll starts %v", k[:4])
	}
	for i, name := range HostileKindsAll() {
		if h := hosts[256+i]; h.Hostile != name || h.Name != name+".weft.test" || w.HostileSeeds()[i] != "http://"+h.Authority+"/" {
			t.Errorf("hostile %d: %+v", i, h)
		}
	}
	// PagesPerHost 1 still gives each host its fixed features.
	if n := len(w.AllPages()); n < 256*minPages {
		t.Errorf("%d pages for 256 hosts", n)
	}
}

// normalise blanks the port numbers of default-domain authorities (either
// case) so that two webs can be compared byte for byte.
func normalise(s []byte) []byte {
	s = bytes.Clone(s)
	for _, marker := range []string{".weft.test:", ".WEFT.TEST:"} {
		for i := 0; ; {
			j := bytes.Index(s[i:], []byte(marker))
			if j < 0 {
				break
			}
			i += j + len(marker)
			for ; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
				s[i] = 'P'
			}
		}
	}
	return s
}

func TestDeterminism(t *testing.T) {
	t.Parallel()
	cfg := smallConfig()
	cfg.MaxLatency = time.Second
	cfg.MinPageBytes, cfg.MaxPageBytes = 10<<10, 20<<10
	a, b := startWeb(t, cfg), startWeb(t, cfg)
	cfg.Seed++
	c := startWeb(t, cfg)
	pa, pb, pc := a.AllPages(), b.AllPages(), c.AllPages()
	sameLen := true
	for i := range a.Hosts() {
		ha, hb := a.Hosts()[i], b.Hosts()[i]
		sameLen = sameLen && len(ha.Authority) == len(hb.Authority)
		ha.Authority, ha.Addr, hb.Authority, hb.Addr = "", "", "", ""
		if ha != hb {
			t.Errorf("host %d: %+v vs %+v", i, ha, hb)
		}
	}
	if len(pa) != len(pb) {
		t.Fatalf("%d vs %d pages", len(pa), len(pb))
	}
	for i := range pa {
		ja, jb := normalise(fmt.Appendf(nil, "%+v", pa[i])), normalise(fmt.Appendf(nil, "%+v", pb[i]))
		if !bytes.Equal(ja, jb) {
			t.Fatalf("page %d differs:\n%s\n%s", i, ja, jb)
		}
		ba, bb := a.Body(pa[i].URL), b.Body(pb[i].URL)
		if len(ba) != len(bb) {
			t.Errorf("%s: body sizes %d vs %d", pa[i].URL, len(ba), len(bb))
		}
		// Port numbers of equal length (always, in the usual ephemeral
		// range) leave everything else byte-identical.
		if sameLen && !bytes.Equal(normalise(ba), normalise(bb)) {
			t.Errorf("%s: bodies differ", pa[i].URL)
		}
	}
	if len(pa) == len(pc) && bytes.Equal(normalise(a.Body(pa[20].URL)), normalise(c.Body(pc[20].URL))) {
		t.Error("another seed gives the same web")
	}
}

func TestLogFields(t *testing.T) {
	w := startWeb(t, smallConfig())
	c := newClient(t, w)
	h := w.Hosts()[0]
	page := "/list?cat=1&page=2"
	for _, p := range w.AllPages() {
		if strings.HasPrefix(p.URL, "http://"+h.Authority+"/list?") {
			page = strings.TrimPrefix(p.URL, "http://"+h.Authority)
			break
		}
	}
	req, _ := http.NewRequest(http.MethodGet, "http://"+h.Authority+page+"&utm_source=x", nil)
	req.Host = strings.ToUpper(h.Authority)
	req.Header.Set("User-Agent", "weft/1.0 (+test)")
	before := time.Now()
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	head, err := c.Head("http://" + h.Authority + "/")
	if err != nil {
		t.Fatal(err)
	}
	head.Body.Close()
	waitIdle(t, w)

	log := w.Log()
	if len(log) != 2 {
		t.Fatalf("%d log entries: %+v", len(log), log)
	}
	r := log[0]
	if r.Host != h.Authority || r.Addr != h.Addr || r.Method != "GET" || r.Path != page+"&utm_source=x" ||
		r.Status != 200 || r.UserAgent != "weft/1.0 (+test)" || r.Bytes != int64(len(body)) {
		t.Errorf("entry: %+v", r)
	}
	if r.Start.Before(before) || r.End.Before(r.Start) || r.End.After(time.Now()) {
		t.Errorf("times: before %v start %v end %v", before, r.Start, r.End)
	}
	if r := log[1]; r.Method != "HEAD" || r.Path != "/" || r.Status != 200 || r.Bytes != 0 {
		t.Errorf("HEAD entry: %+v", r)
	}
	log[0].Path = "mutated"
	if w.Log()[0].Path == "mutated" {
		t.Error("Log does not return a copy")
	}
}

func TestLatency(t *testing.T) {
	cfg := smallConfig()
	cfg.MaxLatency = 150 * time.Millisecond
	w := startWeb(t, cfg)
	c := newClient(t, w)
	var slow HostInfo
	for _, h := range w.Hosts() {
		if h.Latency > slow.Latency && h.Robots != RobotsServerError && h.Robots != RobotsTimeout {
			slow = h
		}
	}
	if slow.Latency < 20*time.Millisecond {
		t.Fatalf("no host with latency: %+v", w.Hosts())
	}
	start := time.Now()
	get(t, c, "http://"+slow.Authority+"/")
	if d := time.Since(start); d < slow.Latency {
		t.Errorf("answered after %v, latency %v", d, slow.Latency)
	}
	// The client may read the last byte a moment before the handler returns.
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	if err := w.WaitIdle(ctx); err != nil {
		t.Fatal(err)
	}
	if r := w.Log()[0]; r.End.Sub(r.Start) < slow.Latency {
		t.Errorf("logged duration %v, latency %v", r.End.Sub(r.Start), slow.Latency)
	}
	// A client that gives up during the latency leaves a status-0 entry.
	impatient := newClient(t, w)
	impatient.Timeout = slow.Latency / 4
	if resp, err := impatient.Get("http://" + slow.Authority + "/p/10"); err == nil {
		resp.Body.Close()
		t.Error("impatient client got a response")
	}
	r := waitLog(t, w, func(r Request) bool { return r.Path == "/p/10" && !r.End.IsZero() })
	if r.Status != 0 {
		t.Errorf("abandoned request logged with status %d", r.Status)
	}
}

// TestConcurrentClients has 64 clients fetch pages at once (run with -race)
// and checks that every request is logged exactly once and correctly.
func TestConcurrentClients(t *testing.T) {
	cfg := smallConfig()
	cfg.MinPageBytes, cfg.MaxPageBytes = 10<<10, 20<<10
	w := startWeb(t, cfg)
	c := newClient(t, w)
	pages := w.AllPages()
	const clients, each = 64, 10
	var wg sync.WaitGroup
	var mu sync.Mutex
	want := map[string]int{}
	for i := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range each {
				p := pages[(i*each+j)*7%len(pages)]
				resp, err := c.Get(p.URL)
				if err != nil {
					t.Error(err)
					return
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != p.Status {
					t.Errorf("%s: status %d, want %d", p.URL, resp.StatusCode, p.Status)
				}
				mu.Lock()
				want[p.URL]++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	waitIdle(t, w)
	log := w.Log()
	if len(log) != clients*each {
		t.Fatalf("%d log entries, want %d", len(log), clients*each)
	}
	got := map[string]int{}
	for i, r := range log {
		u := "http://" + r.Host + r.Path
		got[u]++
		p, _ := w.Page(u)
		if r.Status != p.Status || r.Bytes != int64(len(w.Body(u))) || r.End.Before(r.Start) {
			t.Errorf("%s: logged %+v, want status %d, %d bytes", u, r, p.Status, len(w.Body(u)))
		}
		if i > 0 && r.Start.Before(log[i-1].Start) {
			t.Errorf("log not in arrival order at %d", i)
		}
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("logged requests differ from sent ones")
	}
}
