package main

import (
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// benchReport parses the "name   value ..." lines of a weft bench report
// into the value's first field.
func benchReport(t *testing.T, out string) map[string]float64 {
	t.Helper()
	fields := map[string]float64{}
	for _, line := range strings.Split(out, "\n") {
		if len(line) < 15 || strings.HasPrefix(line, "weft bench:") {
			continue
		}
		name, rest := strings.TrimSpace(line[:15]), strings.Fields(line[15:])
		if len(rest) == 0 {
			continue
		}
		if d, err := strconv.ParseFloat(rest[0], 64); err == nil {
			fields[name] = d
		} else if d, err := time.ParseDuration(rest[0]); err == nil { // wall
			fields[name] = d.Seconds()
		}
	}
	return fields
}

// benchRequests parses the report's "requests N (R redirects, ...)" line.
func benchRequests(t *testing.T, out string) (requests, redirects int) {
	t.Helper()
	for _, line := range strings.Split(out, "\n") {
		if rest, ok := strings.CutPrefix(line, "requests"); ok {
			if _, err := fmt.Sscanf(strings.TrimSpace(rest), "%d (%d redirects", &requests, &redirects); err != nil {
				t.Fatalf("requests line %q: %v", line, err)
			}
			return requests, redirects
		}
	}
	t.Fatalf("no requests line in the report:\n%s", out)
	return 0, 0
}

// TestBenchReport runs a short weft bench on a tiny web of each world and
// checks that the report's figures are there and hang together: unique
// pages and requests from the server's log, CPU per unique page and per
// request, allocations per page. The default world is heavy, crawled
// whole by default: every page of its web, most of them reached through a
// redirect. Nothing is timed.
func TestBenchReport(t *testing.T) {
	bin := buildWeft(t)
	for _, tc := range []struct {
		world string
		args  []string
		whole int // pages of the web, when the run crawls it whole
	}{
		{"heavy", []string{"--hosts", "3", "--pages-per-host", "40"}, 3 * 40},
		{"heavy, pre-rendered", []string{"--hosts", "3", "--pages-per-host", "40", "--prerendered", "--bare-loop"}, 3 * 40},
		{"seeds", []string{"--world", "seeds", "--hosts", "3", "--pages-per-host", "100", "--max-pages", "60"}, 0},
		{"classic", []string{"--world", "classic", "--hosts", "3", "--pages-per-host", "12", "--max-pages", "40"}, 0},
	} {
		t.Run(tc.world, func(t *testing.T) {
			out, err := exec.Command(bin, append([]string{"bench", "--workers", "8"}, tc.args...)...).CombinedOutput()
			if err != nil {
				t.Fatalf("weft bench: %v\n%s", err, out)
			}
			if !strings.Contains(string(out), "world "+tc.world+",") {
				t.Errorf("the report does not name world %s:\n%s", tc.world, out)
			}
			f := benchReport(t, string(out))
			for _, name := range []string{"pages", "wall", "pages/s", "crawler CPU", "CPU s/1000 pg", "unique pages",
				"requests", "unique pages/s", "CPU ms/page", "CPU ms/request", "allocs/page", "alloc KB/page"} {
				if _, ok := f[name]; !ok {
					t.Errorf("no %q in the report:\n%s", name, out)
				}
			}
			if f["unique pages"] <= 0 || f["unique pages"] > f["pages"] || f["requests"] < f["pages"] {
				t.Errorf("unique pages %v, pages %v, requests %v: want 0 < unique <= pages <= requests\n%s",
					f["unique pages"], f["pages"], f["requests"], out)
			}
			if f["CPU ms/page"] <= 0 || f["CPU ms/request"] <= 0 || f["CPU ms/request"] > f["CPU ms/page"] {
				t.Errorf("CPU ms/page %v, CPU ms/request %v: want 0 < per request <= per page", f["CPU ms/page"], f["CPU ms/request"])
			}
			if f["allocs/page"] <= 0 || f["alloc KB/page"] <= 0 {
				t.Errorf("allocs/page %v, alloc KB/page %v: want both above 0", f["allocs/page"], f["alloc KB/page"])
			}
			if tc.whole > 0 {
				// About 0.85 redirecting URLs a page, all linked.
				_, redirects := benchRequests(t, string(out))
				if int(f["unique pages"]) != tc.whole || redirects < tc.whole*7/10 || redirects > tc.whole {
					t.Errorf("unique pages %v, %d redirects: want the whole web's %d pages and about 0.85 redirects a page\n%s",
						f["unique pages"], redirects, tc.whole, out)
				}
			}
			if !strings.Contains(tc.args[len(tc.args)-1], "bare-loop") {
				return
			}
			// The bare loop asks for every page once, on a web of its own.
			if want := fmt.Sprintf("bare GET loop  %d pages (0 failed, the server's log: %d unique)", tc.whole, tc.whole); !strings.Contains(string(out), want) {
				t.Errorf("no %q in the report:\n%s", want, out)
			}
			if f["bare pages/s"] <= 0 || f["weft / bare"] <= 0 {
				t.Errorf("bare pages/s %v, weft / bare %v: want both above 0\n%s", f["bare pages/s"], f["weft / bare"], out)
			}
		})
	}
}

func TestBenchRejectsUnknownWorld(t *testing.T) {
	code, _, stderr := runWeft(t, "bench", "--world", "moon")
	if code != 2 || !strings.Contains(stderr, `--world "moon"`) {
		t.Errorf("exit %d, stderr %q: want 2 and the flag named", code, stderr)
	}
}

// TestInterleaveHosts: a bare loop asks the hosts in turn, each host's
// pages in their order, and every URL once.
func TestInterleaveHosts(t *testing.T) {
	got := interleaveHosts([]string{"http://a/1", "http://a/2", "http://a/3", "http://b/1", "http://c:8/1", "http://c:8/2"})
	want := []string{"http://a/1", "http://b/1", "http://c:8/1", "http://a/2", "http://c:8/2", "http://a/3"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("interleaveHosts: %q, want %q", got, want)
	}
}
