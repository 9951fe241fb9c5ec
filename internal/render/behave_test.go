package render

import (
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weft-crawler/weft/internal/synthweb"
)

// spaWorld starts the synthetic web's single-page app alone.
func spaWorld(t *testing.T) (*synthweb.Web, string) {
	t.Helper()
	w, err := synthweb.Start(synthweb.Config{Seed: 7, Hosts: 1, PagesPerHost: 4, IPAuthorities: true, HostileKinds: []string{synthweb.ScriptSPA}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	return w, w.HostileSeeds()[0]
}

// found lists which of the app's script-only pages res links to.
func found(res Result, home string) (got, missing []string) {
	base := strings.TrimSuffix(home, "/")
	for _, p := range synthweb.ScriptSPAPages {
		if slices.Contains(res.Links, base+p) {
			got = append(got, p)
		} else {
			missing = append(missing, p)
		}
	}
	return got, missing
}

// At its defaults (a Config that sets no behaviour), a render finds all
// thirteen pages the app's scripts lead to, however they lead there; the
// browser itself asks for none of them (a navigation is captured, not
// followed: the crawl asks, if it admits the link), nor for the page
// behind the log-out button; and the page's scripts keep running on the
// page, not elsewhere.
func TestRenderDefaultsFindEveryScriptLink(t *testing.T) {
	web, home := spaWorld(t)
	p := newPool(t, Config{Workers: 1, Timeout: 30 * time.Second, Idle: 300 * time.Millisecond})
	res, err := p.Render(t.Context(), home, newTestFetcher(""))
	if err != nil {
		t.Fatalf("Render: %v", err)
	}
	got, missing := found(res, home)
	t.Logf("found %d of %d; clicks %d, scrolls %d, navigations %d, requests %d", len(got), len(synthweb.ScriptSPAPages), res.Clicks, res.Scrolls, res.Navigations, res.Requests)
	if len(missing) > 0 {
		t.Errorf("missing %q (links %q)", missing, res.Links)
	}
	if !slices.Contains(res.Links, strings.TrimSuffix(home, "/")+"/private/admin") {
		t.Errorf("the admin element's navigation not captured as a link: %q", res.Links)
	}
	if slices.Contains(res.Links, strings.TrimSuffix(home, "/")+"/logout") {
		t.Errorf("the log-out button was clicked: %q", res.Links)
	}
	for _, r := range web.Log() {
		if strings.HasPrefix(r.Path, "/a/") || slices.Contains(synthweb.ScriptSPAForbidden, r.Path) {
			t.Errorf("the browser asked for %s: a navigation was followed, not captured", r.Path)
		}
	}
	if !strings.HasPrefix(res.URL, strings.TrimSuffix(home, "/")+"/a/") {
		t.Errorf("the render ended at %s, not on the app's routes", res.URL)
	}
}

// Each behaviour is needed: with it turned off, the pages only it finds
// are missed, and with all three off only what the load writes is found.
func TestRenderEachBehaviourIsNeeded(t *testing.T) {
	_, home := spaWorld(t)
	for _, tc := range []struct {
		name string
		cfg  Config
		lost []string
	}{
		{"no scrolling", Config{MaxScrolls: -1}, []string{"/a/feed-1", "/a/feed-2"}},
		{"no clicking", Config{MaxClicks: -1}, []string{"/a/cat-1", "/a/cat-2", "/a/story", "/a/about", "/a/team", "/a/deals", "/a/help"}},
		{"no navigation capture", Config{MaxNavigations: -1}, []string{"/a/about", "/a/team", "/a/home"}},
		{"none", Config{MaxScrolls: -1, MaxClicks: -1, MaxNavigations: -1}, []string{"/a/feed-1", "/a/feed-2", "/a/cat-1", "/a/cat-2", "/a/story", "/a/about", "/a/team", "/a/home", "/a/deals", "/a/help"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := tc.cfg
			cfg.Workers, cfg.Timeout, cfg.Idle = 1, 30*time.Second, 300*time.Millisecond
			p := newPool(t, cfg)
			res, err := p.Render(t.Context(), home, newTestFetcher(""))
			if err != nil {
				t.Fatalf("Render: %v", err)
			}
			got, missing := found(res, home)
			t.Logf("found %d of %d: %q", len(got), len(synthweb.ScriptSPAPages), got)
			for _, l := range tc.lost {
				if slices.Contains(got, l) {
					t.Errorf("%s found without the behaviour", l)
				}
			}
			if len(got) > len(synthweb.ScriptSPAPages)-len(tc.lost) {
				t.Errorf("found %d, want at most %d (missing %q)", len(got), len(synthweb.ScriptSPAPages)-len(tc.lost), missing)
			}
		})
	}
}

// A navigation the page's script cannot cancel (one a sandboxed frame of
// another origin makes of the top frame) is captured by the interception
// instead: its document request is aborted before any fetch, and the
// render stays on the page.
func TestRenderCapturesANavigationItCannotCancel(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `<!doctype html><title>app</title><p id=here>here</p>
<iframe sandbox="allow-scripts allow-top-navigation" srcdoc="<script>setTimeout(() => { top.location.href = 'http://`+r.Host+`/away'; }, 100)</script>"></iframe>
<script>document.body.insertAdjacentHTML('beforeend', '<a href=/made>made</a>')</script>`)
	})
	mux.HandleFunc("/away", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `<!doctype html><title>away</title><a href=/elsewhere>elsewhere</a>`)
	})
	_, site := serve(t, mux)
	f := newTestFetcher("")
	p := newPool(t, Config{Workers: 1, Timeout: 20 * time.Second, Idle: 300 * time.Millisecond})
	res, err := p.Render(t.Context(), site+"/", f)
	if err != nil {
		t.Fatalf("Render: %v", err)
	}
	t.Logf("links %q, navigations %d, url %s, asked %q", res.Links, res.Navigations, res.URL, f.asked)
	if !slices.Contains(res.Links, site+"/away") || !slices.Contains(res.Links, site+"/made") || slices.Contains(res.Links, site+"/elsewhere") {
		t.Errorf("links %q: want the page's and the navigation's, not those of where it went", res.Links)
	}
	if slices.Contains(f.asked, site+"/away") {
		t.Errorf("the browser asked for the page it was to navigate to")
	}
}

