package synthweb

import (
	"net/http"
	"slices"
	"strconv"
	"strings"
)

// Names of the script hosts, which start only when Config.HostileKinds
// names them (Hostile alone does not start them): pages whose links a
// crawler finds only by running their scripts in a browser.
const (
	// ScriptApp's "/" is a single-page app: a title, a <noscript>, no
	// link in its HTML and little text. Its scripts make every link:
	// inline ("/s/inline"), from the external /app.js ("/s/external"),
	// from the JSON /links.json that app.js fetches ("/s/json-1",
	// "/s/json-2"), and behind a "Load more" button that fetches
	// /more.json ("/s/clicked"); it shows /logo.png, and loads /lib.js
	// from the ScriptNone host when that is started (a script of another
	// host, as from a CDN). ScriptAppLinks lists the pages; each is a
	// static page of text linking back to "/".
	ScriptApp = "script-app"
	// ScriptNone looks like an app (a <noscript>, a script, little
	// text, no navigation but a link or two) but its script adds no
	// link: "/" links /p/1, and /p/N links "/" and the next page, /p/8
	// back to /p/1, in their HTML. Rendering finds nothing the HTML did
	// not say: a crawler that learns so should stop rendering it.
	ScriptNone = "script-none"
	// ScriptHang's "/" links to /p/1 in its HTML, and its script never
	// yields (a loop that does not end): a browser rendering it must be
	// cut off, and the page keep the link its HTML has.
	ScriptHang = "script-hang"
	// ScriptThrottle's "/" is an app whose script fetches /api.json, which
	// answers 429 with Retry-After: ScriptThrottleRetry seconds; it links
	// /p/1 in its HTML, and names no favicon to ask for. A crawler that
	// renders it must wait that long before its next request to the
	// host, which comes after the render.
	ScriptThrottle = "script-throttle"
)

// ScriptThrottleRetry is the Retry-After, in seconds, of ScriptThrottle's
// /api.json.
const ScriptThrottleRetry = 3

// ScriptAppLinks are the paths of the pages of ScriptApp that only its
// scripts link to.
var ScriptAppLinks = []string{"/s/inline", "/s/external", "/s/json-1", "/s/json-2", "/s/clicked"}

// ScriptNonePages is how many /p/N pages ScriptNone has besides "/".
const ScriptNonePages = 8

// optInKinds are kinds started only when HostileKinds names them, after
// every kind of HostileKindsAll.
var optInKinds = [...]string{ScriptApp, ScriptNone, ScriptHang, ScriptThrottle,
	FailOutage, FailStorm429Bare, FailStorm503Bare, FailFlaky, FailRobots500, FailRobots429, ScriptDocs, ScriptDocsApp,
	BombBrotli, BombZstd, ScriptSPA, FacetShop, GatedShop, WordPress, PathFacetShop, Forum, FilterShop, FilterPairShop, MediaWiki, Newsroom, Collection}

const scriptAppHome = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>App</title>
<script src="/app.js"></script>
</head>
<body>
<noscript>This app needs JavaScript.</noscript>
<img src="/logo.png" alt="">
<ul id="links"></ul>
<button id="more" type="button">Load more</button>
<script>
function addLink(href) {
  const li = document.createElement('li');
  const a = document.createElement('a');
  a.href = href;
  a.textContent = href;
  li.appendChild(a);
  document.getElementById('links').appendChild(li);
}
addLink('/s/inline');
document.getElementById('more').addEventListener('click', () => {
  fetch('/more.json').then(r => r.json()).then(ls => ls.forEach(addLink));
});
</script>
</body>
</html>
`

const scriptAppJS = `document.addEventListener('DOMContentLoaded', () => {
  addLink('/s/external');
  fetch('/links.json').then(r => r.json()).then(ls => ls.forEach(addLink));
});
`

// logoPNG is a 1×1 transparent PNG.
const logoPNG = "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89\x00\x00\x00\rIDATx\x9cc\xf8\x0f\x00\x00\x01\x01\x00\x05\x18\xd8N\x00\x00\x00\x00IEND\xaeB`\x82"

// hostOfKind is the started host of a hostile or script kind, or nil.
func (w *Web) hostOfKind(kind string) *host {
	for _, h := range w.hosts[w.nOrdinary:] {
		if h.hostile == kind {
			return h
		}
	}
	return nil
}

