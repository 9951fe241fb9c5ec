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
	navs       int
	behaviour  time.Duration
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
	fs.IntVar(&f.scrolls, "render-scrolls", d.MaxScrolls, "scroll a rendered page to its bottom, a viewport at a time, up to this many times while it grows (infinite scroll, lazy content); 0: never")
	fs.IntVar(&f.clicks, "render-clicks", d.MaxClicks, "click up to this many controls of a rendered page that are not links (buttons, elements with click handlers, tabs, menus, \"more\" and \"next\"; not submit buttons, nor log-out, delete or pay); 0: never")
	fs.IntVar(&f.navs, "render-navigations", d.MaxNavigations, "capture up to this many navigations a rendered page's scripts make (history.pushState and replaceState, location, window.open) as links of the page, and keep it from leaving; 0: never, and a page that navigates away takes the render with it")
	fs.DurationVar(&f.behaviour, "render-behaviour-time", d.BehaviourTime, "each behaviour's time on a rendered page (the wait for timers due soon after its load, scrolling, clicking), within --render-timeout")
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
