// Package browsertest starts headless Chromium for tests: it finds the
// browser, or skips the test saying how to get one, and gives the options
// every browser test runs it with.
package browsertest

import (
	"os"
	"os/exec"
	"testing"

	"github.com/chromedp/chromedp"
)

// Chromium returns the path of a headless-capable Chromium (WEFT_CHROMIUM,
// else chromium or chromium-browser on the PATH), or skips t saying how to
// get one.
func Chromium(t testing.TB) string {
	if p := os.Getenv("WEFT_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("no Chromium: install Debian's chromium package (.ci/run does) or set WEFT_CHROMIUM")
	return ""
}

// Options are the allocator options of a test browser: bin headless, in a
// w×h window, with a fresh profile in t's temporary directory and nothing
// of its own reaching the network (no background networking, component
// updates, sync or QUIC); extra are added.
func Options(t testing.TB, bin string, w, h int, extra ...chromedp.ExecAllocatorOption) []chromedp.ExecAllocatorOption {
	return append([]chromedp.ExecAllocatorOption{
		chromedp.ExecPath(bin), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.Flag("disable-quic", true), chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(w, h),
	}, extra...)
}
