package render

import (
	"testing"

	"github.com/weft-crawler/weft/internal/synthweb"
)

// The auto rule picks none of the synthetic web's static pages, those of
// the seeds world included (news articles with analytics scripts): on a
// web that needs no browser, --render auto starts none.
func TestRuleSparesStaticWorlds(t *testing.T) {
	for _, world := range []synthweb.World{synthweb.WorldClassic, synthweb.WorldSeeds} {
		w, err := synthweb.Start(synthweb.Config{Seed: 1, Hosts: 6, World: world})
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, p := range w.AllPages() {
			b := w.Body(p.URL)
			if b == nil {
				continue
			}
			n++
			if s := Inspect(b); s.NeedsScript() {
				t.Errorf("%s: %+v would be rendered", p.URL, s)
			}
		}
		w.Close()
		t.Logf("%s world: none of %d pages would be rendered", world, n)
		if n < 100 {
			t.Errorf("%s: only %d pages read", world, n)
		}
	}
}
