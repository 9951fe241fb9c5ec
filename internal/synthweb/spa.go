package synthweb

import (
	"net/http"
	"slices"
	"strings"
)

// ScriptSPA names the single-page-app host (opt in through
// Config.HostileKinds): a magazine's shell, modelled on a React or Vue
// site, whose "/" has no link in its HTML, a <noscript> and little text,
// and whose scripts make every way to ScriptSPAPages, one or two pages
// for each way a script makes a link:
//
//   - written at load, inline and from fetched JSON (/a/load, /a/json);
//   - written a moment after the load, by a timeout (/a/later);
//   - added by infinite scroll: reaching the bottom fetches the feed's
//     next part (/a/feed-1, /a/feed-2);
//   - inserted by a button's onclick attribute (/a/cat-1, /a/cat-2);
//   - navigated to by location.href from a card given a click listener
//     and a pointer cursor (/a/story);
//   - routed to by history.pushState when a menu item (a div) is clicked
//     (/a/about, /a/team), and by history.replaceState at load (the
//     router's canonical home, /a/home);
//   - navigated to by location.assign from a role=button span (/a/deals);
//   - opened by window.open from a button (/a/help).
//
// Besides, an "Admin" element navigates to /private/admin, which its
// robots.txt disallows, and a "Log out" button to /logout: a crawler
// asks for neither. Each page of ScriptSPAPages is a static page of text
// linking back to "/".
const ScriptSPA = "script-spa"

// ScriptSPAPages are the pages of ScriptSPA that only its scripts lead to.
var ScriptSPAPages = []string{"/a/load", "/a/json", "/a/later", "/a/feed-1", "/a/feed-2", "/a/cat-1", "/a/cat-2",
	"/a/story", "/a/about", "/a/team", "/a/home", "/a/deals", "/a/help"}

// ScriptSPAForbidden are paths of ScriptSPA its scripts lead to that a
// crawler never asks for: disallowed by robots.txt, and a log-out.
var ScriptSPAForbidden = []string{"/private/admin", "/logout"}

const spaHome = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>The Weekly Loom</title>
<style>
  body { font-family: sans-serif; margin: 0; }
  header { display: flex; gap: 1em; padding: 1em; background: #223; color: #fff; }
  .nav, .card, .admin { cursor: pointer; }
  .card { border: 1px solid #ccc; margin: 1em; padding: 1em; }
  #feed article { height: 900px; border-bottom: 1px solid #eee; }
</style>
<script src="/static/app.js" defer></script>
</head>
<body>
<noscript>You need to enable JavaScript to run this app.</noscript>
<header>
  <div class="nav" data-route="/a/about">About us</div>
  <div class="nav" data-route="/a/team">Our team</div>
  <span role="button" id="deals">Today's deals</span>
  <button type="button" id="help">Help centre</button>
  <div class="admin" onclick="location.href='/private/admin'">Admin</div>
  <button type="button" id="logout">Log out</button>
</header>
<main id="view"></main>
<div class="card" id="story"><h3>Featured story</h3><p>Read it now.</p></div>
<button type="button" onclick="showCategories()">Browse categories</button>
<ul id="links"></ul>
<section id="feed"><article></article><article></article></section>
<script>
function addLink(href, text) {
  const li = document.createElement('li');
  const a = document.createElement('a');
  a.href = href;
  a.textContent = text || href;
  li.appendChild(a);
  document.getElementById('links').appendChild(li);
}
function showCategories() { addLink('/a/cat-1', 'Science'); addLink('/a/cat-2', 'Culture'); }
addLink('/a/load', 'Latest');
setTimeout(() => addLink('/a/later', 'Just in'), 1200);
</script>
</body>
</html>
`

const spaJS = `(function () {
  function render(path) {
    document.getElementById('view').textContent = 'You are at ' + path;
  }
  if (location.pathname === '/') history.replaceState({}, '', '/a/home');
  render(location.pathname);
  document.querySelectorAll('.nav').forEach(function (d) {
    d.addEventListener('click', function () {
      history.pushState({}, '', d.dataset.route);
      render(d.dataset.route);
    });
  });
  document.getElementById('story').addEventListener('click', function () { location.href = '/a/story'; });
  document.getElementById('deals').addEventListener('click', function () { location.assign('/a/deals'); });
  document.getElementById('help').addEventListener('click', function () { window.open('/a/help', '_blank'); });
  document.getElementById('logout').addEventListener('click', function () { location.href = '/logout'; });
  fetch('/api/links.json').then(function (r) { return r.json(); }).then(function (ls) { ls.forEach(function (l) { addLink(l); }); });

  var part = 0, loading = false;
  window.addEventListener('scroll', function () {
    if (loading || part >= 2) return;
    if (window.innerHeight + window.scrollY < document.documentElement.scrollHeight - 200) return;
    loading = true;
    fetch('/api/feed.json?part=' + (part + 1)).then(function (r) { return r.json(); }).then(function (items) {
      part++;
      var feed = document.getElementById('feed');
      items.forEach(function (href) {
        var art = document.createElement('article');
        var a = document.createElement('a');
        a.href = href;
        a.textContent = 'Story ' + href;
        art.appendChild(a);
        feed.appendChild(art);
      });
      loading = false;
    });
  });
})();
`

// serveSPA answers the ScriptSPA host.
func (w *Web) serveSPA(rw *logWriter, r *http.Request, h *host) {
	path := r.URL.Path
	switch {
	case path == "/robots.txt":
		writeBody(rw, r, http.StatusOK, "text/plain; charset=utf-8", "User-agent: *\nDisallow: /private/\n")
	case path == "/":
		writeBody(rw, r, http.StatusOK, htmlUTF8, spaHome)
	case path == "/static/app.js":
		writeBody(rw, r, http.StatusOK, "text/javascript; charset=utf-8", spaJS)
	case path == "/api/links.json":
		writeBody(rw, r, http.StatusOK, "application/json", `["/a/json"]`)
	case path == "/api/feed.json":
		switch r.URL.Query().Get("part") {
		case "1":
			writeBody(rw, r, http.StatusOK, "application/json", `["/a/feed-1"]`)
		case "2":
			writeBody(rw, r, http.StatusOK, "application/json", `["/a/feed-2"]`)
		default:
			writeBody(rw, r, http.StatusOK, "application/json", `[]`)
		}
	case slices.Contains(ScriptSPAPages, path):
		title := "The Weekly Loom: " + strings.TrimPrefix(path, "/a/")
		writeBody(rw, r, http.StatusOK, htmlUTF8, w.smallPage(h, path, title, 200, []string{"/"}))
	default:
		notFound(rw, r)
	}
}
