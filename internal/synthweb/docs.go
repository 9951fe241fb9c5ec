package synthweb

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"net/http"
	"strconv"
	"strings"
)

// ScriptDocs is a static documentation site as Sphinx, MkDocs or Hugo
// build one and nginx serves it: every page of it is a file, and its
// scripts make no link. It starts only when Config.HostileKinds names it.
//
// "/" is a short index (under 1 KiB of text) whose table of contents
// links every page; each page of DocsPages is a few KiB of text with the
// same navigation (a sidebar that links "/", every page and the search
// page), previous and next links, and a search form. /search.html says
// in a <noscript> that search needs JavaScript; its results are built by
// /_static/searchtools.js from /searchindex.json, only for a query
// (?q=), so without one it holds the navigation and nothing more. Every
// page loads the theme's style sheet (whose url()s name
// /_static/header.png, which the header shows, and DocsSheetOnly, which
// no page shows) and scripts (a jQuery-like library, the theme's
// doctools, a light/dark toggle), shows the logo /_static/logo.svg
// twice (header and sidebar) and /_static/note.png, and names no icon,
// so a browser (and a crawler that archives requisites) asks for
// /favicon.ico. Style sheets, scripts, the SVG and JSON are sent gzipped
// to a client that accepts it, as nginx's gzip_types does; robots.txt is
// 404.
const ScriptDocs = "script-docs"

// ScriptDocsApp is ScriptDocs with a playground: its index links, after
// the pages of its table of contents, to DocsPlayground, an app shell (a
// <noscript>, the theme's style sheet and logo, no navigation) whose
// script builds links to DocsExamples from /playground/examples.json.
// Each example is a shell too, whose script fills in a text and shows
// /_static/note.png, linking back to the playground. A crawler that
// renders script-built pages renders these, and asks for requisites
// the site's static pages queued (the playground before their leases
// come, the examples after).
const ScriptDocsApp = "script-docs-app"

// DocsPlayground is the path of ScriptDocsApp's playground.
const DocsPlayground = "/playground/"

// DocsExamples are the pages only the playground's script links to.
var DocsExamples = []string{"/playground/ex/1.html", "/playground/ex/2.html"}

// DocsPages are the paths of ScriptDocs's pages besides "/" and
// /search.html.
var DocsPages = []string{
	"/guide/install.html", "/guide/quickstart.html", "/guide/configuration.html", "/guide/crawling.html",
	"/guide/archives.html", "/reference/cli.html", "/reference/api.html", "/reference/faq.html",
}

// DocsShared are the requisites every page of ScriptDocs needs: a
// crawler that archives requisites, or renders the pages, needs each of
// them once.
var DocsShared = []string{
	"/_static/theme.css", "/_static/header.png", "/_static/jquery.js", "/_static/doctools.js",
	"/_static/theme-toggle.js", "/_static/logo.svg", "/_static/note.png", "/favicon.ico",
}

// DocsSheetOnly is the image ScriptDocs's style sheet names for a class
// no page uses: a browser never asks for it, and a crawler that archives
// the sheet's requisites fetches it from the sheet.
const DocsSheetOnly = "/_static/warning.png"

// docsTitles are the pages' titles, in the order of DocsPages.
var docsTitles = []string{
	"Installing", "Quick start", "Configuration", "Crawling a site",
	"Archives", "Command line", "HTTP API", "Questions",
}

