package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
	"go.uber.org/goleak"

	"github.com/weft-crawler/weft"
	"github.com/weft-crawler/weft/internal/store"
	"github.com/weft-crawler/weft/internal/synthweb"
)

// TestMain checks that no test leaves goroutines behind, but one that
// nats.go v1.55.0 itself leaves at times: its object store's Put makes a
// JetStream context per call, whose reconnect watcher, if it first runs
// after Put has cleaned the context up, waits on a nil channel for good
// (one goroutine per such Put; snapshots are put every few minutes).
// The weft binary that buildWeft built for the tests is removed after
// them.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.IgnoreTopFunction("github.com/nats-io/nats.go/jetstream.(*jetStream).resetPendingAcksOnReconnect"),
		goleak.Cleanup(func(int) { removeWeftBin() }))
}

func runWeft(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(t.Context(), args, &out, &errb)
	return code, out.String(), errb.String()
}

func TestBadInputExitsTwoAndNamesIt(t *testing.T) {
	dir := t.TempDir()
	seeds := filepath.Join(dir, "seeds.txt")
	os.WriteFile(seeds, []byte("# my seeds\nhttp://a.test/\n\nhttp://[::1/broken\n"), 0o644)
	long := filepath.Join(dir, "long.txt")
	os.WriteFile(long, []byte("http://a.test/\nhttp://a.test/"+strings.Repeat("x", 2<<20)+"\n"), 0o644)
	ftp := filepath.Join(dir, "ftp.txt")
	os.WriteFile(ftp, []byte("ftp://a.test/\n"), 0o644)
	fast := filepath.Join(dir, "fast.json")
	os.WriteFile(fast, []byte(`{"a.test": {"delay": "200ms"}}`), 0o644)
	badCookies := filepath.Join(dir, "cookies.txt")
	os.WriteFile(badCookies, []byte("# Netscape HTTP Cookie File\na.test\tTRUE\t/\tFALSE\tsoon\tsid\ts3cret\n"), 0o600)
	allow := filepath.Join(dir, "allow.json")
	os.WriteFile(allow, []byte("{\n  \"a.test\": {\"allow\": [\"/\"]}\n}\n"), 0o644)
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"crawl", "--seeds", seeds, "--data", dir}, []string{seeds + ":4", "http://[::1/broken"}},
		{[]string{"crawl", "--seeds", ftp, "--data", dir}, []string{ftp + ":1", "ftp"}},
		{[]string{"crawl", "--seeds", filepath.Join(dir, "missing.txt")}, []string{"--seeds", "missing.txt"}},
		{[]string{"crawl", "--delay", "soon", "http://a.test/"}, []string{"--delay", "soon"}},
		{[]string{"crawl", "--scope", "galaxy", "http://a.test/"}, []string{"--scope", "galaxy"}},
		{[]string{"crawl", "--resolve", "a.test", "http://a.test/"}, []string{"--resolve", "HOST=ADDR"}},
		{[]string{"crawl", "--resolve", "a.test=nowhere", "http://a.test/"}, []string{"--resolve", "nowhere"}},
		{[]string{"crawl", "--allow-cidr", "10.0.0.0/33", "http://a.test/"}, []string{"--allow-cidr", "10.0.0.0/33"}},
		{[]string{"crawl", "--deny-cidr", "fd00::/129", "http://a.test/"}, []string{"--deny-cidr", "fd00::/129"}},
		{[]string{"crawl", "--include", "(", "http://a.test/"}, []string{"--include", "("}},
		{[]string{"crawl", "--exclude", "a[", "http://a.test/"}, []string{"--exclude", "a["}},
		{[]string{"crawl", "--user-agent", "", "http://a.test/"}, []string{"--user-agent"}},
		{[]string{"crawl", "--max-body", "1000", "http://a.test/"}, []string{"--max-body", "1000"}},
		{[]string{"crawl", "--grace", "-1s", "http://a.test/"}, []string{"--grace"}},
		{[]string{"crawl", "--seeds", long, "--data", dir}, []string{long + ":2"}},
		{[]string{"crawl", "--workers", "0", "http://a.test/"}, []string{"--workers"}},
		{[]string{"crawl", "--robots-attempts", "0", "http://a.test/"}, []string{"--robots-attempts 0"}},
		{[]string{"crawl", "--near-dup-threshold", "12", "http://a.test/"}, []string{"--near-dup-threshold 12", "1 to 11"}},
		{[]string{"crawl", "--trap-window", "65", "http://a.test/"}, []string{"--trap-window 65"}},
		{[]string{"serve", "--recrawl-min", "0", "http://a.test/"}, []string{"--recrawl-min"}},
		{[]string{"serve", "--recrawl-min", "2h", "--recrawl-max", "1h", "http://a.test/"}, []string{"--recrawl-max at least --recrawl-min"}},
		{[]string{"serve", "--recrawl-floor", "-1s", "http://a.test/"}, []string{"--recrawl-floor"}},
		{[]string{"crawl", "--http", "0.0.0.0:9", "http://a.test/"}, []string{"--http", "token is required"}},
		{[]string{"crawl", "--http", "nonsense", "http://a.test/"}, []string{"--http", `"nonsense"`}},
		{[]string{"crawl", "--http", "127.0.0.1:0", "--http-token-file", dir + "/none", "http://a.test/"}, []string{"--http-token-file"}},
		{[]string{"serve", "--inlink-mib", "-2", "http://a.test/"}, []string{"--inlink-mib", "-2", "--inlink-memory"}},
		{[]string{"serve", "--inlink-memory", "-2", "http://a.test/"}, []string{"--inlink-memory", "-2", "not a size"}},
		{[]string{"crawl", "--max-body", "10M", "http://a.test/"}, []string{"--max-body", "10M", "10MB or 10MiB"}},
		{[]string{"crawl", "--render-memory", "512", "http://a.test/"}, []string{"--render-memory 512: under 1MiB", "512MiB"}},
		{[]string{"crawl", "--max-body-for", "application/pdf=64 megs", "http://a.test/"}, []string{"--max-body-for", "64 megs", "not a size"}},
		{[]string{"crawl", "--near-dup-min-words", "0", "http://a.test/"}, []string{"--near-dup-min-words"}},
		{[]string{"crawl", "--robots-retry", "0s", "http://a.test/"}, []string{"--robots-retry"}},
		{[]string{"crawl", "--policy", fast, "http://a.test/"}, []string{"--policy", fast, "a.test: delay 200ms is shorter than the crawl's delay 1s"}},
		{[]string{"crawl", "--policy", allow, "http://a.test/"}, []string{"--policy", allow + ": line 2", `unknown field "allow"`, "cannot allow"}},
		{[]string{"crawl", "--policy", filepath.Join(dir, "none.json"), "http://a.test/"}, []string{"--policy", "none.json"}},
		{[]string{"crawl", "--cookies", badCookies, "http://a.test/"}, []string{"--cookies", badCookies + " line 2", `expiry "soon"`}},
		{[]string{"crawl", "--cookies", filepath.Join(dir, "none.txt"), "http://a.test/"}, []string{"--cookies", "none.txt"}},
		{[]string{"crawl", "--header", "Cookie: sid=s3cret", "http://a.test/"}, []string{"--header (#1)", `"Cookie" cannot be set`, "--cookies"}},
		{[]string{"crawl", "--header", "X-Token s3cret", "http://a.test/"}, []string{"--header (#1)", "want 'Name: value'"}},
		{[]string{"crawl", "not a url"}, []string{"argument 1", "not a url"}},
		{[]string{"crawl"}, []string{"no seeds"}},
		{[]string{"crawll"}, []string{"unknown command", "crawll"}},
	} {
		code, _, stderr := runWeft(t, tc.args...)
		if code != 2 {
			t.Errorf("weft %v: exit %d, want 2 (stderr %q)", tc.args, code, stderr)
		}
		for _, w := range tc.want {
			if !strings.Contains(stderr, w) {
				t.Errorf("weft %v: stderr %q does not name %q", tc.args, stderr, w)
			}
		}
		if strings.Contains(stderr, "s3cret") {
			t.Errorf("weft %v: stderr %q shows a secret", tc.args, stderr)
		}
	}
}

