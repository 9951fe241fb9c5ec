package weft

import "github.com/weft-crawler/weft/internal/plugin"

// A Handler reads the responses of the media types it accepts. weft has
// read a page's links, robots directives and words itself before (for
// HTML and plain text); a handler adds to that. It sees only successful
// (2xx) responses, and not a revisit of a payload it read before.
//
// Handle is called from many goroutines at once, and the page's host
// waits while it runs: it must bound its own time. An error (or a panic)
// is its failure on that page: counted in Summary.HandlerFailed under its
// name, logged with the URL, what it returned dropped, and the crawl goes
// on. A Handler with a method Name() string is counted under that name;
// others as "handler1", "handler2", ... by their place in Config.Handlers.
type Handler = plugin.Handler

// Response is a response a Handler reads. Its slices and maps are the
// crawl's: do not change them, nor keep them past Handle without copying.
type Response = plugin.Response

// Result is what a Handler found in a response.
type Result = plugin.Result

// HandlerFunc makes a Handler named name of fn, for the media types
// listed: "text/html", a whole type "text/*", or "*/*" for every type.
func HandlerFunc(name string, fn func(*Response) (Result, error), mediaTypes ...string) Handler {
	return plugin.HandlerFunc(name, fn, mediaTypes...)
}