// docsFiles are ScriptDocs's static files other than its pages:
// content type, body, and whether nginx would gzip it.
var docsFiles = map[string]struct {
	ctype string
	body  string
	gzip  bool
}{
	"/_static/theme.css": {"text/css", `body { font-family: Georgia, serif; margin: 0; }
.header { background: #f4f4f4 url(header.png) repeat-x; padding: 8px 16px; }
.sphinxsidebar { float: left; width: 230px; }
.body { margin-left: 250px; max-width: 800px; }
.admonition.note { background: #eef; padding-left: 28px; }
.admonition.warning { background: #fee url(warning.png) no-repeat; padding-left: 28px; }
html[data-theme="dark"] body { background: #111; color: #ddd; }
`, true},
	"/_static/jquery.js": {"application/javascript", `/*! a jQuery-like core: selectors, ready, events */
(function (w, d) {
  function Q(nodes) { this.nodes = nodes; }
  Q.prototype.on = function (ev, fn) { this.nodes.forEach(n => n.addEventListener(ev, fn)); return this; };
  Q.prototype.addClass = function (c) { this.nodes.forEach(n => n.classList.add(c)); return this; };
  Q.prototype.toggleClass = function (c) { this.nodes.forEach(n => n.classList.toggle(c)); return this; };
  function $(sel) {
    if (typeof sel === 'function') {
      if (d.readyState !== 'loading') sel(); else d.addEventListener('DOMContentLoaded', sel);
      return;
    }
    return new Q(typeof sel === 'string' ? Array.from(d.querySelectorAll(sel)) : [sel]);
  }
  w.jQuery = w.$ = $;
})(window, document);
`, true},
	"/_static/doctools.js": {"application/javascript", `/* The theme's tools: keyboard navigation and search-term highlighting. */
$(() => {
  const terms = new URLSearchParams(location.search).get('highlight');
  if (terms) $('.body p').addClass('highlighted');
  document.addEventListener('keydown', (e) => {
    if (e.altKey || e.ctrlKey || e.metaKey) return;
    const rel = e.key === 'ArrowLeft' ? 'prev' : e.key === 'ArrowRight' ? 'next' : '';
    const a = rel && document.querySelector('link[rel="' + rel + '"]');
    if (a) location.href = a.href;
  });
});
`, true},
	"/_static/theme-toggle.js": {"application/javascript", `/* Light and dark: remembered, and switched by the header's button. */
(() => {
  const root = document.documentElement;
  try { root.dataset.theme = localStorage.getItem('theme') || 'light'; } catch (e) {}
  document.addEventListener('DOMContentLoaded', () => {
    const b = document.querySelector('.theme-toggle');
    if (b) b.addEventListener('click', () => {
      root.dataset.theme = root.dataset.theme === 'dark' ? 'light' : 'dark';
      try { localStorage.setItem('theme', root.dataset.theme); } catch (e) {}
    });
  });
})();
`, true},
	"/_static/searchtools.js": {"application/javascript", `/* Search: results are built from the index for a query, and only then. */
$(() => {
  const q = (new URLSearchParams(location.search).get('q') || '').trim().toLowerCase();
  if (!q) return;
  fetch('/searchindex.json').then(r => r.json()).then(index => {
    const ul = document.getElementById('search-results');
    index.docs.forEach(doc => {
      if (!doc.title.toLowerCase().includes(q) && !doc.terms.includes(q)) return;
      const li = document.createElement('li');
      const a = document.createElement('a');
      a.href = doc.url + '?highlight=' + encodeURIComponent(q);
      a.textContent = doc.title;
      li.appendChild(a);
      ul.appendChild(li);
    });
  });
});
`, true},
	"/_static/logo.svg": {"image/svg+xml", `<svg xmlns="http://www.w3.org/2000/svg" width="120" height="32" viewBox="0 0 120 32"><rect width="120" height="32" rx="4" fill="#2b5b84"/><text x="12" y="22" font-family="sans-serif" font-size="16" fill="#fff">weft docs</text></svg>
`, true},
	"/_static/note.png":   {"image/png", logoPNG, false},
	"/_static/header.png": {"image/png", logoPNG, false},
	DocsSheetOnly:         {"image/png", logoPNG, false},
	"/favicon.ico":        {"image/x-icon", docsFavicon(), false},
}

// docsFavicon is an ICO file holding the 1×1 PNG.
func docsFavicon() string {
	var b bytes.Buffer
	b.Write([]byte{0, 0, 1, 0, 1, 0})        // ICONDIR: an icon, one image
	b.Write([]byte{1, 1, 0, 0, 1, 0, 32, 0}) // 1×1, no palette, 1 plane, 32 bits
	_ = binary.Write(&b, binary.LittleEndian, uint32(len(logoPNG)))
	_ = binary.Write(&b, binary.LittleEndian, uint32(22)) // the PNG follows the 22-byte header
	b.WriteString(logoPNG)
	return b.String()
}

// docsSearchIndex is /searchindex.json: what searchtools.js reads.
func docsSearchIndex() string {
	var b strings.Builder
	b.WriteString(`{"docs": [`)
	for i, p := range DocsPages {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(`{"url": "` + p + `", "title": "` + docsTitles[i] + `", "terms": ["weft", "crawl"]}`)
	}
	b.WriteString("]}\n")
	return b.String()
}

