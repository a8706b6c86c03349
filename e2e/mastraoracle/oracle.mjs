// Runs the real @mastra/core Agent on a scripted model, for the differential
// test (e2e/mastra_oracle_test.go): the provider requests it makes are what
// Parley's are compared with. Reads one scenario as JSON on stdin:
//
//	{"baseURL": "http://127.0.0.1:PORT/v1", "instructions": "…",
//	 "tools": ["task_write", …], "threadId": "…", "resourceId": "…",
//	 "turns": [{"message": "…"}, {"resume": {…}}]}
//
// and writes what each turn's run ended with as JSON lines on stdout.
import { Agent } from "@mastra/core/agent";
import { Mastra } from "@mastra/core/mastra";
import { InMemoryStore } from "@mastra/core/storage";
import { Memory } from "@mastra/memory";
import { TaskSignalProvider } from "@mastra/core/signals";
import {
	askUserTool, submitPlanTool, taskCheckTool, taskCompleteTool, taskUpdateTool, taskWriteTool,
} from "@mastra/core/tools";

const builtins = {
	task_write: taskWriteTool, task_update: taskUpdateTool, task_complete: taskCompleteTool,
	task_check: taskCheckTool, ask_user: askUserTool, submit_plan: submitPlanTool,
};

let input = "";
for await (const chunk of process.stdin) input += chunk;
const sc = JSON.parse(input);

const tools = {};
for (const id of sc.tools ?? []) {
	if (!builtins[id]) throw new Error(`unknown tool ${id}`);
	tools[id] = builtins[id];
}
const storage = new InMemoryStore();
const agent = new Agent({
	id: "oracle",
	name: "oracle",
	instructions: sc.instructions ?? "",
	model: { id: sc.modelId ?? "custom/scripted", url: sc.baseURL, apiKey: "test" },
	tools,
	memory: new Memory({ storage, options: { lastMessages: 40 } }),
	...(sc.signals ? { signals: [new TaskSignalProvider()] } : {}),
});
new Mastra({ agents: { oracle: agent }, storage, logger: false });

const memory = { thread: sc.threadId ?? "thread-1", resource: sc.resourceId ?? "resource-1" };
let runId;
for (const turn of sc.turns) {
	let out;
	if (turn.message !== undefined && turn.during) {
		// A message sent to the run while its first text streams.
		const memoryTarget = { resourceId: memory.resource, threadId: memory.thread };
		const res = await agent.stream(turn.message, { memory });
		let sent = false;
		for await (const c of res.fullStream) {
			if (!sent && c.type === "text-delta") {
				sent = true;
				const target = { ...memoryTarget, runId: res.runId };
				if (turn.during.kind === "queue") agent.queueMessage(turn.during.text, target);
				else if (turn.during.kind === "signal") agent.sendSignal(turn.during.signal, target);
				else agent.sendMessage(turn.during.text, target);
			}
		}
		runId = res.runId;
		// Runs the message started after this one ended (a queued message).
		await new Promise((r) => setTimeout(r, turn.during.settleMs ?? 3000));
		continue;
	} else if (turn.message !== undefined && sc.stream) {
		// The stream's chunks, one JSON line each, for the chunk comparison.
		const res = await agent.stream(turn.message, { memory });
		for await (const c of res.fullStream) console.log("CHUNK " + JSON.stringify(c));
		runId = res.runId;
		continue;
	} else if (turn.message !== undefined) {
		out = await agent.generate(turn.message, { memory, ...(sc.maxSteps ? { maxSteps: sc.maxSteps } : {}) });
	} else {
		out = await agent.resumeGenerate(turn.resume, { runId, memory });
		if (out.finishReason === "error" || out.error) throw out.error ?? new Error("resume failed");
	}
	runId = out.runId;
	console.log(JSON.stringify({ runId: out.runId, finishReason: out.finishReason, text: out.text, suspended: out.suspendPayload ?? null }));
}
