package api

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"sync"
	"time"

	"github.com/weft-crawler/weft/internal/live"
)

// ClusterMember is a live node of a cluster, as the lease bucket shows it.
type ClusterMember = live.ClusterMember

// ClusterView is the body of GET /v1/cluster: the whole crawl as every
// node's /v1/stats tells it, asked by the node that answers.
type ClusterView struct {
	Partitions int               `json:"partitions"` // P, fixed for the crawl
	Unowned    []int             `json:"unowned"`    // partitions no lease names now (a dead node's, until they are taken)
	Complete   bool              `json:"complete"`   // every node answered: the totals are the whole crawl's
	Handoffs   int               `json:"handoffs"`   // sum over the nodes that answered
	Snapshots  int64             `json:"snapshots"`  // sum over the nodes that answered
	Nodes      []ClusterNodeView `json:"nodes"`
	Totals     Stats             `json:"totals"` // sums over the nodes that answered (elapsed: the longest; paused: all paused)
}

// ClusterNodeView is one node in ClusterView.
type ClusterNodeView struct {
	Node       string `json:"node"`
	API        string `json:"api,omitempty"`
	Partitions []int  `json:"partitions"`      // as the lease bucket says
	Stats      *Stats `json:"stats,omitempty"` // its /v1/stats; absent when it did not answer
	Error      string `json:"error,omitempty"` // why it did not answer
}

// clusterAskTimeout bounds the fan-out to the other nodes.
const clusterAskTimeout = 3 * time.Second

// cluster answers for the whole crawl: the members from the lease bucket,
// each one's stats (this node's from itself, the others' from their APIs,
// asked at once with the caller's credentials) and their sums.
func (s *Server) cluster(w http.ResponseWriter, r *http.Request) error {
	n := s.cfg.Cluster
	if n == nil {
		return &Error{Status: http.StatusNotFound, Code: "not_clustered", Message: "this crawl runs on one node (weft crawl --cluster runs a node of a cluster)"}
	}
	ctx, cancel := context.WithTimeout(r.Context(), clusterAskTimeout)
	defer cancel()
	members, err := n.Members(ctx)
	if err != nil {
		return &Error{Status: http.StatusServiceUnavailable, Code: "cluster_unreachable", Message: "the lease bucket could not be read: " + err.Error()}
	}
	if !slices.ContainsFunc(members, func(m ClusterMember) bool { return m.Node == n.Name() }) {
		members = append(members, ClusterMember{Node: n.Name()}) // this node, between two announcements
	}
	view := ClusterView{Partitions: n.PartitionCount(), Unowned: []int{}, Complete: true, Nodes: make([]ClusterNodeView, len(members))}
	owned := map[int]bool{}
	var wg sync.WaitGroup
	for i, m := range members {
		for _, p := range m.Partitions {
			owned[p] = true
		}
		v := &view.Nodes[i]
		*v = ClusterNodeView{Node: m.Node, API: m.API, Partitions: m.Partitions}
		if v.Partitions == nil {
			v.Partitions = []int{}
		}
		if m.Node == n.Name() {
			st := statsOf(s.res.Crawl, n)
			v.Stats = &st
			continue
		}
		if m.API == "" {
			v.Error = "no API announced"
			continue
		}
		wg.Go(func() {
			st, err := askStats(ctx, m.Node, m.API, r.Header.Get("Authorization"))
			if err != nil {
				v.Error = err.Error()
				return
			}
			v.Stats = st
		})
	}
	wg.Wait()
	for p := range view.Partitions {
		if !owned[p] {
			view.Unowned = append(view.Unowned, p)
		}
	}
	first := true
	for _, v := range view.Nodes {
		if v.Stats == nil {
			view.Complete = false
			continue
		}
		if v.Stats.Cluster != nil {
			view.Handoffs += v.Stats.Cluster.Handoffs
			view.Snapshots += v.Stats.Cluster.Snapshots
		}
		if first {
			view.Totals = cloneStats(*v.Stats)
			first = false
		} else {
			addStats(&view.Totals, *v.Stats)
		}
	}
	view.Totals.Cluster = nil
	return writeJSON(w, http.StatusOK, view)
}

// askStats gets another node's /v1/stats.
func askStats(ctx context.Context, node, addr, auth string) (*Stats, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/v1/stats", nil)
	if err != nil {
		return nil, err
	}
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s/v1/stats: %s", addr, resp.Status)
	}
	var st Stats
	if err := json.NewDecoder(http.MaxBytesReader(nil, resp.Body, 16<<20)).Decode(&st); err != nil {
		return nil, fmt.Errorf("%s/v1/stats: %w", addr, err)
	}
	if st.Cluster == nil || st.Cluster.Node != node {
		// Not the node asked for (a loopback address announced by a node
		// on another machine reaches this one): not counted twice.
		got := "not a node of a cluster"
		if st.Cluster != nil {
			got = "node " + st.Cluster.Node
		}
		return nil, fmt.Errorf("%s answers as %s, not %s: give the node --advertise", addr, got, node)
	}
	return &st, nil
}

// cloneStats copies s with maps and lists of its own, for addStats to add to.
func cloneStats(s Stats) Stats {
	var c Stats
	b, _ := json.Marshal(s)
	_ = json.Unmarshal(b, &c)
	return c
}

// addStats adds o into s, field by field, so that a counter added to Stats
// is summed without a change here: numbers and count maps are added,
// lists joined, a nested struct added field by field; the elapsed time is
// the longer one, and the crawl is paused when every node is. A field
// tagged sum:"-" is a node's own (what its frontier waits for) and is
// left out.
func addStats(s *Stats, o Stats) {
	addValue(reflect.ValueOf(s).Elem(), reflect.ValueOf(o))
}

func addValue(dst, src reflect.Value) {
	switch dst.Kind() {
	case reflect.Int, reflect.Int64:
		dst.SetInt(dst.Int() + src.Int())
	case reflect.Float64: // elapsed_seconds
		dst.SetFloat(max(dst.Float(), src.Float()))
	case reflect.Bool: // paused
		dst.SetBool(dst.Bool() && src.Bool())
	case reflect.Map:
		if src.Len() == 0 {
			return
		}
		if dst.IsNil() {
			dst.Set(reflect.MakeMap(dst.Type()))
		}
		for _, k := range src.MapKeys() {
			sum := reflect.New(dst.Type().Elem()).Elem()
			if cur := dst.MapIndex(k); cur.IsValid() {
				sum.Set(cur)
			}
			addValue(sum, src.MapIndex(k))
			dst.SetMapIndex(k, sum)
		}
	case reflect.Slice:
		dst.Set(reflect.AppendSlice(dst, src))
	case reflect.Pointer:
		if src.IsNil() {
			return
		}
		if dst.IsNil() {
			dst.Set(reflect.New(dst.Type().Elem()))
		}
		addValue(dst.Elem(), src.Elem())
	case reflect.Struct:
		for i := range dst.NumField() {
			if dst.Type().Field(i).Tag.Get("sum") == "-" {
				continue // one node's own, not a count
			}
			addValue(dst.Field(i), src.Field(i))
		}
	case reflect.String:
		// a node's name: not summed
	default:
		panic("api: addStats cannot add a " + dst.Kind().String())
	}
}
