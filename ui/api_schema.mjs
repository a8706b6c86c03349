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
	"GET /agents/:agentId/suspended-runs",
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
	"GET /memory/search",
	"GET /memory/status",
	"GET /memory/threads/:threadId/working-memory",
	"POST /memory/threads/:threadId/working-memory",
	"GET /workflows",
	"GET /workflows/:workflowId",
	"GET /workflows/:workflowId/runs",
	"GET /workflows/:workflowId/runs/:runId",
	"POST /workflows/:workflowId/start-async",
	"POST /workflows/:workflowId/resume-async",
	"POST /workflows/:workflowId/runs/:runId/cancel",
	"GET /mcp/v0/servers",
	"GET /mcp/v0/servers/:id",
	"GET /mcp/:serverId/tools",
	"GET /mcp/:serverId/tools/:toolId",
	"POST /mcp/:serverId/tools/:toolId/execute",
	"GET /observability/traces",
	"GET /observability/traces/light",
	"GET /observability/traces/:traceId",
	"GET /observability/traces/:traceId/light",
	"GET /observability/traces/:traceId/spans/:spanId",
	"POST /observability/traces/query",
	"GET /observability/logs",
	"POST /observability/metrics/aggregate",
	"POST /observability/metrics/breakdown",
	"POST /observability/metrics/timeseries",
	"POST /observability/metrics/percentiles",
	"GET /observability/discovery/metric-names",
	"GET /observability/discovery/metric-label-keys",
	"GET /observability/discovery/metric-label-values",
	"GET /observability/scores",
	"POST /observability/scores",
	"DELETE /observability/scores",
	"GET /observability/scores/:scoreId",
	"DELETE /observability/feedback",
	"GET /datasets",
	"POST /datasets",
	"GET /datasets/:datasetId",
	"GET /datasets/:datasetId/items",
	"GET /datasets/:datasetId/experiments",
	"POST /datasets/:datasetId/experiments",
	"GET /datasets/:datasetId/experiments/:experimentId",
	"GET /datasets/:datasetId/experiments/:experimentId/results",
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

// Query parameters Parley adds to Mastra's routes (ui/api*.go), so that
// clients checking queries against the manifest accept them.
const extraQuery = {
	"GET /memory/threads/:threadId/messages": {
		tree: {
			description:
				"Parley: true lists every message of every branch of the thread (edited and regenerated versions), parents before their children, each with parentId (null for a root) and active (on the branch the chat shows); without it, the branch the chat shows",
			type: "boolean", // as Mastra's includeSystemReminders: ?tree=true
		},
	},
};

const m = buildApiSchemaManifest();
const routes = m.routes.filter((r) => served.has(`${r.method} ${r.path}`));
const missing = [...served].filter((k) => !routes.some((r) => `${r.method} ${r.path}` === k));
if (missing.length) throw new Error(`not in Mastra's manifest: ${missing.join(", ")}`);
for (const r of routes) {
	const extra = extraQuery[`${r.method} ${r.path}`];
	if (extra) Object.assign(r.queryParamSchema.properties, extra);
}
process.stdout.write(JSON.stringify(strip({ version: m.version, routes })) + "\n");
