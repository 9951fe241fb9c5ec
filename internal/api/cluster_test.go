package api

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/weft-crawler/weft/internal/testfill"
)

// TestClusterView: GET /v1/cluster lists the members the lease bucket
// shows, this node's stats from itself and another's from its API (asked
// with the caller's token), says which node did not answer and which
// partitions no one holds, and sums what it got.
func TestClusterView(t *testing.T) {
	other, err := New(Config{Addr: "127.0.0.1:0", Cluster: fakeNode{name: "n2"}}, resourcesOf(&fakeCrawl{}))
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var auth []string
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		auth = append(auth, r.Header.Get("Authorization"))
		mu.Unlock()
		other.Handler().ServeHTTP(w, r)
	}))
	defer ts.Close()
	gone := httptest.NewServer(http.NotFoundHandler())
	goneAddr := gone.Listener.Addr().String()
	gone.Close() // a node that announced itself and died

	members := []ClusterMember{
		{Node: "n0", API: goneAddr, Partitions: []int{4}},
		{Node: "n1", API: "127.0.0.1:1", Partitions: []int{2, 7}}, // this node: never asked over HTTP
		{Node: "n2", API: ts.Listener.Addr().String(), Partitions: []int{0, 1, 3}},
		// A node on another machine that announced a loopback address:
		// asking it reaches n2, which must not be counted twice.
		{Node: "n3", API: ts.Listener.Addr().String(), Partitions: []int{6}},
	}
	s, err := New(Config{Addr: "127.0.0.1:0", Token: "tok", Cluster: fakeNode{members: members}}, resourcesOf(&fakeCrawl{}))
	if err != nil {
		t.Fatal(err)
	}
	code, _, body := do(t, s, "GET", "/v1/cluster", "tok", "")
	var v ClusterView
	if err := json.Unmarshal([]byte(body), &v); code != 200 || err != nil {
		t.Fatalf("GET /v1/cluster: %d %v\n%s", code, err, body)
	}
	if v.Partitions != 8 || !slices.Equal(v.Unowned, []int{5}) || v.Complete || len(v.Nodes) != 4 {
		t.Errorf("view: partitions %d, unowned %v, complete %v, %d nodes", v.Partitions, v.Unowned, v.Complete, len(v.Nodes))
	}
	for _, n := range v.Nodes {
		switch n.Node {
		case "n0":
			if n.Stats != nil || n.Error == "" {
				t.Errorf("the dead node: stats %v, error %q", n.Stats, n.Error)
			}
		case "n1", "n2":
			if n.Stats == nil || n.Stats.Pages != 42 || n.Error != "" {
				t.Errorf("node %s: %+v", n.Node, n)
			}
		case "n3":
			if n.Stats != nil || !strings.Contains(n.Error, "answers as node n2") {
				t.Errorf("n3, whose address reaches n2: stats %v, error %q", n.Stats, n.Error)
			}
		}
	}
	if v.Totals.Pages != 84 || v.Totals.ByStatus["2xx"] != 80 || v.Totals.Frontier.Queued != 14 || v.Totals.Uploads.Files != 10 ||
		len(v.Totals.WARCFiles) != 2 || v.Totals.Cluster != nil || v.Handoffs != 8 || v.Snapshots != 12 {
		t.Errorf("totals: %+v, handoffs %d, snapshots %d", v.Totals, v.Handoffs, v.Snapshots)
	}
	mu.Lock()
	if !slices.Equal(auth, []string{"Bearer tok", "Bearer tok"}) {
		t.Errorf("n2's address was asked with %q, want the caller's token twice (as n2 and as n3)", auth)
	}
	mu.Unlock()

	if code, _, body := do(t, clusterServer(t, fakeNode{}), "GET", "/v1/cluster", "", ""); code != 503 || errorCode(t, body) != "cluster_unreachable" {
		t.Errorf("bucket unreadable: %d %s", code, body)
	}
	single, _ := New(Config{Addr: "127.0.0.1:0"}, resourcesOf(&fakeCrawl{}))
	if code, _, body := do(t, single, "GET", "/v1/cluster", "", ""); code != 404 || errorCode(t, body) != "not_clustered" {
		t.Errorf("one node: %d %s", code, body)
	}
}

func clusterServer(t *testing.T, n ClusterNode) *Server {
	t.Helper()
	s, err := New(Config{Addr: "127.0.0.1:0", Cluster: n}, resourcesOf(&fakeCrawl{}))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestAddStatsEveryField: every field of Stats is added (numbers summed,
// maps merged, lists joined), so a counter added later is not left out of
// the cluster's totals, and none makes addStats panic.
func TestAddStatsEveryField(t *testing.T) {
	var s Stats
	testfill.Fill(&s)
	s.Frontier.Wait = nil // a node's own (sum:"-"), not added
	sum := cloneStats(s)
	addStats(&sum, s)
	check(t, "Stats", reflect.ValueOf(sum), reflect.ValueOf(s))
}

// check: numbers doubled (elapsed kept: the longest), bools kept, maps'
// values doubled, lists twice as long.
func check(t *testing.T, path string, sum, one reflect.Value) {
	t.Helper()
	switch sum.Kind() {
	case reflect.Int, reflect.Int64:
		if sum.Int() != 2 {
			t.Errorf("%s: %d, want 2", path, sum.Int())
		}
	case reflect.Float64:
		if sum.Float() != 1 {
			t.Errorf("%s: %v, want the longer, 1", path, sum.Float())
		}
	case reflect.Map:
		check(t, path+"[k]", sum.MapIndex(reflect.ValueOf("k")), one.MapIndex(reflect.ValueOf("k")))
	case reflect.Slice:
		if sum.Len() != 2 {
			t.Errorf("%s: %d elements, want 2", path, sum.Len())
		}
	case reflect.Pointer:
		check(t, path, sum.Elem(), one.Elem())
	case reflect.Struct:
		for i := range sum.NumField() {
			if sum.Type().Field(i).Tag.Get("sum") == "-" {
				if !sum.Field(i).IsZero() {
					t.Errorf("%s.%s: a node's own, summed", path, sum.Type().Field(i).Name)
				}
				continue
			}
			check(t, path+"."+sum.Type().Field(i).Name, sum.Field(i), one.Field(i))
		}
	}
}
