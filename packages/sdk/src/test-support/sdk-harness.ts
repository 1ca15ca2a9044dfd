import { mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  type BrainReply,
  type BrainRequest,
  builtinPolicyBrain,
  type Simulator,
  startSimulator,
} from "@forkloop/sim";
import type { SDKMessage } from "../messages.js";
import type { Options } from "../options.js";
import { query } from "../query.js";
import { streamJsonLineSchema } from "../stream-json.js";

/** A project directory and a simulator whose brain the test scripts (other requests: the built-in policy). */
export async function startHarness(
  brain: (request: BrainRequest) => BrainReply | Promise<BrainReply> | undefined,
  simOptions: Parameters<typeof startSimulator>[0] = {},
): Promise<{
  sim: Simulator;
  dir: string;
  /** Where the harness's sessions are kept: for the session helpers (`listSessions(harness.at)`). */
  at: { dir: string; stateDir: string };
  options: (extra?: Options) => Options;
  close(): Promise<void>;
}> {
  const sim = await startSimulator({
    ...simOptions,
    brain: (request) => brain(request) ?? builtinPolicyBrain(request),
  });
  const dir = realpathSync(mkdtempSync(join(tmpdir(), "forkloop-sdk-")));
  writeFileSync(join(dir, "notes.md"), "# Release notes\nexport const version = 3;\n");
  const warnings: string[] = [];
  // Outside the project, as the user's own state directory is: state inside a checkout is used
  // only when recorded as the user's own (R-S11), which is its own test.
  const stateDir = realpathSync(mkdtempSync(join(tmpdir(), "forkloop-sdk-state-")));
  return {
    sim,
    dir,
    at: { dir, stateDir },
    options: (extra = {}) => ({
      cwd: dir,
      stateDir,
      env: { ANTHROPIC_API_KEY: "test-key", ANTHROPIC_BASE_URL: sim.url, HOME: dir },
      stderr: (line) => warnings.push(line),
      ...extra,
    }),
    async close() {
      await sim.close();
      rmSync(dir, { recursive: true, force: true });
      rmSync(stateDir, { recursive: true, force: true });
    },
  };
}

/** Every message of a query, each checked against the stream-json schema it must follow. */
export async function collectMessages(run: AsyncIterable<SDKMessage>): Promise<SDKMessage[]> {
  const messages: SDKMessage[] = [];
  for await (const message of run) {
    const parsed = streamJsonLineSchema.safeParse(message);
    if (!parsed.success)
      throw new Error(`invalid message ${JSON.stringify(message)}: ${parsed.error.message}`);
    messages.push(message);
  }
  return messages;
}

export async function runQuery(prompt: string, options: Options): Promise<SDKMessage[]> {
  return collectMessages(query({ prompt, options }));
}

/**
 * The messages of a query that may end by throwing (an error result, an abort: as the Agent SDK
 * ends them), and what it threw.
 */
export async function runToThrow(
  run: AsyncIterable<SDKMessage>,
  onMessage: (message: SDKMessage) => void = () => {},
): Promise<{ messages: SDKMessage[]; thrown: unknown }> {
  const messages: SDKMessage[] = [];
  try {
    for await (const message of run) {
      messages.push(message);
      onMessage(message);
    }
  } catch (error) {
    return { messages, thrown: error };
  }
  return { messages, thrown: undefined };
}

/** A prompt stream the test feeds while the query runs. */
export function promptStream(): {
  stream: AsyncIterable<{
    type: "user";
    message: { role: "user"; content: string };
    parent_tool_use_id: null;
  }>;
  push(text: string): void;
  end(): void;
} {
  const queue: string[] = [];
  let ended = false;
  let wake: (() => void) | undefined;
  const notify = () => {
    const resolve = wake;
    wake = undefined;
    resolve?.();
  };
  return {
    stream: {
      async *[Symbol.asyncIterator]() {
        while (true) {
          const text = queue.shift();
          if (text !== undefined) {
            yield { type: "user", message: { role: "user", content: text }, parent_tool_use_id: null };
            continue;
          }
          if (ended) return;
          await new Promise<void>((resolve) => {
            wake = resolve;
          });
        }
      },
    },
    push(text) {
      queue.push(text);
      notify();
    },
    end() {
      ended = true;
      notify();
    },
  };
}
