package api

import (
	"embed"
	"io/fs"
	"net/http"
)

// The dashboard is static files, embedded: no CDN, nothing fetched from
// elsewhere. They hold no data (the page reads the API, with the token
// when the API asks for it), so they are served to anyone who can reach
// the server.
//
// uPlot.iife.min.js, uPlot.min.css and uPlot.LICENSE are uPlot 1.6.32 (MIT),
// as its npm package ships them (npm pack uplot@1.6.32: dist/ and LICENSE),
// unchanged.
//
//go:embed dashboard
var dashboardFS embed.FS

func (s *Server) serveDashboard() {
	sub, _ := fs.Sub(dashboardFS, "dashboard")
	files := http.FileServerFS(sub)
	s.mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-cache")
		w.Header().Set("Content-Security-Policy", "default-src 'self'")
		http.ServeFileFS(w, r, sub, "index.html")
	})
	s.mux.Handle("GET /dashboard/", http.StripPrefix("/dashboard/", files))
}