// serveDocs answers the ScriptDocs host.
func (w *Web) serveDocs(rw *logWriter, r *http.Request, h *host) {
	path := r.URL.Path
	if f, ok := docsFiles[path]; ok {
		writeMaybeGzipped(rw, r, f.ctype, f.body, f.gzip)
		return
	}
	switch path {
	case "/", "/index.html":
		var body strings.Builder
		body.WriteString("<h1>Welcome to weft's documentation</h1>\n<p>weft crawls the web politely and archives what it finds.</p>\n<div class=\"toctree-wrapper\">\n<ul>\n")
		for i, p := range DocsPages {
			body.WriteString(`<li class="toctree-l1"><a href="` + p + `">` + docsTitles[i] + "</a></li>\n")
		}
		body.WriteString("</ul>\n</div>\n")
		if h.hostile == ScriptDocsApp {
			body.WriteString(`<p>Try it in the <a href="` + DocsPlayground + `">playground</a>.</p>` + "\n")
		}
		body.WriteString("<h2>Indices and tables</h2>\n<ul><li><a href=\"/search.html\">Search Page</a></li></ul>\n")
		writeBody(rw, r, http.StatusOK, htmlUTF8, w.docsPage(h, "/", "weft documentation", body.String(), "", DocsPages[0], ""))
	case "/search.html":
		body := `<h1 id="search-documentation">Search</h1>
<noscript>
<div class="admonition warning"><p>Please activate JavaScript to enable the search functionality.</p></div>
</noscript>
<p>Searching for multiple words only shows matches that contain all words.</p>
<form action="" method="get"><input type="text" name="q" value=""><input type="submit" value="search"></form>
<div class="search-results"><ul id="search-results"></ul></div>
`
		writeBody(rw, r, http.StatusOK, htmlUTF8, w.docsPage(h, path, "Search", body, "", "", `<script src="/_static/searchtools.js"></script>`+"\n"))
	case "/searchindex.json":
		writeMaybeGzipped(rw, r, "application/json", docsSearchIndex(), true)
	case DocsPlayground, "/playground/examples.json", DocsExamples[0], DocsExamples[1]:
		if h.hostile != ScriptDocsApp {
			notFound(rw, r)
			return
		}
		w.servePlayground(rw, r, path)
	default:
		i := -1
		for k, p := range DocsPages {
			if p == path {
				i = k
			}
		}
		if i < 0 {
			notFound(rw, r)
			return
		}
		ki, _ := hostileKindIndex(h.hostile)
		r0 := newRNG(w.cfg.Seed, streamTrap, uint64(ki), hashString(path))
		var body []byte
		body = append(body, "<h1>"+docsTitles[i]+"</h1>\n"...)
		for range 4 {
			body = append(body, "<p>"...)
			body = w.text.appendWords(body, &r0, 90)
			body = append(body, ".</p>\n"...)
		}
		body = append(body, `<div class="admonition note"><img src="/_static/note.png" alt=""><p>`...)
		body = w.text.appendWords(body, &r0, 20)
		body = append(body, ".</p></div>\n"...)
		prev, next := "/", ""
		if i > 0 {
			prev = DocsPages[i-1]
		}
		if i+1 < len(DocsPages) {
			next = DocsPages[i+1]
		}
		writeBody(rw, r, http.StatusOK, htmlUTF8, w.docsPage(h, path, docsTitles[i], string(body), prev, next, ""))
	}
}

