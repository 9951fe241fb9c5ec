package operator

import (
	"encoding/json"
	"maps"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/weft-crawler/weft/internal/api"
	"github.com/weft-crawler/weft/internal/crawl"
)

// TestFetchSchema: the OpenAPI document's Fetch, what GET /v1/fetches
// lists, has exactly the fields of a line of the crawl's fetch log.
func TestFetchSchema(t *testing.T) {
	srv, err := api.New(api.Config{Addr: "127.0.0.1:0"}, api.Resources{})
	if err != nil {
		t.Fatal(err)
	}
	req := httptest.NewRequest("GET", "/v1/openapi.json", nil)
	req.Host = "127.0.0.1"
	w := httptest.NewRecorder()
	srv.Handler().ServeHTTP(w, req)
	var doc struct {
		Components struct {
			Schemas map[string]struct{ Properties map[string]any }
		}
	}
	if err := json.Unmarshal(w.Body.Bytes(), &doc); w.Code != 200 || err != nil {
		t.Fatalf("openapi.json: %d %v", w.Code, err)
	}
	var fields []string
	for f := range reflect.TypeFor[crawl.Fetch]().Fields() {
		fields = append(fields, strings.Split(f.Tag.Get("json"), ",")[0])
	}
	slices.Sort(fields)
	if got := slices.Sorted(maps.Keys(doc.Components.Schemas["Fetch"].Properties)); !slices.Equal(got, fields) {
		t.Errorf("Fetch schema %v, fetch log line %v", got, fields)
	}
}
