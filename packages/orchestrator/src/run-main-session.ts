import type { LoopEvent, Terminal } from "@forkloop/loop-core";
import { createSession } from "./main-session.js";
import type { MainSessionOptions } from "./main-session-types.js";

/** One-shot: create a session, run one prompt, close. Yields the loop's events. */
export async function* runMainSession(
  options: MainSessionOptions & { readonly prompt: string; readonly signal?: AbortSignal },
): AsyncGenerator<LoopEvent, Terminal & { readonly sessionId: string }> {
  const session = await createSession(options);
  try {
    const terminal = yield* session.run(
      options.prompt,
      options.signal === undefined ? {} : { signal: options.signal },
    );
    return { ...terminal, sessionId: session.sessionId };
  } finally {
    await session.close();
  }
}
