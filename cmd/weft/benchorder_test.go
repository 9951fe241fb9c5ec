package main

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
)

// orderReportOf decodes the JSON line that ends weft bench order's report.
func orderReportOf(t *testing.T, out string) orderReport {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(out), "\n")
	var rep orderReport
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &rep); err != nil {
		t.Fatalf("the report's last line is not its JSON: %v\n%s", err, out)
	}
	return rep
}

// TestBenchOrderReport runs weft bench order on a small web and checks
// that its figures hang together: every share in [0, 1] and growing with
// the pages fetched, the best order at least as good as weft's and
// breadth-first's, weft's figure given only where its crawl got to, and
// the gap closed as its formula says.
func TestBenchOrderReport(t *testing.T) {
	code, out, stderr := runWeft(t, "bench", "order", "--hosts", "4", "--pages-per-host", "100", "--workers", "8", "--seed", "3")
	if code != 0 {
		t.Fatalf("weft bench order: exit %d\n%s\n%s", code, out, stderr)
	}
	for _, row := range []string{"\nweft ", "\nbfs ", "\nbest ", "\nbest polite ", "\ngap closed ", "\npages fetched "} {
		if !strings.Contains(out, row) {
			t.Errorf("no row %q in the report:\n%s", strings.TrimSpace(row), out)
		}
	}
	rep := orderReportOf(t, out)
	if rep.Hosts != 4 || rep.Seed != 3 || rep.Pages < 4*80 || len(rep.Shares) != 4 {
		t.Fatalf("report %+v: want 4 hosts, seed 3, at least 320 pages, 4 shares", rep)
	}
	if want := int64(math.Ceil(0.2 * float64(rep.Pages))); rep.MaxPages != want || rep.Fetched != int(want) {
		t.Errorf("max pages %d, fetched %d: want both %d, a fifth of the web's %d pages", rep.MaxPages, rep.Fetched, want, rep.Pages)
	}
	const eps = 1e-9
	for name, series := range map[string][]*float64{"weft": rep.Weft, "bfs": ptrs(rep.BFS), "best": ptrs(rep.Best), "best polite": ptrs(rep.BestPolite)} {
		if len(series) != len(rep.Shares) {
			t.Fatalf("%s: %d figures for %d shares", name, len(series), len(rep.Shares))
		}
		prev := 0.0
		for i, v := range series {
			if v == nil {
				continue
			}
			if *v < 0 || *v > 1+eps || *v < prev-eps {
				t.Errorf("%s at %.0f %%: %v, want in [0, 1] and no less than at the share before (%v)", name, rep.Shares[i]*100, *v, prev)
			}
			prev = *v
			if *v > rep.Best[i]+eps {
				t.Errorf("%s at %.0f %%: %v, more than the best order's %v", name, rep.Shares[i]*100, *v, rep.Best[i])
			}
		}
	}
	for i, s := range rep.Shares {
		reached := int(math.Round(s*float64(rep.Pages))) <= rep.Fetched
		if reached != (rep.Weft[i] != nil) {
			t.Errorf("at %.0f %% weft's figure given: %t, with %d of %d pages fetched", s*100, rep.Weft[i] != nil, rep.Fetched, rep.Pages)
		}
	}
	if rep.Weft[3] != nil || !strings.Contains(out, "not reached") {
		t.Errorf("40 %% of the web reported as reached by a crawl of 20 %%:\n%s", out)
	}
	if rep.GapClosed == nil || rep.Weft[1] == nil {
		t.Fatalf("no gap closed at 10 %%:\n%s", out)
	}
	if want := (*rep.Weft[1] - rep.BFS[1]) / (rep.Best[1] - rep.BFS[1]); math.Abs(*rep.GapClosed-want) > eps {
		t.Errorf("gap closed %v, want (weft - bfs) / (best - bfs) = %v", *rep.GapClosed, want)
	}
}

func ptrs(v []float64) []*float64 {
	out := make([]*float64, len(v))
	for i := range v {
		out[i] = &v[i]
	}
	return out
}

func TestBenchOrderRejectsBadFlags(t *testing.T) {
	for _, tc := range []struct{ args []string }{
		{[]string{"--max-pages-share", "0"}},
		{[]string{"--max-pages-share", "1.5"}},
		{[]string{"--hosts", "0"}},
		{[]string{"--pages-per-host", "-3"}},
		{[]string{"--workers", "0"}},
	} {
		code, _, stderr := runWeft(t, append([]string{"bench", "order"}, tc.args...)...)
		if code != 2 || !strings.Contains(stderr, tc.args[0]+" "+tc.args[1]) {
			t.Errorf("%v: exit %d, stderr %q: want 2 and the flag named", tc.args, code, stderr)
		}
	}
}
