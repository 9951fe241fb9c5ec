package synthweb

import (
	"net/http"
	"strconv"
)

// Collection is a museum's online collection: CollectionObjects objects
// at /object?id=N, all of them listed in order of accession on one index
// page (/objects/), the newest on the home page. The first
// CollectionWithdrawn, the oldest, were withdrawn from the online
// collection, and each answers 200 with one page saying so, as many
// catalogues and shops keep their old numbers answering: a run of
// copies of one page, at the head of the index, before the objects. An
// object's page links the index and the home page.
// There is no robots.txt. Of its URLs, the objects are worth a crawl;
// the withdrawn numbers show one page, once.
const Collection = "collection"

// CollectionObjects is how many object numbers the collection has, and
// CollectionWithdrawn how many of them, the first, were withdrawn.
const (
	CollectionObjects   = 300
	CollectionWithdrawn = 40
)

// CollectionObject returns the path and query of object n (1 the oldest).
func CollectionObject(n int) string { return "/object?id=" + strconv.Itoa(n) }

// serveCollection answers Collection.
func (w *Web) serveCollection(rw *logWriter, r *http.Request, h *host) {
	menu := []string{"/", "/objects/"}
	page := func(key, title string, links []string) {
		writeBody(rw, r, http.StatusOK, htmlUTF8, w.smallPage(h, key, title, trapWords, append(links, menu...)))
	}
	switch r.URL.Path {
	case "/":
		page("/", "The collection", []string{CollectionObject(CollectionObjects)})
	case "/objects/":
		links := make([]string, 0, CollectionObjects)
		for n := 1; n <= CollectionObjects; n++ {
			links = append(links, CollectionObject(n))
		}
		page("/objects/", "All objects", links)
	case "/object":
		n, err := strconv.Atoi(r.URL.Query().Get("id"))
		switch {
		case err != nil || n < 1 || n > CollectionObjects || r.URL.Query().Encode() != "id="+strconv.Itoa(n):
			notFound(rw, r)
		case n <= CollectionWithdrawn:
			page("withdrawn", "Object not available", nil)
		default:
			page(r.URL.RequestURI(), "Object "+strconv.Itoa(n), nil)
		}
	default:
		notFound(rw, r)
	}
}