func TestCrawlCommand(t *testing.T) {
	web, err := synthweb.Start(synthweb.Config{Seed: 11, Hosts: 3, PagesPerHost: 12, MinPageBytes: 12 << 10, MaxPageBytes: 16 << 10, MinLinks: 20, MaxLinks: 30})
	if err != nil {
		t.Fatal(err)
	}
	defer web.Close()
	dir := t.TempDir()
	seedFile := filepath.Join(dir, "seeds.txt")
	os.WriteFile(seedFile, []byte("# the synthetic web\n"+strings.Join(web.Seeds(), "\n")+"\n"), 0o644)
	args := []string{"crawl", "--seeds", seedFile, "--data", filepath.Join(dir, "data"), "--delay", "5ms", "--workers", "4",
		"--allow-cidr", "127.0.0.0/8", "--max-pages", "10"}
	for host, ip := range web.Resolve() {
		args = append(args, "--resolve", host+"="+ip)
	}
	sumFile := filepath.Join(dir, "summary.json")
	code, stdout, stderr := runWeft(t, append(args, "--summary", sumFile)...)
	if code != 0 {
		t.Fatalf("exit %d; stderr %s", code, stderr)
	}
	for _, want := range []string{"crawl max-pages", "10 pages", "responses:", "rejected:", "WARC:"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("summary lacks %q:\n%s", want, stdout)
		}
	}
	// --summary's JSON has snake_case keys, as the API and the events do.
	var sum map[string]any
	if b, err := os.ReadFile(sumFile); err != nil || json.Unmarshal(b, &sum) != nil {
		t.Fatalf("--summary: %v\n%s", err, b)
	}
	if sum["stopped_by"] != "max-pages" || sum["pages"] != 10.0 || sum["elapsed_seconds"].(float64) <= 0 || len(sum["warc_files"].([]any)) != 1 {
		t.Errorf("--summary: stopped_by %v, pages %v, elapsed_seconds %v, warc_files %v", sum["stopped_by"], sum["pages"], sum["elapsed_seconds"], sum["warc_files"])
	}
	for key := range sum {
		if strings.ToLower(key) != key {
			t.Errorf("--summary key %q is not snake_case", key)
		}
	}
	files, _ := filepath.Glob(filepath.Join(dir, "data", "warc", "*.warc.gz"))
	if len(files) != 1 {
		t.Errorf("WARC files %v, want one", files)
	}

	// The same command again resumes the crawl: the page cap was reached,
	// so URLs are left, and the seeds are already seen. With --http it
	// serves the operator API meanwhile.
	code, stdout, stderr = runWeft(t, append(args, "--http", "127.0.0.1:0")...)
	if code != 0 || !strings.Contains(stderr, "resuming the crawl") || !strings.Contains(stdout, "resumed:") || !strings.Contains(stderr, "operator API on http://127.0.0.1:") {
		t.Fatalf("second run: exit %d\nstdout %s\nstderr %s", code, stdout, stderr)
	}
	// --fresh starts over.
	code, stdout, stderr = runWeft(t, append(args, "--fresh")...)
	if code != 0 || strings.Contains(stderr, "resuming") || strings.Contains(stdout, "resumed:") {
		t.Fatalf("--fresh run: exit %d\nstdout %s\nstderr %s", code, stdout, stderr)
	}
}

