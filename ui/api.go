package ui

import "net/http"

// apiRoutes registers the JSON API in Mastra's server shape.
func (s *Server) apiRoutes(mux *http.ServeMux) {}
