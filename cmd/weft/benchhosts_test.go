package main

import (
	"bytes"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// TestBenchHostsReport runs weft bench hosts on a web of 2,000 hosts and
// checks, from the web's own counters, that the crawl asked for every
// host's robots.txt and every page once, never a disallowed path, never
// two requests at once to one host; and that the report gives the
// memory samples, pages/s and CPU per page. Nothing is timed. With a
// --host-cache of 64 (16 parsed robots.txt files) hosts' states and
// robots.txt answers are evicted all along: no robots.txt is asked for
// again, and the rest holds as well.
func TestBenchHostsReport(t *testing.T) {
	bin := buildWeft(t)
	for _, hostCache := range []string{"0", "64"} {
		t.Run("host-cache-"+hostCache, func(t *testing.T) { testBenchHostsReport(t, bin, hostCache) })
	}
}

func testBenchHostsReport(t *testing.T, bin, hostCache string) {
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(bin, "bench", "hosts", "--hosts", "2000", "--workers", "16", "--progress-every", "1s", "--host-cache", hostCache)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("weft bench hosts: %v\n%s\n%s", err, stdout.String(), stderr.String())
	}
	out := stdout.String()
	if !strings.Contains(out, "stopped by     drained") {
		t.Errorf("the crawl did not drain:\n%s", out)
	}
	f := benchReport(t, out)
	for _, name := range []string{"hosts reached", "hosts complete", "pages served", "requests", "robots again", "overlaps", "pages", "wall",
		"pages/s", "crawler CPU", "CPU ms/page", "peak RSS", "RSS 1k", "RSS end"} {
		if _, ok := f[name]; !ok {
			t.Errorf("no %q in the report:\n%s", name, out)
		}
	}
	if f["hosts reached"] != 2000 || f["hosts complete"] != 2000 {
		t.Errorf("hosts reached %v, complete %v: want every one of 2000\n%s", f["hosts reached"], f["hosts complete"], out)
	}
	if !strings.Contains(out, "(the web's count; "+strconv.FormatFloat(f["pages served"], 'f', -1, 64)+" in the web, 0 asked for again)") {
		t.Errorf("not every page of the web served exactly once:\n%s", out)
	}
	if !strings.Contains(out, "robots.txt 2000, disallowed 0,") || f["robots again"] != 0 {
		t.Errorf("want one robots.txt request per host and no disallowed path asked for:\n%s", out)
	}
	if f["overlaps"] != 0 {
		t.Errorf("%v requests arrived at a host with another in flight", f["overlaps"])
	}
	if f["CPU ms/page"] <= 0 || f["pages/s"] <= 0 {
		t.Errorf("CPU ms/page %v, pages/s %v: want both above 0", f["CPU ms/page"], f["pages/s"])
	}
	if f["peak RSS"] <= 0 || f["RSS 1k"] <= 0 || f["RSS end"] <= 0 || f["RSS end"] > f["peak RSS"] {
		t.Errorf("peak RSS %v, RSS at 1k hosts %v, at the end %v: want 0 < each, the end <= the peak", f["peak RSS"], f["RSS 1k"], f["RSS end"])
	}
	if !strings.Contains(stderr.String(), " hosts ") || !strings.Contains(stderr.String(), " RSS ") {
		t.Errorf("no progress line on stderr:\n%s", stderr.String())
	}
}

func TestBenchHostsRejectsBadSize(t *testing.T) {
	code, _, stderr := runWeft(t, "bench", "hosts", "--hosts", "0")
	if code != 2 || !strings.Contains(stderr, "--hosts 0") {
		t.Errorf("exit %d, stderr %q: want 2 and the flag named", code, stderr)
	}
}