// Without --allow-cidr the SSRF guard refuses the loopback web: a seed
// pinned by --resolve to a loopback address is refused before it is
// queued, one whose name DNS (here /etc/hosts) resolves to loopback when
// its robots.txt is asked for; nothing reaches the servers, the summary
// names each seed with why and the flag that allows it, and since no
// seed could be fetched the crawl exits 1.
func TestCrawlRefusesLoopbackByDefault(t *testing.T) {
	web, err := synthweb.Start(synthweb.Config{Seed: 12, Hosts: 1, PagesPerHost: 12, MinPageBytes: 12 << 10, MaxPageBytes: 16 << 10, MinLinks: 20, MaxLinks: 30})
	if err != nil {
		t.Fatal(err)
	}
	defer web.Close()
	port := web.Hosts()[0].Addr[strings.LastIndexByte(web.Hosts()[0].Addr, ':')+1:]
	byName := "http://localhost:" + port + "/"
	args := []string{"crawl", "--data", t.TempDir(), "--progress", "never", web.Seeds()[0], byName}
	for host, ip := range web.Resolve() {
		args = append(args, "--resolve", host+"="+ip)
	}
	code, stdout, stderr := runWeft(t, args...)
	if code != 1 || !strings.Contains(stderr, "no seed could be fetched") {
		t.Fatalf("exit %d, stderr %q; want 1 and no seed fetched", code, stderr)
	}
	if n := len(web.Log()); n != 0 {
		t.Fatalf("the server received %d requests; the SSRF guard should have refused the address", n)
	}
	for _, want := range []string{
		"seeds:      2 given, 0 fetched, 2 not:",
		web.Seeds()[0] + "  forbidden: its address " + web.Hosts()[0].Addr[:strings.LastIndexByte(web.Hosts()[0].Addr, ':')] + " is a loopback address",
		byName + "  robots-unreachable: its address ",
		"(--allow-cidr ",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("the summary lacks %q:\n%s", want, stdout)
		}
	}
}