// docsPage lays out a page of ScriptDocs as a Sphinx theme does: the
// theme's style sheet and scripts, the header with the logo and the theme
// toggle, the sidebar's navigation and search box, the body, the previous
// and next links, and the footer.
func (w *Web) docsPage(h *host, path, title, body, prev, next, extraHead string) string {
	var b strings.Builder
	b.WriteString(`<!DOCTYPE html>
<html lang="en" data-content_root="/">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<title>` + title + ` — weft 1.0 documentation</title>
<link rel="stylesheet" type="text/css" href="/_static/theme.css">
<script>const DOCUMENTATION_OPTIONS = {VERSION: '1.0', LANGUAGE: 'en', FILE_SUFFIX: '.html', HAS_SOURCE: false};</script>
<script src="/_static/jquery.js"></script>
<script src="/_static/doctools.js"></script>
<script src="/_static/theme-toggle.js"></script>
`)
	b.WriteString(extraHead)
	b.WriteString(`<link rel="search" title="Search" href="/search.html">` + "\n")
	if prev != "" {
		b.WriteString(`<link rel="prev" title="Previous" href="` + prev + `">` + "\n")
	}
	if next != "" {
		b.WriteString(`<link rel="next" title="Next" href="` + next + `">` + "\n")
	}
	b.WriteString(`</head>
<body>
<div class="header"><a href="/"><img class="logo" src="/_static/logo.svg" alt="weft"></a>
<button class="theme-toggle" type="button" title="Switch between light and dark">&#x25D0;</button></div>
<div class="sphinxsidebar" role="navigation" aria-label="Main">
<a href="/"><img class="logo" src="/_static/logo.svg" alt="weft"></a>
<h3>Navigation</h3>
<ul>
`)
	for i, p := range DocsPages {
		cls := "toctree-l1"
		if p == path {
			cls += " current"
		}
		b.WriteString(`<li class="` + cls + `"><a class="reference internal" href="` + p + `">` + docsTitles[i] + "</a></li>\n")
	}
	b.WriteString(`</ul>
<div id="searchbox" style="display: none" role="search">
<h3>Quick search</h3>
<form class="search" action="/search.html" method="get"><input type="text" name="q" aria-label="search"><input type="submit" value="Go"></form>
</div>
<script>document.getElementById('searchbox').style.display = "block"</script>
</div>
<div class="body" role="main">
`)
	b.WriteString(body)
	b.WriteString("</div>\n<div class=\"related\">")
	if prev != "" {
		b.WriteString(`<a href="` + prev + `" title="previous chapter">&laquo; previous</a> `)
	}
	if next != "" {
		b.WriteString(`<a href="` + next + `" title="next chapter">next &raquo;</a>`)
	}
	b.WriteString("</div>\n<div class=\"footer\">&copy; 2026, the weft authors. Built with Sphinx, served by " + h.name + ".</div>\n</body>\n</html>\n")
	return b.String()
}

// writeMaybeGzipped writes body, gzipped when gz is set and the client
// accepts gzip, as nginx does for its gzip_types; with Config.Encoding,
// in that coding, as every body.
func writeMaybeGzipped(rw *logWriter, r *http.Request, ctype, body string, gz bool) {
	if rw.enc != nil || !gz || !strings.Contains(r.Header.Get("Accept-Encoding"), "gzip") {
		writeBody(rw, r, http.StatusOK, ctype, body)
		return
	}
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	_, _ = zw.Write([]byte(body))
	_ = zw.Close()
	rw.Header().Set("Content-Encoding", "gzip")
	rw.Header().Set("Vary", "Accept-Encoding")
	rw.Header().Set("Content-Length", strconv.Itoa(b.Len()))
	rw.Header().Set("Content-Type", ctype)
	rw.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = rw.Write(b.Bytes())
	}
}

// servePlayground answers ScriptDocsApp's playground and its examples.
func (w *Web) servePlayground(rw *logWriter, r *http.Request, path string) {
	shell := func(title, script string) string {
		return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>` + title + `</title>
<link rel="stylesheet" type="text/css" href="/_static/theme.css">
</head>
<body>
<div class="header"><a href="/"><img class="logo" src="/_static/logo.svg" alt="weft"></a></div>
<noscript>The playground needs JavaScript.</noscript>
<div id="app"></div>
<script>` + script + `</script>
</body>
</html>
`
	}
	switch path {
	case DocsPlayground:
		writeBody(rw, r, http.StatusOK, htmlUTF8, shell("weft playground", `
fetch('/playground/examples.json').then(r => r.json()).then(exs => {
  const app = document.getElementById('app');
  exs.forEach(e => {
    const a = document.createElement('a');
    a.href = e.url;
    a.textContent = e.title;
    app.appendChild(a);
  });
});`))
	case "/playground/examples.json":
		writeMaybeGzipped(rw, r, "application/json", `[{"url": "`+DocsExamples[0]+`", "title": "A first crawl"}, {"url": "`+DocsExamples[1]+`", "title": "A crawl that renders"}]`, true)
	default:
		writeBody(rw, r, http.StatusOK, htmlUTF8, shell("weft playground: an example", `
document.getElementById('app').innerHTML = '<div class="admonition note"><img src="/_static/note.png" alt=""><p>An example, run in your browser.</p></div><a href="`+DocsPlayground+`">back</a>';`))
	}
}
