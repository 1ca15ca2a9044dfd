import { toBrainRequest } from "./brain-request.js";
import { citeDocuments } from "./document-citations.js";
import type { MessagesRequest } from "./request-schema.js";
import {
  declaredWebTools,
  runWebTools,
  type ServerToolCounts,
  serverToolId,
  type WebFixtures,
} from "./server-tools.js";
import type { Brain, BrainReply, ReplyBlock } from "./types.js";

/**
 * The server's sampling loop stops after this many iterations and answers `pause_turn`, which
 * the client continues (server tools page, "pause_turn"; the figure is the page's default).
 */
export const MAX_SERVER_TOOL_ITERATIONS = 10;

export interface BrainTurn {
  reply: BrainReply;
  /** `usage.server_tool_use` when the request declares a web tool, else null. */
  serverToolUse: ServerToolCounts | null;
}

/**
 * One response's worth of the brain (R-D4). When the request declares web search or web fetch
 * and the brain's reply ends in a call to one, the simulator runs it (server-tools.ts) and asks
 * the brain again with the reply and the result as the assistant turn so far — the API samples
 * on after a server tool in the same response — until a reply ends otherwise, or
 * MAX_SERVER_TOOL_ITERATIONS have run (then `pause_turn`). A call inside a reply gets its result
 * right after it. Without web tools the brain answers once, as before.
 */
export async function brainTurn(options: {
  brain: Brain;
  body: MessagesRequest;
  querySource: string | null;
  seed: number;
  apiKey: string;
  web: WebFixtures;
  /** Digest of the request: server tool ids are the same for the same request. */
  requestDigest: string;
  now: number;
}): Promise<BrainTurn> {
  const { brain, body } = options;
  const ask = (b: MessagesRequest) =>
    brain(toBrainRequest(b, options.querySource, options.seed, options.apiKey));
  const first = await ask(body);
  if (declaredWebTools(body).size === 0) return { reply: citeDocuments(first, body), serverToolUse: null };
  const used = { web_search_requests: 0, web_fetch_requests: 0, calls: {} };
  const content: ReplyBlock[] = [];
  let current = first;
  let stopReason = first.stop_reason;
  for (let iteration = 1; ; iteration++) {
    const offset = content.length;
    const ran = runWebTools(
      current.content,
      body,
      options.web,
      used,
      (i) => serverToolId(options.requestDigest, offset + i),
      options.now,
    );
    content.push(...(iteration === 1 ? ran : ran.filter((b) => b.type !== "thinking")));
    stopReason = current.stop_reason;
    const last = current.content.at(-1);
    const waitsForResult = last?.type === "server_tool_use" && content.at(-1)?.type !== "server_tool_use";
    if (!waitsForResult || current.stop_reason === "pause_turn") break;
    if (iteration >= MAX_SERVER_TOOL_ITERATIONS) {
      stopReason = "pause_turn";
      break;
    }
    current = await ask({
      ...body,
      messages: [...body.messages, { role: "assistant", content: asParams(content) }],
    });
  }
  const { calls: _calls, ...counts } = used;
  return {
    reply: citeDocuments({ ...first, content, stop_reason: stopReason }, body),
    serverToolUse: counts,
  };
}

/** The reply so far as an assistant message's blocks (thinking left out: the brain needs none). */
function asParams(blocks: readonly ReplyBlock[]): MessagesRequest["messages"][number]["content"] {
  return blocks.flatMap((block) => {
    if (block.type === "thinking") return [];
    if (block.type === "text") return [{ type: "text" as const, text: block.text }];
    return [block as never];
  });
}