// What a script makes clickable is clicked, however it does so (a
// listener, an onclick property, a data-href handled by a listener on
// the document, a form's button with its own handler, whose form is not
// sent), and a control that says it deletes is not; an app whose feed
// scrolls inside an element, not the page, is scrolled there.
func TestRenderClicksWhatScriptsMakeClickable(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `<!doctype html><html><body style="margin:0">
<form action="/search"><input name="q"><button id="archive">Show archive</button></form>
<span id="prop">Popular</span>
<div data-href="/delegated">Delegated</div>
<button id="delete" type="button">Delete my account</button>
<div id="feed" style="height:300px; overflow-y:auto"><div style="height:2000px">feed</div></div>
<ul id="links"></ul>
<script>
function add(href) { const li = document.createElement('li'); const a = document.createElement('a'); a.href = href; a.textContent = href; li.appendChild(a); document.getElementById('links').appendChild(li); }
document.getElementById('archive').addEventListener('click', () => add('/archive'));
document.getElementById('prop').onclick = () => add('/prop');
document.addEventListener('click', (e) => { const d = e.target.closest('[data-href]'); if (d) add(d.dataset.href); });
document.getElementById('delete').addEventListener('click', () => add('/deleted'));
const feed = document.getElementById('feed');
let n = 0;
feed.addEventListener('scroll', () => {
  if (n >= 2 || feed.scrollTop + feed.clientHeight < feed.scrollHeight - 10) return;
  n++;
  const d = document.createElement('div'); d.style.height = '2000px';
  const a = document.createElement('a'); a.href = '/inner-' + n; a.textContent = 'more';
  feed.appendChild(a); feed.appendChild(d);
});
</script></body></html>`)
	})
	_, site := serve(t, mux)
	p := newPool(t, Config{Workers: 1, Timeout: 30 * time.Second, Idle: 300 * time.Millisecond})
	res, err := p.Render(t.Context(), site+"/", newTestFetcher(""))
	if err != nil {
		t.Fatalf("Render: %v", err)
	}
	t.Logf("links %q, clicks %d, scrolls %d, navigations %d", res.Links, res.Clicks, res.Scrolls, res.Navigations)
	for _, path := range []string{"/archive", "/prop", "/delegated", "/inner-1", "/inner-2"} {
		if !slices.Contains(res.Links, site+path) {
			t.Errorf("%s not found", path)
		}
	}
	for _, l := range res.Links {
		if strings.HasPrefix(l, site+"/search") || l == site+"/deleted" {
			t.Errorf("%s found: a form was sent, or a delete button clicked", l)
		}
	}
}

