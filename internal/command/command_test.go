package command

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weft-crawler/weft/internal/plugin"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// python returns the path of the python3 interpreter itself (not a shell
// shim such as pyenv's, which would run under the memory cap too), or
// skips the test where there is none, and fails it in CI, which has one.
func python(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("python3", "-c", "import sys; print(sys.executable)").Output()
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("python3 is needed for the command protocol's tests: %v", err)
		}
		t.Skip("no python3")
	}
	return strings.TrimSpace(string(out))
}

// script is a handler program: it reads requests and acts on the page's
// path (the last segment of its URL).
const script = `
import json, mmap, sys, time
for line in sys.stdin:
    req = json.loads(line)
    page = req["url"].rsplit("/", 1)[-1]
    body = open(req["body_file"], "rb").read().decode()
    if page == "hang":
        time.sleep(60)
    if page == "crash":
        sys.exit(3)
    if page == "garbage":
        print("not json", flush=True)
        continue
    if page == "wrong-id":
        print(json.dumps({"id": req["id"] + 1}), flush=True)
        continue
    if page == "hog":
        hog = mmap.mmap(-1, 256 << 20)  # address space, untouched: quick, and past the cap
    if page == "refuse":
        print(json.dumps({"id": req["id"], "error": "cannot read this"}), flush=True)
        continue
    print("read", page, file=sys.stderr, flush=True)
    print(json.dumps({"id": req["id"], "links": ["/next"], "fields": {"body": body, "type": req["media_type"], "v": req["v"]},
                      "follow": page != "nofollow"}), flush=True)
`

func newHandler(t *testing.T, cfg Config) *Handler {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "handler.py")
	if err := os.WriteFile(path, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg.Argv = []string{python(t), path}
	if cfg.MediaTypes == nil {
		cfg.MediaTypes = []string{"text/html"}
	}
	h, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := h.Close(); err != nil {
			t.Error(err)
		}
	})
	return h
}

func doc(page string) *plugin.Response {
	return &plugin.Response{URL: "http://a.test/" + page, MediaType: "text/html", Body: []byte("<p>" + page + "</p>")}
}

// A page is read by the program: it gets the body through the file, its
// links, fields and decisions come back.
func TestHandle(t *testing.T) {
	h := newHandler(t, Config{})
	x, err := h.Handle(doc("one"))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(x.Links, []string{"/next"}) || x.Fields["body"] != "<p>one</p>" || x.Fields["type"] != "text/html" || x.Fields["v"] != float64(1) || x.NoFollow {
		t.Errorf("extra %+v", x)
	}
	if x, err := h.Handle(doc("nofollow")); err != nil || !x.NoFollow {
		t.Errorf("follow false: %+v, %v", x, err)
	}
	if !h.Accepts("text/html") || h.Accepts("text/plain") || !strings.HasPrefix(h.Name(), "python3") {
		t.Errorf("Accepts or Name wrong")
	}
}

// Every way a program can fail fails that page alone: it is counted, the
// program is started again, and the next page is read.
func TestFailuresAreThePagesAlone(t *testing.T) {
	h := newHandler(t, Config{Timeout: 5 * time.Second, MaxMemory: 128 << 20})
	for _, tc := range []struct{ page, want string }{
		{"hang", "no answer within 5s"},
		{"crash", "exited: exit status 3"},
		{"garbage", "is not a JSON object of the protocol"},
		{"wrong-id", "answers must come in order"},
		{"hog", "exited"}, // the mapping refused under the cap
		{"refuse", "cannot read this"},
	} {
		if _, err := h.Handle(doc(tc.page)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.page, err, tc.want)
		}
		if x, err := h.Handle(doc("after-" + tc.page)); err != nil || x.Fields["body"] != "<p>after-"+tc.page+"</p>" {
			t.Errorf("the page after %s: %+v, %v", tc.page, x, err)
		}
	}
	st := h.Stats()
	if st.Requests != 12 || st.Failures != 6 || st.Starts != 6 { // "refuse" keeps its process
		t.Errorf("stats %+v, want 12 requests, 6 failures, 6 processes started", st)
	}
}

// Without the cap the same allocation succeeds: the cap is what made the
// program fail.
func TestMemoryCapBites(t *testing.T) {
	h := newHandler(t, Config{MaxMemory: -1})
	if _, err := h.Handle(doc("hog")); err != nil {
		t.Errorf("uncapped: %v", err)
	}
}

// Pages are read by Procs programs at once, each answer to its request.
func TestConcurrentPages(t *testing.T) {
	h := newHandler(t, Config{Procs: 3})
	var wg sync.WaitGroup
	for i := range 30 {
		wg.Go(func() {
			page := "p" + strings.Repeat("x", i)
			x, err := h.Handle(doc(page))
			if err != nil || x.Fields["body"] != "<p>"+page+"</p>" {
				t.Errorf("%s: %+v, %v", page, x, err)
			}
		})
	}
	wg.Wait()
}

// Bad configurations are refused, naming what is wrong.
func TestNewChecks(t *testing.T) {
	for _, tc := range []struct {
		cfg  Config
		want string
	}{
		{Config{}, "no program"},
		{Config{Argv: []string{"no-such-program-weft"}, MediaTypes: []string{"text/html"}}, "no-such-program-weft"},
		{Config{Argv: []string{"true"}}, "no media types"},
		{Config{Argv: []string{"true"}, MediaTypes: []string{"html"}}, `media type "html"`},
	} {
		if _, err := New(tc.cfg); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: error %v, want %q", tc.cfg, err, tc.want)
		}
	}
}

// The body files' directory is made when a program first starts, and
// Close removes it: a handler that read no page, made for a crawl that
// never got to start (a flag refused after it), leaves nothing behind,
// nor does one that read pages.
func TestBodyFilesLeaveNothing(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	left := func() []string {
		entries, err := os.ReadDir(tmp)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		return names
	}
	h, err := New(Config{Argv: []string{python(t), "-c", "pass"}, MediaTypes: []string{"text/html"}})
	if err != nil {
		t.Fatal(err)
	}
	if names := left(); len(names) != 0 {
		t.Errorf("made, no page read: %v in the temporary directory", names)
	}
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	h = newHandler(t, Config{})
	if _, err := h.Handle(doc("one")); err != nil {
		t.Fatal(err)
	}
	if names := left(); len(names) != 1 || !strings.HasPrefix(names[0], "weft-cmd-") {
		t.Errorf("a page read: %v in the temporary directory, want the body files' directory", names)
	}
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	if names := left(); len(names) != 0 {
		t.Errorf("closed: %v left in the temporary directory", names)
	}
	if p, err := h.start(); err == nil {
		h.kill(p)
		t.Error("a program started after Close")
	}
	if names := left(); len(names) != 0 {
		t.Errorf("a program asked for after Close: %v in the temporary directory", names)
	}
	// A temporary directory that cannot hold the body files is refused
	// when the handler is made.
	t.Setenv("TMPDIR", filepath.Join(tmp, "missing"))
	if _, err := New(Config{Argv: []string{python(t), "-c", "pass"}, MediaTypes: []string{"text/html"}}); err == nil {
		t.Error("a handler made over a temporary directory that does not exist")
	}
}