func TestDemo(t *testing.T) {
	code, stdout, stderr := runWeft(t, "demo", "--hosts", "6", "--pages-per-host", "12", "--delay", "5ms", "--progress", "never")
	if code != 0 {
		t.Fatalf("exit %d; stderr %s\n%s", code, stderr, stdout)
	}
	for _, want := range []string{"crawl drained", "what the servers saw", "overlapping requests to one host:     none", "gaps shorter than the host's delay:   none"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("demo output lacks %q:\n%s", want, stdout)
		}
	}
	// The pages' photos are fetched and archived as their requisites.
	if m := regexp.MustCompile(`requisites: (\d+) found .*, (\d+) fetched and archived`).FindStringSubmatch(stdout); m == nil || m[2] == "0" {
		t.Errorf("demo output counts no requisite fetched and archived (%q):\n%s", m, stdout)
	}
}

func TestStripParamFlagAddsToDefaults(t *testing.T) {
	var f crawlFlags
	fs := pflag.NewFlagSet("crawl", pflag.ContinueOnError)
	f.register(fs)
	if err := fs.Parse([]string{"--strip-param", "ref", "--strip-param", "Campaign"}); err != nil {
		t.Fatal(err)
	}
	cfg, err := f.config([]string{"http://a.test/"}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(cfg.Canon.StripParams, ",")
	for _, want := range []string{"ref", "Campaign", "gclid"} {
		if !strings.Contains(got, want) {
			t.Errorf("strip params %q lack %q", got, want)
		}
	}
}

// A seed that is no http or https URL is refused naming where it is
// (file and line, argument, or the profile's urls), the text itself and
// what a seed must be, in words about the input, not the URL parser's.
func TestBadSeedsNameTheLineAndWhatIsWanted(t *testing.T) {
	dir := t.TempDir()
	n := 0
	file := func(text string) string {
		n++
		path := filepath.Join(dir, fmt.Sprintf("seeds%d.txt", n))
		os.WriteFile(path, []byte(text), 0o644)
		return path
	}
	const want = ": want an absolute http or https URL such as "
	for _, tc := range []struct {
		args []string
		msg  string // the whole message after "weft: "
	}{
		{[]string{"crawl", "--seeds", file("https://example.org/\n# a comment\nfoo bar\n")},
			filepath.Join(dir, "seeds1.txt") + `:3: "foo bar" is not a URL` + want + "https://example.org/"},
		{[]string{"crawl", "--seeds", file("\n\nshop.example/catalogue  # the shop\n")},
			filepath.Join(dir, "seeds2.txt") + `:3: "shop.example/catalogue" is not a URL` + want + "https://shop.example/catalogue"},
		{[]string{"crawl", "--seeds", file("ftp://a.test/\n")},
			filepath.Join(dir, "seeds3.txt") + `:1: "ftp://a.test/" has the scheme "ftp"` + want + "https://example.org/"},
		{[]string{"crawl", "http://a.test/", "/about"}, `argument 2: "/about" is not a URL` + want + "https://example.org/"},
		{[]string{"crawl", "http://a.test:99999/"}, `argument 1: "http://a.test:99999/" is not a URL (the input's port is outside the range`},
		{[]string{"crawl", "--config", writeFile(t, "p.toml", "workers = 2\nurls = [\"http://a.test/\", \"a.test\"]\n")},
			`p.toml:2: urls: url 2: "a.test" is not a URL` + want + "https://a.test/"},
	} {
		code, _, stderr := runWeft(t, append(tc.args, "--data", dir)...)
		if code != 2 || !strings.Contains(stderr, tc.msg) || strings.Contains(stderr, "ASCII alpha") {
			t.Errorf("weft %v: exit %d, stderr %q; want 2 and %q", tc.args, code, stderr, tc.msg)
		}
	}
}

// TestSeedFileOptions: a line of a seeds file, a profile's URL or an
// argument may carry its seed's own limits; the seeds are the URLs, and
// a bad field is an error naming the file, the line and the field.
func TestSeedFileOptions(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "seeds.txt")
	os.WriteFile(f, []byte("http://a.test/\nhttp://b.test/docs/ scope=prefix depth=2 max-pages=50 include=/docs/ exclude=\\.pdf$ exclude=/old/\n"), 0o644)
	list, opts, err := readSeedOptions(f, []string{"http://c.test/ max-pages=7"}, "argument")
	if err != nil || !slices.Equal(list, []string{"http://a.test/", "http://b.test/docs/", "http://c.test/"}) {
		t.Fatalf("seeds %q, err %v", list, err)
	}
	want := map[string]weft.SeedOptions{
		"http://b.test/docs/": {Scope: "prefix", MaxDepth: 2, MaxPages: 50, Include: []string{"/docs/"}, Exclude: []string{`\.pdf$`, "/old/"}},
		"http://c.test/":      {MaxPages: 7},
	}
	if !reflect.DeepEqual(opts, want) {
		t.Errorf("options %+v, want %+v", opts, want)
	}
	for line, msg := range map[string]string{
		"http://a.test/ scope=site":   `seeds.txt:2: seeds: field scope=site: want domain, host, prefix or any`,
		"http://a.test/ depth=two":    `seeds.txt:2: seeds: field depth=two: not a whole number`,
		"http://a.test/ max-pages=-1": `seeds.txt:2: seeds: field max-pages=-1: want a whole number`,
		"http://a.test/ colour=red":   `seeds.txt:2: seeds: field "colour=red": unknown key "colour"`,
		"http://a.test/ include=a(b":  `seeds.txt:2: seeds: scope: include[0] "a(b"`,
		"http://a.test/ scope":        `seeds.txt:2: seeds: field "scope": want key=value`,
		"a.test/ scope=host":          `seeds.txt:2: "a.test/" is not a URL`,
	} {
		os.WriteFile(f, []byte("http://b.test/\n"+line+"\n"), 0o644)
		if _, _, err := readSeedOptions(f, nil, "argument"); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("line %q: error %v, want one containing %q", line, err, msg)
		}
	}
	code, _, stderr := runWeft(t, "crawl", "--data", dir, "--config", writeFile(t, "p.toml", "workers = 2\nurls = [\"http://a.test/ depth=x\"]\n"))
	if want := `p.toml:2: urls: url 1: seeds: field depth=x: not a whole number`; code != 2 || !strings.Contains(stderr, want) {
		t.Errorf("profile: exit %d, stderr %q; want 2 and %q", code, stderr, want)
	}
}

