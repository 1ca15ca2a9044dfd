// Hooks around a compaction and an API error: PreCompact, PostCompact and StopFailure callbacks,
// over three queries of one session — a turn, `/compact`, and a turn whose request the API refuses.
import { type HookCallbackMatcher, type HookEvent, query } from "@anthropic-ai/claude-agent-sdk";

const events: HookEvent[] = ["PreCompact", "PostCompact", "StopFailure"];
const hooks: Partial<Record<HookEvent, HookCallbackMatcher[]>> = {};
for (const event of events) {
  hooks[event] = [
    {
      hooks: [
        async (input) => {
          console.log(`hook ${input.hook_event_name}${input.agent_id === undefined ? "" : " (sub-agent)"}`);
          return {};
        },
      ],
    },
  ];
}

let sessionId: string | undefined;
for (const prompt of ["Say hello.", "/compact", "Now fail, please."]) {
  try {
    for await (const message of query({
      prompt,
      options: { hooks, ...(sessionId === undefined ? {} : { resume: sessionId }) },
    })) {
      if (message.type === "system" && message.subtype === "init") sessionId = message.session_id;
      if (message.type === "result") console.log(`result ${message.subtype} ${message.is_error}`);
    }
  } catch (error) {
    console.log(`thrown ${(error as Error).name}`);
  }
}
