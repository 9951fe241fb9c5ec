package content

import (
	"errors"
	"fmt"

	"github.com/weft-crawler/weft/internal/extract"
)

// An Extension reads, after the crawl's own Handler, the documents of the
// media types it accepts, and adds to what that handler found: links to
// follow, fields it extracted, and decisions about the page. It is how
// code outside the crawl (the public API's handlers, a program speaking
// the command protocol) reads pages without replacing weft's reading of
// links, robots directives and words.
type Extension interface {
	// Name is short and stable: it labels the extension's counts and logs.
	Name() string
	// Accepts reports whether the extension reads documents of media type
	// mt (lower-case, without parameters).
	Accepts(mt string) bool
	// Extend reads d. It is called from many workers at once, and must
	// bound its own time: the page's host is held until it returns. An
	// error is the extension's failure on this document: counted and
	// logged with the URL, and what it returned with it is dropped; the
	// crawl goes on.
	Extend(d Doc) (Extra, error)
}

// Extra is what an extension adds to a document's Result.
type Extra struct {
	// Links are more links to follow, raw: resolved as the document's own
	// links are (against its <base href>, else its URL).
	Links []string
	// Fields are values extracted from the document, by name. A later
	// extension's field replaces an earlier one's of the same name.
	Fields map[string]any
	// NoFollow says that none of the document's links is followed,
	// whoever found them; NoIndex marks it as not to be indexed (counted
	// and logged, as a page's own noindex is).
	NoFollow, NoIndex bool
}

// ExtensionRun is how one extension fared on one document.
type ExtensionRun struct {
	Name string
	Err  error // nil if it read the document
}

// Extend returns a Set whose handlers are followed, on each document, by
// the extensions that accept its media type; a media type that only an
// extension accepts is read by the extensions alone (its handler is named
// after the first of them). Without extensions it returns s. Embed readers
// stay embed readers.
func (s Set) Extend(exts ...Extension) Set {
	if len(exts) == 0 {
		return s
	}
	out := make(Set, 0, len(s)+1)
	for _, h := range s {
		x := extended{base: h, exts: exts}
		if _, ok := h.(EmbedReader); ok {
			out = append(out, extendedEmbeds{x})
		} else {
			out = append(out, x)
		}
	}
	return append(out, extended{exts: exts})
}

// extended is a handler (or none) followed by extensions.
type extended struct {
	base Handler // nil: the extensions alone
	exts []Extension
}

func (x extended) Name() string {
	if x.base != nil {
		return x.base.Name()
	}
	return x.exts[0].Name()
}

func (x extended) Accepts(mt string) bool {
	if x.base != nil {
		return x.base.Accepts(mt)
	}
	for _, e := range x.exts {
		if e.Accepts(mt) {
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
		if !e.Accepts(d.MediaType) {
			continue
		}
		extra, err := runExtension(e, d)
		r.Extended = append(r.Extended, ExtensionRun{Name: e.Name(), Err: err})
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

// runExtension calls e, turning a panic into its failure on this document
// rather than the page's.
func runExtension(e Extension, d Doc) (extra Extra, err error) {
	defer func() {
		if v := recover(); v != nil {
			extra, err = Extra{}, fmt.Errorf("%w: %v", errExtensionPanic, v)
		}
	}()
	return e.Extend(d)
}

// extendedEmbeds is an extended EmbedReader.
type extendedEmbeds struct{ extended }

// ReadsEmbeds implements EmbedReader.
func (extendedEmbeds) ReadsEmbeds() {}
