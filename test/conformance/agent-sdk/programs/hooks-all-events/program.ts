// A callback for every hook event the Agent SDK documents, logging which fire and in which order
// (a tool call that fails, a sub-agent, the end of the session).
import { type HookCallbackMatcher, type HookEvent, query } from "@anthropic-ai/claude-agent-sdk";

const events: HookEvent[] = [
  "PreToolUse",
  "PostToolUse",
  "PostToolUseFailure",
  "Notification",
  "UserPromptSubmit",
  "SessionStart",
  "SessionEnd",
  "Stop",
  "SubagentStart",
  "SubagentStop",
  "PreCompact",
  "PermissionRequest",
];

const hooks: Partial<Record<HookEvent, HookCallbackMatcher[]>> = {};
for (const event of events) {
  hooks[event] = [
    {
      hooks: [
        async (input) => {
          console.log(`hook ${input.hook_event_name}`);
          return {};
        },
      ],
    },
  ];
}

for await (const message of query({
  prompt: "Read missing.txt, then ask a helper to read notes.txt.",
  options: { allowedTools: ["Read", "Agent"], hooks },
})) {
  if (message.type === "result") console.log(`result ${message.subtype}`);
}
