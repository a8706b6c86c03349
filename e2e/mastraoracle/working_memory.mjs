// Prints what the real @mastra/memory says and sends for working memory
// (toolkit/testdata/working_memory_mastra.json, pinned by
// toolkit's TestWorkingMemoryTextsAreMastras): run `make mastra-oracle`,
// then `node e2e/mastraoracle/working_memory.mjs`.
//
// A Memory with working memory enabled gives its template, its system
// instruction with no data and with a document, and its one tool; then a
// real Agent with that memory runs twice for one resource against a local
// OpenAI-compatible server (the first run calls updateWorkingMemory), and
// the requests it sent give the tool as offered, the system messages and
// the tool result.
import http from "node:http";
import { Agent } from "@mastra/core/agent";
import { Mastra } from "@mastra/core/mastra";
import { InMemoryStore } from "@mastra/core/storage";
import { Memory } from "@mastra/memory";

const doc = "# User Information\n- **First Name**: Ada";
const m = new Memory({ storage: new InMemoryStore(), options: { workingMemory: { enabled: true } } });
const template = await m.getWorkingMemoryTemplate({ memoryConfig: {} });
const out = {
	template,
	instructionNull: m.getWorkingMemoryToolInstruction({ template, data: null }),
	instructionData: m.getWorkingMemoryToolInstruction({ template, data: doc }),
};
for (const [name, t] of Object.entries(await m.listTools({}))) {
	out.toolName = name;
	out.toolId = t.id;
	out.description = t.description;
	const s = t.inputSchema;
	out.schema = s?.["~standard"]?.jsonSchema?.input ? s["~standard"].jsonSchema.input({ target: "draft-07" }) : s;
}

const bodies = [];
const srv = http.createServer((req, res) => {
	let b = "";
	req.on("data", (c) => (b += c));
	req.on("end", () => {
		const body = JSON.parse(b);
		bodies.push(body);
		const first = bodies.length === 1;
		const msg = first
			? { role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "updateWorkingMemory", arguments: JSON.stringify({ memory: doc }) } }] }
			: { role: "assistant", content: "ok" };
		const finish = first ? "tool_calls" : "stop";
		if (body.stream) {
			res.writeHead(200, { "content-type": "text/event-stream" });
			const delta = { ...msg };
			if (delta.tool_calls) delta.tool_calls = delta.tool_calls.map((t, index) => ({ index, ...t }));
			const chunk = (d, f) => `data: ${JSON.stringify({ id: "x", object: "chat.completion.chunk", created: 1, model: "m", choices: [{ index: 0, delta: d, finish_reason: f }] })}\n\n`;
			res.end(chunk(delta, null) + chunk({}, finish) + "data: [DONE]\n\n");
			return;
		}
		res.writeHead(200, { "content-type": "application/json" });
		res.end(JSON.stringify({ id: "x", object: "chat.completion", created: 1, model: "m", choices: [{ index: 0, message: msg, finish_reason: finish }], usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } }));
	});
});
await new Promise((r) => srv.listen(0, "127.0.0.1", r));
const storage = new InMemoryStore();
const agent = new Agent({
	id: "o", name: "o", instructions: "Be brief.",
	model: { id: "custom/scripted", url: `http://127.0.0.1:${srv.address().port}/v1`, apiKey: "t" },
	memory: new Memory({ storage, options: { lastMessages: 40, workingMemory: { enabled: true } } }),
});
new Mastra({ agents: { o: agent }, storage, logger: false });
await agent.generate("I'm Ada", { memory: { thread: "t1", resource: "r1" } });
await agent.generate("again", { memory: { thread: "t2", resource: "r1" } });
srv.close();
const system = (body) => body.messages.filter((x) => x.role === "system")[1].content;
out.wireTool = bodies[0].tools[0].function;
out.wireSystem = [system(bodies[0]), system(bodies[2])];
out.wireToolResult = bodies[1].messages.find((x) => x.role === "tool").content;
console.log(JSON.stringify(out, null, 1));
