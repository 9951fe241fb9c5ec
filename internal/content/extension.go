package content

import (
	"errors"
	"fmt"

	"github.com/weft-crawler/weft/internal/extract"
	"github.com/weft-crawler/weft/internal/plugin"
)

// Extensions are plugin.Handlers read after the crawl's own Handler, on
// the documents of the media types they accept: they add to what that
// handler found links to follow, fields they extracted, and decisions
// about the page. It is how code outside the crawl (the public API's
// handlers, a program speaking the command protocol) reads pages without
// replacing weft's reading of links, robots directives and words.

// ExtensionRun is how one extension fared on one document.
type ExtensionRun struct {
	Name string
	Err  error // nil if it read the document
}

// Extend returns a Set whose handlers are followed, on each document, by
// the extensions that accept its media type, each counted under its name
// (plugin.NameOf); a media type that only an extension accepts is read by
// the extensions alone (its handler is named after the first of them).
// Without extensions it returns s. WantsEmbeds sees through an extended
// handler to the one it extends.
func (s Set) Extend(handlers ...plugin.Handler) Set {
	if len(handlers) == 0 {
		return s
	}
	exts := make([]extension, len(handlers))
	for i, h := range handlers {
		exts[i] = extension{name: plugin.NameOf(h, i), h: h}
	}
	out := make(Set, 0, len(s)+1)
	for _, h := range s {
		out = append(out, extended{base: h, exts: exts})
	}
	return append(out, extended{exts: exts})
}

// extension is a plugin.Handler with its name.
type extension struct {
	name string
	h    plugin.Handler
}

// extended is a handler (or none) followed by extensions.
type extended struct {
	base Handler // nil: the extensions alone
	exts []extension
}

func (x extended) Name() string {
	if x.base != nil {
		return x.base.Name()
	}
	return x.exts[0].name
}

func (x extended) Accepts(mt string) bool {
	if x.base != nil {
		return x.base.Accepts(mt)
	}
	for _, e := range x.exts {
		if e.h.Accepts(mt) {
			return true
		}
	}
	return false
}

func (x extended) Read(d Doc) Result {
	var r Result
	if x.base != nil {
		r = x.base.Read(d)
	}
	for _, e := range x.exts {
		if !e.h.Accepts(d.MediaType) {
			continue
		}
		extra, err := runExtension(e.h, d)
		r.Extended = append(r.Extended, ExtensionRun{Name: e.name, Err: err})
		if err != nil {
			continue
		}
		for _, l := range extra.Links {
			r.Links = append(r.Links, extract.Link{URL: l, Tag: "extension"})
		}
		if len(extra.Fields) > 0 && r.Fields == nil {
			r.Fields = make(map[string]any, len(extra.Fields))
		}
		for k, v := range extra.Fields {
			r.Fields[k] = v
		}
		r.NoFollow = r.NoFollow || extra.NoFollow
		r.NoIndex = r.NoIndex || extra.NoIndex
	}
	return r
}

// errExtensionPanic wraps what an extension panicked with.
var errExtensionPanic = errors.New("panic")

// runExtension calls h, turning a panic into its failure on this document
// rather than the page's.
func runExtension(h plugin.Handler, d Doc) (res plugin.Result, err error) {
	defer func() {
		if v := recover(); v != nil {
			res, err = plugin.Result{}, fmt.Errorf("%w: %v", errExtensionPanic, v)
		}
	}()
	return h.Handle(&plugin.Response{URL: d.URL, MediaType: d.MediaType, Header: d.Header, Body: d.Body,
		Truncated: d.Truncated != "", Cut: d.Truncated})
}
