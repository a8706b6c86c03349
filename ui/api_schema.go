package ui

import (
	_ "embed"
	"net/http"
)

// apiSchemaManifest is Mastra's API schema manifest ({version, routes: [{method,
// path, pathParamSchema, queryParamSchema, bodySchema, responseSchema,
// responseShape}]}) for the JSON routes Parley serves, as the pinned
// @mastra/server builds it; api_schema.mjs writes it. The mastra CLI reads
// it for `--schema`.
//
//go:embed api_schema.json
var apiSchemaManifest []byte

// apiSchema answers GET /api/system/api-schema.
func (s *Server) apiSchema(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	_, _ = w.Write(apiSchemaManifest)
}
