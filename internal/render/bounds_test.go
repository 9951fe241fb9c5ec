package render

import (
	"context"
	"errors"
	"io"
	"net/http"
	"slices"
	"testing"
	"time"
)

// A page whose script never yields overruns its budget: its browser is
// killed and replaced, and the next page renders in a new one.
func TestRenderHungPageReplacesTheBrowser(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/hang", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `<!doctype html><a href="/static">s</a><script>setTimeout(() => { for (;;) {} }, 0)</script>`)
	})
	mux.HandleFunc("/ok", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `<!doctype html><script>document.write('<a href="/made">m</a>')</script>`)
	})
	_, site := serve(t, mux)
	p := newPool(t, Config{Workers: 1, Timeout: 3 * time.Second, Idle: 200 * time.Millisecond})
	f := newTestFetcher("")
	if _, err := p.Render(t.Context(), site+"/hang", f); err == nil {
		t.Fatal("a hung page rendered without an error")
	}
	if p.Restarts() != 1 {
		t.Fatalf("restarts = %d after a hung page, want 1", p.Restarts())
	}
	res, err := p.Render(t.Context(), site+"/ok", f)
	if err != nil {
		t.Fatalf("the page after a hung one: %v", err)
	}
	if !slices.Contains(res.Links, site+"/made") || p.Started() != 2 {
		t.Fatalf("links %q, browsers started %d; want /made from a second browser", res.Links, p.Started())
	}
}

// A browser that dies between pages (killed from outside, as the kernel's
// OOM killer would) costs the next render, which fails and replaces it;
// the one after renders.
func TestRenderCrashedBrowserIsReplaced(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/ok", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `<!doctype html><script>document.write('<a href="/made">m</a>')</script>`)
	})
	_, site := serve(t, mux)
	p := newPool(t, Config{Workers: 1, Timeout: 10 * time.Second, Idle: 200 * time.Millisecond})
	f := newTestFetcher("")
	if _, err := p.Render(t.Context(), site+"/ok", f); err != nil {
		t.Fatal(err)
	}
	b := <-p.slots
	pid := b.pid()
	if pid == 0 {
		t.Fatal("no browser process")
	}
	if err := killProcess(pid); err != nil {
		t.Fatal(err)
	}
	p.slots <- b
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	var res Result
	var err error
	for range 2 { // the first may fail on the dead browser
		if res, err = p.Render(ctx, site+"/ok", f); err == nil {
			break
		}
	}
	if err != nil || !slices.Contains(res.Links, site+"/made") {
		t.Fatalf("after the crash: %v, links %q", err, res.Links)
	}
	if p.Restarts() < 1 || p.Started() != 2 {
		t.Fatalf("restarts %d, started %d: the dead browser was not replaced", p.Restarts(), p.Started())
	}
}

// With no Chromium, New says so with ErrNoChromium, which callers turn
// into "rendering off".
func TestNoChromium(t *testing.T) {
	if _, err := New(Config{Chromium: "/nonexistent/chromium"}); err == nil || !errors.Is(err, ErrNoChromium) {
		t.Fatalf("New without Chromium: %v", err)
	}
}

// Scrolling reaches lazy content: a page that adds a link and grows when
// it is scrolled to its bottom, at most MaxScrolls times.
func TestRenderScrollsForLazyContent(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `<!doctype html><body><div style="height:3000px"></div><script>
let n = 0;
window.addEventListener('scroll', () => {
  if (window.innerHeight + window.scrollY < document.documentElement.scrollHeight - 10 || n >= 5) return;
  n++;
  const a = document.createElement('a'); a.href = '/lazy-' + n; a.textContent = 'more';
  const d = document.createElement('div'); d.style.height = '3000px';
  document.body.appendChild(a); document.body.appendChild(d);
});
</script></body>`)
	})
	_, site := serve(t, mux)
	p := newPool(t, Config{Workers: 1, Timeout: 20 * time.Second, Idle: 200 * time.Millisecond, MaxScrolls: 3})
	res, err := p.Render(t.Context(), site+"/", newTestFetcher(""))
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []bool{true, true, true, false} {
		if got := slices.Contains(res.Links, site+"/lazy-"+string(rune('1'+i))); got != want {
			t.Errorf("/lazy-%d found %v, want %v (links %q)", i+1, got, want, res.Links)
		}
	}
	if res.Scrolls != 3 {
		t.Errorf("scrolls = %d, want 3", res.Scrolls)
	}
}

// A page over its budget only because one of its requests waits on the
// fetcher (a busy host's clock, a slow server) is not hung: its tab goes,
// its browser stays and renders the next page.
func TestRenderSlowRequestKeepsTheBrowser(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/slow-page", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `<!doctype html><script>fetch("/slow").then(r => r.text()).then(t => document.body.insertAdjacentHTML("beforeend", t))</script>`)
	})
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done() // answers only when the fetcher gives up
	})
	mux.HandleFunc("/ok", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `<!doctype html><script>document.write('<a href="/made">m</a>')</script>`)
	})
	_, site := serve(t, mux)
	p := newPool(t, Config{Workers: 1, Timeout: 2 * time.Second, Idle: 200 * time.Millisecond})
	f := newTestFetcher("")
	if _, err := p.Render(t.Context(), site+"/slow-page", f); err == nil {
		t.Fatal("a page whose request never ended rendered without an error")
	}
	if p.Restarts() != 0 {
		t.Fatalf("restarts = %d after a page that only waited on its fetcher, want 0", p.Restarts())
	}
	res, err := p.Render(t.Context(), site+"/ok", f)
	if err != nil {
		t.Fatalf("the page after a slow one: %v", err)
	}
	if !slices.Contains(res.Links, site+"/made") || p.Started() != 1 {
		t.Fatalf("links %q, browsers started %d; want /made from the same browser", res.Links, p.Started())
	}
}

// A render waits for a free browser no longer than a page's budget: its
// caller holds its host's lease meanwhile, and goes on without the render.
func TestRenderWaitsForABrowserWithinTheBudget(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/ok", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `<!doctype html><script>document.write('<a href="/made">m</a>')</script>`)
	})
	_, site := serve(t, mux)
	p := newPool(t, Config{Workers: 1, Timeout: time.Second, Idle: 200 * time.Millisecond})
	b := <-p.slots // the only browser, busy
	if _, err := p.Render(t.Context(), site+"/ok", newTestFetcher("")); !errors.Is(err, ErrBusy) {
		t.Fatalf("Render with no browser free: %v, want ErrBusy", err)
	}
	p.slots <- b
	if _, err := p.Render(t.Context(), site+"/ok", newTestFetcher("")); err != nil {
		t.Fatalf("Render once the browser is free: %v", err)
	}
}