func TestSeedFileWithByteOrderMark(t *testing.T) {
	f := filepath.Join(t.TempDir(), "seeds.txt")
	os.WriteFile(f, []byte("\ufeffhttp://a.test/\n"), 0o644)
	seeds, err := collectSeeds(f, nil, "argument")
	if err != nil || len(seeds) != 1 || seeds[0] != "http://a.test/" {
		t.Fatalf("seeds %q, err %v", seeds, err)
	}
}

// A data directory that cannot be created is the machine's fault, not the
// user's input: exit 1, naming the path.
func TestUnwritableDataDirExitsOne(t *testing.T) {
	file := filepath.Join(t.TempDir(), "a-file")
	os.WriteFile(file, nil, 0o644)
	code, _, stderr := runWeft(t, "crawl", "--data", filepath.Join(file, "data"), "http://a.test/")
	if code != 1 || !strings.Contains(stderr, file) {
		t.Fatalf("exit %d, stderr %q; want 1 naming %s", code, stderr, file)
	}
}

// A data directory another weft holds (here: this process, through the
// store) is refused saying which process holds it and what to do, and
// --fresh then discards nothing; the archive commands say to wait.
func TestDataDirInUseSaysWhoHoldsIt(t *testing.T) {
	dir := t.TempDir()
	db, err := store.Open(filepath.Join(dir, "state"), nil)
	if err != nil {
		t.Fatal(err)
	}
	b := db.NewBatch()
	b.PutMeta("kept", []byte("yes"))
	if err := b.Commit(true); err != nil {
		t.Fatal(err)
	}
	who := fmt.Sprintf("data directory %s is in use by another weft (pid %d, started ", dir, os.Getpid())
	for _, tc := range []struct {
		args   []string
		advice string
	}{
		{[]string{"crawl", "--data", dir, "http://a.test/"}, "; stop that crawl or choose another --data"},
		{[]string{"crawl", "--fresh", "--data", dir, "http://a.test/"}, "; stop that crawl or choose another --data"},
		{[]string{"cdx", "--data", dir}, "; read it once that has ended"},
	} {
		code, _, stderr := runWeft(t, tc.args...)
		if code != 1 || !strings.Contains(stderr, who) || !strings.HasSuffix(strings.TrimSpace(stderr), tc.advice) {
			t.Errorf("weft %v: exit %d, stderr %q; want 1, %q ... %q", tc.args, code, stderr, who, tc.advice)
		}
	}
	if v, ok, err := db.GetMeta("kept"); !ok || string(v) != "yes" || err != nil {
		t.Errorf("the state after a refused --fresh: %q, %v, %v", v, ok, err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := runWeft(t, "cdx", "--data", dir); code != 0 {
		t.Errorf("weft cdx once the holder closed: exit %d, %s", code, stderr)
	}
}

// Ctrl-C (here: the context main cancels on SIGINT) stops the crawl
// cleanly: summary printed, exit 0.
func TestInterruptedCrawlExitsZero(t *testing.T) {
	web, err := synthweb.Start(synthweb.Config{Seed: 13, Hosts: 2, PagesPerHost: 12, MinPageBytes: 12 << 10, MaxPageBytes: 16 << 10, MinLinks: 20, MaxLinks: 30})
	if err != nil {
		t.Fatal(err)
	}
	defer web.Close()
	args := []string{"crawl", "--data", t.TempDir(), "--delay", "300ms", "--allow-cidr", "127.0.0.0/8"}
	for host, ip := range web.Resolve() {
		args = append(args, "--resolve", host+"="+ip)
	}
	args = append(args, web.Seeds()...)
	ctx, cancel := context.WithTimeout(t.Context(), 700*time.Millisecond)
	defer cancel()
	var out, errb bytes.Buffer
	code := run(ctx, args, &out, &errb)
	if code != 0 || !strings.Contains(out.String(), "crawl interrupted") {
		t.Fatalf("exit %d; stdout %s; stderr %s", code, out.String(), errb.String())
	}
}