// Behaviours that would outlast the page's budget (here, clicks that
// each ask for a slow answer, with no time bound of their own but the
// page's) stop short of it: the page is read with what they found, not
// cut and its render lost.
func TestRenderBehavioursLeaveTimeToRead(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		var b strings.Builder
		b.WriteString(`<!doctype html><body><script>document.write('<a href="/made">made</a>')</script>`)
		for i := range 60 {
			fmt.Fprintf(&b, `<button type="button" onclick="fetch('/slow?%d')">Part %d</button>`, i, i)
		}
		io.WriteString(w, b.String())
	})
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		// A slow server: its latency, not a wait for the test's state.
		select {
		case <-time.After(300 * time.Millisecond):
		case <-r.Context().Done():
		}
	})
	_, site := serve(t, mux)
	p := newPool(t, Config{Workers: 1, Timeout: 5 * time.Second, Idle: 200 * time.Millisecond, MaxClicks: 1000, BehaviourTime: time.Minute})
	res, err := p.Render(t.Context(), site+"/", newTestFetcher(""))
	if err != nil {
		t.Fatalf("Render: %v (clicks %d)", err, res.Clicks)
	}
	if !slices.Contains(res.Links, site+"/made") || res.Clicks == 0 || res.Clicks >= 60 {
		t.Errorf("links %q after %d clicks: want /made, after some clicks but not all", res.Links, res.Clicks)
	}
	if p.Restarts() != 0 {
		t.Errorf("restarts = %d", p.Restarts())
	}
}

// A page that shows a dialog when clicked (an alert, a confirmation) does
// not hold the render: the dialog is not shown, a confirmation declined.
func TestRenderDialogsDoNotHoldThePage(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `<!doctype html><body>
<button type="button" id="tip">Show tip</button>
<button type="button" id="wipe">Reset view</button>
<script>
function add(href) { const a = document.createElement('a'); a.href = href; a.textContent = href; document.body.appendChild(a); }
document.getElementById('tip').addEventListener('click', () => { alert('Tip!'); add('/tip'); });
document.getElementById('wipe').addEventListener('click', () => { if (confirm('Sure?')) add('/wiped'); else add('/kept'); });
</script></body>`)
	})
	_, site := serve(t, mux)
	p := newPool(t, Config{Workers: 1, Timeout: 10 * time.Second, Idle: 200 * time.Millisecond})
	res, err := p.Render(t.Context(), site+"/", newTestFetcher(""))
	if err != nil {
		t.Fatalf("Render: %v", err)
	}
	if !slices.Contains(res.Links, site+"/tip") || !slices.Contains(res.Links, site+"/kept") || slices.Contains(res.Links, site+"/wiped") {
		t.Errorf("links %q: want /tip and /kept, not /wiped", res.Links)
	}
}

// Past its count, a navigation is no longer recorded, but still
// stopped: the render stays on the page, though it cannot cancel them
// (a sandboxed frame of another origin navigates the top twice).
func TestRenderNavigationsPastTheCountStillStay(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `<!doctype html><title>app</title>
<iframe sandbox="allow-scripts allow-top-navigation" srcdoc="<script>setTimeout(() => { top.location.href = 'http://`+r.Host+`/away-1'; setTimeout(() => { top.location.href = 'http://`+r.Host+`/away-2'; }, 200); }, 100)</script>"></iframe>
<script>document.body.insertAdjacentHTML('beforeend', '<a href=/made>made</a>')</script>`)
	})
	mux.HandleFunc("/away-2", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `<!doctype html><a href="/elsewhere">elsewhere</a>`)
	})
	_, site := serve(t, mux)
	f := newTestFetcher("")
	p := newPool(t, Config{Workers: 1, Timeout: 10 * time.Second, Idle: 500 * time.Millisecond, MaxNavigations: 1})
	res, err := p.Render(t.Context(), site+"/", f)
	if err != nil {
		t.Fatalf("Render: %v", err)
	}
	want := []string{site + "/made", site + "/away-1"}
	if !slices.Equal(res.Links, want) || res.Navigations != 1 {
		t.Errorf("links %q, navigations %d; want %q, 1", res.Links, res.Navigations, want)
	}
	if slices.Contains(f.asked, site+"/away-2") {
		t.Errorf("the page navigated away past the count")
	}
}
