// Writes ui/api_schema.json: the routes of Mastra's API schema manifest
// (GET /api/system/api-schema) that Parley serves, as the pinned
// @mastra/server builds them. Run from the repository after `make mastra-cli`:
//
//	node ui/api_schema.mjs > ui/api_schema.json
//
// Keep the list in step with ui/api*.go; ui's TestAPISchemaManifest checks
// that every listed route answers.
import { buildApiSchemaManifest } from "../e2e/mastracli/node_modules/@mastra/server/dist/api-schema-manifest-CdFg0wYn.js";

const served = new Set([
	"GET /agents",
	"GET /agents/:agentId",
	"POST /agents/:agentId/generate",
	"POST /agents/:agentId/send-message",
	"POST /agents/:agentId/queue-message",
	"POST /agents/:agentId/signals",
	"POST /agents/:agentId/threads/abort",
	"GET /agents/:agentId/tools/:toolId",
	"POST /agents/:agentId/tools/:toolId/execute",
	"POST /agents/:agentId/send-tool-approval",
	"POST /agents/:agentId/approve-tool-call-generate",
	"POST /agents/:agentId/decline-tool-call-generate",
	"GET /tools",
	"GET /tools/:toolId",
	"POST /tools/:toolId/execute",
	"GET /memory/threads",
	"POST /memory/threads",
	"GET /memory/threads/:threadId",
	"PATCH /memory/threads/:threadId",
	"DELETE /memory/threads/:threadId",
	"GET /memory/threads/:threadId/messages",
	"GET /system/api-schema",
]);

// Drops the "$schema" dialect tags (they name a web address; the dialect is
// draft 2020-12 throughout).
function strip(v) {
	if (Array.isArray(v)) return v.map(strip);
	if (v && typeof v === "object") {
		const out = {};
		for (const [k, x] of Object.entries(v)) if (k !== "$schema") out[k] = strip(x);
		return out;
	}
	return v;
}

const m = buildApiSchemaManifest();
const routes = m.routes.filter((r) => served.has(`${r.method} ${r.path}`));
const missing = [...served].filter((k) => !routes.some((r) => `${r.method} ${r.path}` === k));
if (missing.length) throw new Error(`not in Mastra's manifest: ${missing.join(", ")}`);
process.stdout.write(JSON.stringify(strip({ version: m.version, routes })) + "\n");
