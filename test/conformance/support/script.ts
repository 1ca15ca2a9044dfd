import type { Brain, BrainReply, BrainRequest, ReplyBlock } from "@forkloop/sim";
import { type RequestRole, roleOf } from "./request-roles.js";

/** What a script sees: the simulator's brain request, the request's role and the run's directory. */
export interface ScriptRequest extends BrainRequest {
  role: RequestRole;
  /** The run's working directory (absolute), for tool inputs that need absolute paths. */
  work: string;
}

export interface Script {
  /**
   * The tasks the main conversation hands to sub-agents (the `prompt` of its Agent calls): a
   * request holding one in a user message's text is that sub-agent's.
   */
  tasks?: readonly string[];
  main(request: ScriptRequest): BrainReply;
  subAgent?(request: ScriptRequest & { role: { kind: "sub-agent" } }): BrainReply;
  /** Requests without tools (Claude Code's side calls); default: a short text. */
  side?(request: ScriptRequest): BrainReply;
}

/** Raised by a script for a request it did not expect; the harness reports it. */
export class UnexpectedRequest extends Error {
  override readonly name = "UnexpectedRequest";
}

/**
 * A brain answering by role. Every reply leaves out the thinking block the simulator would add
 * under adaptive thinking (a model may answer without thinking), so the script alone decides
 * the content both sides receive.
 */
export function scriptBrain(script: Script, work: string): Brain {
  return (request) => {
    const role = roleOf(request.body, script.tasks ?? []);
    const scripted = { ...request, role, work };
    const reply =
      role.kind === "main"
        ? script.main(scripted)
        : role.kind === "sub-agent"
          ? (script.subAgent?.({ ...scripted, role }) ?? unexpected(scripted))
          : (script.side?.(scripted) ?? text("(side call answered by the conformance script)"));
    return { adaptiveThinking: false, ...reply };
  };
}

function unexpected(request: ScriptRequest): never {
  throw new UnexpectedRequest(`no script for ${JSON.stringify(request.role)}`);
}

export function text(value: string): BrainReply {
  return { content: [{ type: "text", text: value }] };
}

export function toolCall(name: string, input: Record<string, unknown>, say?: string): BrainReply {
  const call: ReplyBlock = { type: "tool_use", name, input };
  return { content: say === undefined ? [call] : [{ type: "text", text: say }, call] };
}

export function toolCalls(calls: readonly { name: string; input: Record<string, unknown> }[]): BrainReply {
  return { content: calls.map((call): ReplyBlock => ({ type: "tool_use", ...call })) };
}

/**
 * An Agent call the main conversation makes, in the foreground (`run_in_background: false`: the
 * Agent SDK's sub-agents run in the background unless the model asks otherwise, forkloop's run
 * in the foreground; a script that wants the background says so).
 */
export function agentCall(input: {
  description: string;
  prompt: string;
  subagent_type?: string;
  run_in_background?: boolean;
}): BrainReply {
  return toolCall("Agent", { subagent_type: "general-purpose", run_in_background: false, ...input });
}

/** Replies by turn: the nth reply for turn n, the last one after that. */
export function byTurn(request: ScriptRequest, replies: readonly BrainReply[]): BrainReply {
  const turn = request.role.kind === "side" ? 0 : request.role.turn;
  const reply = replies[Math.min(turn, replies.length - 1)];
  if (reply === undefined) throw new UnexpectedRequest("byTurn needs at least one reply");
  return reply;
}

/**
 * A final answer in a requested JSON shape, as a model gives it: through the `StructuredOutput`
 * tool when the client offers one (the Agent SDK's structured outputs), else as JSON text (the
 * API's `output_config.format`, which forkloop uses).
 */
export function structuredAnswer(request: ScriptRequest, value: Record<string, unknown>): BrainReply {
  return request.toolNames.includes("StructuredOutput")
    ? toolCall("StructuredOutput", value)
    : text(JSON.stringify(value));
}
