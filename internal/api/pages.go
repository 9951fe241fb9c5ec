package api

import (
	"errors"
	"net/http"
	"time"
)

// PageInfo is the body of GET /v1/pages/{url_hash}: a URL's record and
// where its latest capture lies.
type PageInfo struct {
	URL         string     `json:"url"`
	Status      string     `json:"status"`
	FetchedAt   *time.Time `json:"fetched_at,omitempty"`
	HTTPStatus  int        `json:"http_status,omitempty"`
	Title       string     `json:"title,omitempty"`
	ContentHash string     `json:"content_hash,omitempty"`
	// BodyKey is where the bytes are: the WARC file, and the record's
	// offset and length in it (weft get reads it back).
	BodyKey  *BodyKey  `json:"body_key,omitempty"`
	Captures []Capture `json:"captures"`
}

// BodyKey locates a WARC record.
type BodyKey struct {
	WARCFile string `json:"warc_file"`
	Offset   int64  `json:"offset"`
	Length   int64  `json:"length"`
}

// Capture is one capture of the URL, newest first.
type Capture struct {
	Date        time.Time `json:"date"`
	HTTPStatus  int       `json:"http_status"`
	ContentHash string    `json:"content_hash"`
	Revisit     bool      `json:"revisit,omitempty"`
	BodyKey     BodyKey   `json:"body_key"`
}

func (s *Server) page(w http.ResponseWriter, r *http.Request) error {
	pos, ok := decodePos(r.PathValue("url_hash"))
	if !ok {
		return &Error{Status: http.StatusBadRequest, Code: "bad_url_hash", Message: "url_hash " + r.PathValue("url_hash") + " is not one GET /v1/urls gave"}
	}
	p, err := s.res.URLs.Page(*pos)
	switch {
	case errors.Is(err, ErrUnknownURL):
		return &Error{Status: http.StatusNotFound, Code: "unknown_url", Message: "no URL " + r.PathValue("url_hash")}
	case err != nil:
		return err
	}
	out := PageInfo{URL: p.URL, Status: p.Status, FetchedAt: optTime(p.LastFetch), HTTPStatus: p.LastStatus, Title: p.Title, Captures: []Capture{}}
	for i, cp := range p.Captures {
		cp.Date = cp.Date.UTC()
		out.Captures = append(out.Captures, cp)
		if i == 0 {
			out.ContentHash = cp.ContentHash
			out.BodyKey = &cp.BodyKey
			out.FetchedAt = &cp.Date
			out.HTTPStatus = cp.HTTPStatus
		}
	}
	return writeJSON(w, http.StatusOK, out)
}