// serveScript answers the script hosts.
func (w *Web) serveScript(rw *logWriter, r *http.Request, h *host) {
	path := r.URL.Path
	switch h.hostile {
	case ScriptApp:
		switch {
		case path == "/":
			home := scriptAppHome
			if other := w.hostOfKind(ScriptNone); other != nil {
				// A script of another host, as sites load libraries
				// from a CDN: the browser's request must wait for that
				// host's clock.
				home = strings.Replace(home, "</head>", `<script src="http://`+other.authority+`/lib.js"></script>`+"\n</head>", 1)
			}
			if p := w.cfg.ScriptProbe; p != "" {
				probe := "<script>\nfetch('http://" + p + "/steal').catch(() => {});\nnew Image().src = 'http://" + p + "/pixel.png';\ntry { new WebSocket('ws://" + p + "/ws'); } catch (e) {}\n</script>\n</body>"
				home = strings.Replace(home, "</body>", probe, 1)
			}
			writeBody(rw, r, http.StatusOK, htmlUTF8, home)
		case path == "/app.js":
			writeBody(rw, r, http.StatusOK, "text/javascript; charset=utf-8", scriptAppJS)
		case path == "/links.json":
			writeBody(rw, r, http.StatusOK, "application/json", `["/s/json-1", "/s/json-2"]`)
		case path == "/more.json":
			writeBody(rw, r, http.StatusOK, "application/json", `["/s/clicked"]`)
		case path == "/logo.png":
			writeBody(rw, r, http.StatusOK, "image/png", logoPNG)
		case slices.Contains(ScriptAppLinks, path):
			writeBody(rw, r, http.StatusOK, htmlUTF8, w.smallPage(h, path, "Page "+strings.TrimPrefix(path, "/s/"), 300, []string{"/"}))
		default:
			notFound(rw, r)
		}
	case ScriptHang:
		switch path {
		case "/":
			writeBody(rw, r, http.StatusOK, htmlUTF8, `<!DOCTYPE html>
<html><head><title>Hang</title></head><body>
<noscript>Needs JavaScript.</noscript>
<a href="/p/1">a link in the HTML</a>
<script>setTimeout(() => { for (;;) {} }, 0);</script>
</body></html>
`)
		case "/p/1":
			writeBody(rw, r, http.StatusOK, htmlUTF8, w.smallPage(h, path, "Still here", 100, []string{"/"}))
		default:
			notFound(rw, r)
		}
	case ScriptThrottle:
		switch path {
		case "/":
			writeBody(rw, r, http.StatusOK, htmlUTF8, `<!DOCTYPE html>
<html><head><title>Throttled app</title><link rel="icon" href="data:,"></head><body>
<noscript>Needs JavaScript.</noscript>
<a href="/p/1">a link in the HTML</a>
<script>fetch("/api.json").then(r => r.text()).then(t => { document.body.insertAdjacentHTML("beforeend", "<p>" + t.length + "</p>"); });</script>
</body></html>
`)
		case "/api.json":
			rw.Header().Set("Retry-After", strconv.Itoa(ScriptThrottleRetry))
			writeBody(rw, r, http.StatusTooManyRequests, "application/json", `{"error":"slow down"}`)
		case "/p/1":
			writeBody(rw, r, http.StatusOK, htmlUTF8, w.smallPage(h, path, "After the wait", 100, []string{"/"}))
		default:
			notFound(rw, r)
		}
	case ScriptNone:
		if path == "/lib.js" {
			writeBody(rw, r, http.StatusOK, "text/javascript; charset=utf-8", "window.weftLib = true;\n")
			return
		}
		var hrefs []string
		switch n, ok := strings.CutPrefix(path, "/p/"); {
		case path == "/":
			hrefs = []string{"/p/1"}
		case ok && len(n) == 1 && n[0] >= '1' && n[0] < '1'+ScriptNonePages:
			next := n[0] + 1
			if next == '1'+ScriptNonePages {
				next = '1'
			}
			hrefs = []string{"/", "/p/" + string(rune(next))}
		default:
			notFound(rw, r)
			return
		}
		b := w.smallPage(h, path, "Almost an app", 20, hrefs)
		extra := "<noscript>Better with JavaScript.</noscript>\n<script>document.title = 'Almost an app: ' + location.pathname;</script>\n</body>"
		b = []byte(strings.Replace(string(b), "</body>", extra, 1))
		writeBody(rw, r, http.StatusOK, htmlUTF8, b)
	}
}
