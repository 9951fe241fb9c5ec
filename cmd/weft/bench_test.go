package main

import (
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

// TestBenchReport runs a short weft bench on a tiny web of each world and
// checks that the report's figures are there and hang together: unique
// pages and requests from the server's log, CPU per unique page and per
// request, allocations per page. Nothing is timed.
func TestBenchReport(t *testing.T) {
	bin := buildWeft(t)
	for _, tc := range []struct {
		world string
		args  []string
	}{
		{"seeds", []string{"--hosts", "3", "--pages-per-host", "100", "--max-pages", "60"}},
		{"classic", []string{"--world", "classic", "--hosts", "3", "--pages-per-host", "12", "--max-pages", "40"}},
	} {
		t.Run(tc.world, func(t *testing.T) {
			out, err := exec.Command(bin, append([]string{"bench", "--workers", "8"}, tc.args...)...).CombinedOutput()
			if err != nil {
				t.Fatalf("weft bench: %v\n%s", err, out)
			}
			if !strings.Contains(string(out), "world "+tc.world) {
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
		})
	}
}

func TestBenchRejectsUnknownWorld(t *testing.T) {
	code, _, stderr := runWeft(t, "bench", "--world", "moon")
	if code != 2 || !strings.Contains(stderr, `--world "moon"`) {
		t.Errorf("exit %d, stderr %q: want 2 and the flag named", code, stderr)
	}
}
