package main

import (
	"time"

	"github.com/spf13/pflag"

	"github.com/weft-crawler/weft/internal/bytesize"
	"github.com/weft-crawler/weft/internal/crawl"
)

// renderFlags are the flags of the rendering tier (docs/render.md).
type renderFlags struct {
	mode       string
	chromium   string
	workers    int
	timeout    time.Duration
	idle       time.Duration
	scrolls    int
	clicks     int
	screenshot bool
	memory     int64
	giveUp     int
}

func (f *renderFlags) register(fs *pflag.FlagSet, d crawl.RenderConfig) {
	fs.StringVar(&f.mode, "render", d.Mode, "render HTML pages in headless Chromium, every request of theirs through weft's own fetch path (politeness, robots.txt, the SSRF guard, caps, the archive): never; auto (pages with scripts and a <noscript> or under 1 KiB of text, but not those with static navigation, 8 links or more, until a render on their host has found links its HTML did not have; on hosts where rendering finds new links); always. Without Chromium the crawl runs as never (docs/render.md)")
	fs.StringVar(&f.chromium, "render-chromium", "", "the Chromium executable (default: chromium or chromium-browser on the PATH)")
	fs.IntVar(&f.workers, "render-workers", d.Workers, "most browsers at once, each rendering one page (the cap on browser memory: about 400 MB each, docs/benchmarks.md)")
	fs.DurationVar(&f.timeout, "render-timeout", d.Timeout, "each rendered page's time budget, its requests' politeness waits included, and the longest a page waits for a free browser; a page over it keeps its static links, and a page whose script is stuck costs its browser, which is replaced")
	fs.DurationVar(&f.idle, "render-idle", d.Idle, "a rendered page has settled when none of its requests has been in flight for this long")
	fs.IntVar(&f.scrolls, "render-scrolls", 0, "scroll a rendered page to its bottom up to this many times while it grows (lazy content)")
	fs.IntVar(&f.clicks, "render-clicks", 0, "click up to this many \"more\", \"load more\" or \"next\" controls (not links) of a rendered page")
	fs.BoolVar(&f.screenshot, "render-screenshot", false, "archive a PNG screenshot of each rendered page as a WARC resource record")
	fs.Var(bytesize.NewValue(&f.memory, int64(d.MemoryMB)<<20), "render-memory", "each browser's JavaScript heap cap, in whole MiB (0: V8's default)")
	fs.IntVar(&f.giveUp, "render-give-up", d.GiveUpAfter, "with --render auto, stop rendering a host after this many renders in a row found no link its HTML did not have")
}

func (f *renderFlags) check() error { return checkHeap("--render-memory", f.memory) }

// checkHeap refuses a browser heap cap under 1 MiB: V8 takes whole MiB,
// and "512", MB before sizes had units, would be 512 bytes.
func checkHeap(flag string, n int64) error {
	if n != 0 && n < 1<<20 {
		return usagef("%s %d: under 1MiB; a size without a unit is in bytes (512MiB, say)", flag, n)
	}
	return nil
}
