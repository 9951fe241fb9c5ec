package synthweb

import (
	"net/http"
	"strings"
	"testing"
)

// The museum's collection: its index lists every object number in
// order, the withdrawn ones first; each withdrawn number answers 200
// with one page, the same for all; each object has a page of its own;
// numbers outside the collection, and spellings of one, are missing.
func TestCollection(t *testing.T) {
	t.Parallel()
	c, site, body := oneHostile(t, 3, Collection)
	index := hrefs([]byte(body("/objects/")))
	var objects []string
	for _, l := range index {
		if strings.HasPrefix(l, "/object?") {
			objects = append(objects, l)
		}
	}
	if len(objects) != CollectionObjects || objects[0] != CollectionObject(1) || objects[CollectionObjects-1] != CollectionObject(CollectionObjects) {
		t.Fatalf("the index lists %d objects (%v ...); want %d, in order", len(objects), objects[:min(3, len(objects))], CollectionObjects)
	}
	gone := body(CollectionObject(1))
	if body(CollectionObject(CollectionWithdrawn)) != gone || !strings.Contains(gone, "not available") {
		t.Error("the withdrawn numbers answer different pages; want one page, the same for all")
	}
	first, last := body(CollectionObject(CollectionWithdrawn+1)), body(CollectionObject(CollectionObjects))
	if first == last || first == gone || !strings.Contains(first, "Object 41") {
		t.Error("two objects answer the same page; want a page each")
	}
	for _, p := range []string{"/object?id=0", "/object?id=301", "/object?id=041", "/object?id=41&x=1", "/object"} {
		if r := get(t, c, site+p); r.status != http.StatusNotFound {
			t.Errorf("%s: %d, want 404", p, r.status)
		}
	}
}
