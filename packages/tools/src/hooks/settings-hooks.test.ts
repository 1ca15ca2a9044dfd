import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { PreToolUseOutcome } from "@forkloop/loop-core";
import { describe, expect, it } from "vitest";
import type { HookSettings, Settings } from "../settings/settings-schema.js";
import { isProcessAlive, useTempWorkspace, waitFor } from "../testing/index.js";
import { runHookEvent } from "./run-hook-event.js";
import {
  createSessionEventHooks,
  createSettingsHooks,
  type HookNotice,
  mergeHooks,
  withToolMatcher,
} from "./settings-hooks.js";

const ws = useTempWorkspace();

function settingsWith(hooks: HookSettings): Settings {
  return { permissions: { allow: [], ask: [], deny: [] }, hooks };
}

/** A hook group running one shell command for the given matcher. */
function group(command: string, matcher?: string, timeout?: number) {
  return [
    {
      ...(matcher === undefined ? {} : { matcher }),
      hooks: [{ type: "command" as const, command, ...(timeout ? { timeout } : {}) }],
    },
  ];
}

function hooksFor(hooks: HookSettings, notices: HookNotice[] = []) {
  return createSettingsHooks(settingsWith(hooks), {
    cwd: ws.root,
    sessionId: "session-1",
    transcriptPath: "/tmp/t.msgpack",
    onNotice: (notice) => notices.push(notice),
  });
}

async function preToolUse(
  hooks: HookSettings,
  toolName = "Bash",
  notices: HookNotice[] = [],
): Promise<PreToolUseOutcome> {
  const [hook] = hooksFor(hooks, notices).preToolUse ?? [];
  if (hook === undefined) throw new Error("no preToolUse hook");
  return hook({
    toolName,
    toolInput: { command: "rm -rf build" },
    toolUseId: "toolu_1",
    context: ws.context(),
  });
}

describe("PreToolUse shell hooks (Claude Code protocol)", () => {
  it("R-T1: the hook gets the event as JSON on stdin and CLAUDE_PROJECT_DIR", async () => {
    const outcome = await preToolUse({
      PreToolUse: group('cat > stdin.json; echo "$CLAUDE_PROJECT_DIR" > dir.txt'),
    });
    expect(outcome).toEqual({});
    expect(JSON.parse(readFileSync(join(ws.root, "stdin.json"), "utf8"))).toEqual({
      session_id: "session-1",
      transcript_path: "/tmp/t.msgpack",
      cwd: ws.root,
      hook_event_name: "PreToolUse",
      permission_mode: "default",
      tool_name: "Bash",
      tool_input: { command: "rm -rf build" },
      tool_use_id: "toolu_1",
    });
    expect(readFileSync(join(ws.root, "dir.txt"), "utf8").trim()).toBe(ws.root);
  });

  it("R-T1, R-X1: exit code 2 blocks the call with stderr as the reason, and Claude Code's blocking error (command, stderr as written)", async () => {
    const outcome = await preToolUse({ PreToolUse: group("echo 'no deleting builds' >&2; exit 2") });
    expect(outcome).toEqual({
      decision: "deny",
      reason: "no deleting builds",
      blockingError: "[echo 'no deleting builds' >&2; exit 2]: no deleting builds\n",
    });
  });

  it("R-T1: JSON permissionDecision allow / ask and updatedInput modify the call", async () => {
    const allow = JSON.stringify({
      hookSpecificOutput: {
        hookEventName: "PreToolUse",
        permissionDecision: "allow",
        permissionDecisionReason: "safe",
        updatedInput: { command: "rm -rf build/tmp" },
      },
    });
    expect(await preToolUse({ PreToolUse: group(`echo '${allow}'`) })).toEqual({
      decision: "allow",
      reason: "safe",
      updatedInput: { command: "rm -rf build/tmp" },
    });
    const ask = JSON.stringify({ hookSpecificOutput: { permissionDecision: "ask" } });
    expect(await preToolUse({ PreToolUse: group(`echo '${ask}'`) })).toEqual({ decision: "ask" });
  });

  it("R-T1: the most restrictive answer wins when several hooks run", async () => {
    const allow = JSON.stringify({ decision: "approve", reason: "fine" });
    const deny = JSON.stringify({
      hookSpecificOutput: { permissionDecision: "deny", permissionDecisionReason: "not today" },
    });
    const outcome = await preToolUse({
      PreToolUse: [...group(`echo '${allow}'`), ...group(`echo '${deny}'`)],
    });
    expect(outcome).toEqual({ decision: "deny", reason: "not today" });
  });

  it("R-L6: continue:false stops the loop with the stop reason (terminal hook_stopped)", async () => {
    const stop = JSON.stringify({ continue: false, stopReason: "budget exhausted" });
    expect(await preToolUse({ PreToolUse: group(`echo '${stop}'`) })).toEqual({
      continue: false,
      stopReason: "budget exhausted",
    });
  });

  it("R-T1: matchers are regexes on the tool name; others do not run", async () => {
    const hooks = { PreToolUse: group("touch ran", "Edit|Write") };
    await preToolUse(hooks, "Bash");
    expect(existsSync(join(ws.root, "ran"))).toBe(false);
    await preToolUse(hooks, "Write");
    expect(existsSync(join(ws.root, "ran"))).toBe(true);
  });

  it("R-T1: other exit codes are non-blocking errors, reported as notices", async () => {
    const notices: HookNotice[] = [];
    const outcome = await preToolUse({ PreToolUse: group("echo broken >&2; exit 1") }, "Bash", notices);
    expect(outcome).toEqual({});
    expect(notices).toEqual([
      {
        event: "PreToolUse",
        kind: "error",
        message: "hook `echo broken >&2; exit 1` failed with exit code 1: broken",
      },
    ]);
  });

  it("R-T1: a hook past its timeout is killed with its process group", async () => {
    const notices: HookNotice[] = [];
    const command = "sleep 300 & echo $! > hook.pid; wait";
    const outcome = await preToolUse({ PreToolUse: group(command, undefined, 1) }, "Bash", notices);
    expect(outcome).toEqual({});
    expect(notices[0]?.message).toMatch(/timed out and was killed/);
    const pid = Number(readFileSync(join(ws.root, "hook.pid"), "utf8"));
    expect(await waitFor(() => !isProcessAlive(pid))).toBe(true);
  });
});

describe("PostToolUse and Stop shell hooks", () => {
  it("R-T1: PostToolUse exit 2 feeds stderr back to the model; the result is on stdin", async () => {
    const [hook] =
      hooksFor({ PostToolUse: group("cat > post.json; echo 'lint: 2 errors' >&2; exit 2") }).postToolUse ??
      [];
    const outcome = await hook?.({
      toolName: "Edit",
      toolInput: { file_path: "a.ts" },
      toolUseId: "toolu_2",
      context: ws.context(),
      result: { content: "updated" },
    });
    expect(outcome).toEqual({ additionalContext: "lint: 2 errors" });
    const stdin = JSON.parse(readFileSync(join(ws.root, "post.json"), "utf8"));
    // A result without structured output is its text (R-X1, as the call's tool_use_result).
    expect(stdin.tool_response).toBe("updated");
    expect(stdin.hook_event_name).toBe("PostToolUse");
  });

  it("R-L15: a blocking Stop hook returns its reason so the loop continues; stop_hook_active is passed", async () => {
    const block = JSON.stringify({ decision: "block", reason: "tests still fail" });
    const [stop] = hooksFor({ Stop: group(`cat > stop.json; echo '${block}'`) }).stop ?? [];
    const outcome = await stop?.({ messages: [], stopHookActive: true, context: ws.context() });
    expect(outcome).toEqual({ blockingErrors: ["tests still fail"] });
    expect(JSON.parse(readFileSync(join(ws.root, "stop.json"), "utf8"))).toMatchObject({
      hook_event_name: "Stop",
      stop_hook_active: true,
    });
    const [exit2] = hooksFor({ Stop: group("echo 'fix lint first' >&2; exit 2") }).stop ?? [];
    expect(await exit2?.({ messages: [], stopHookActive: false, context: ws.context() })).toEqual({
      blockingErrors: ["fix lint first"],
    });
  });

  it("R-L15: continue:false from a Stop hook prevents continuation (stop_hook_prevented)", async () => {
    const [stop] =
      hooksFor({ Stop: group(`echo '{"continue": false, "stopReason": "done for today"}'`) }).stop ?? [];
    expect(await stop?.({ messages: [], stopHookActive: false, context: ws.context() })).toEqual({
      preventContinuation: true,
      stopReason: "done for today",
    });
  });

  it("R-F1: a sub-agent's stop runs SubagentStop hooks, not Stop hooks", async () => {
    const hooks = hooksFor({ Stop: group("touch stop-ran"), SubagentStop: group("touch subagent-ran") });
    const context = { ...ws.context(), agentId: "agent-7" };
    await hooks.stop?.[0]?.({ messages: [], stopHookActive: false, context });
    expect(existsSync(join(ws.root, "subagent-ran"))).toBe(true);
    expect(existsSync(join(ws.root, "stop-ran"))).toBe(false);
  });

  it("R-T1: no hooks configured means no hook functions (nothing is spawned)", () => {
    expect(hooksFor({})).toEqual({});
  });
});

describe("runHookEvent for the other events", () => {
  const input = () => ({ cwd: ws.root, sessionId: "s" });

  it("R-T1, R-X1: UserPromptSubmit plain stdout becomes context in Claude Code's words; exit 2 blocks the prompt", async () => {
    const settings = settingsWith({ UserPromptSubmit: group('cat > prompt.json; echo "today is Monday"') });
    const outcome = await runHookEvent("UserPromptSubmit", settings, { ...input(), prompt: "hello" });
    expect(outcome.additionalContext).toEqual(["UserPromptSubmit hook success: today is Monday"]);
    expect(JSON.parse(readFileSync(join(ws.root, "prompt.json"), "utf8")).prompt).toBe("hello");
    const blocked = await runHookEvent(
      "UserPromptSubmit",
      settingsWith({ UserPromptSubmit: group("echo secret >&2; exit 2") }),
      input(),
    );
    expect(blocked.blocked).toBe(true);
    expect(blocked.blockReasons).toEqual(["secret"]);
  });

  it("R-X1: UserPromptExpansion's plain stdout and additionalContext reach the model in Claude Code's words (claude-cli scenario hooks-prompt-expansion-context); SubagentStart's plain stdout does not (hooks-subagent-start-context)", async () => {
    const answer = (event: string) =>
      `'{"hookSpecificOutput":{"hookEventName":"${event}","additionalContext":"from JSON"}}'`;
    const expansion = await runHookEvent(
      "UserPromptExpansion",
      settingsWith({
        UserPromptExpansion: [...group("echo plain"), ...group(`echo ${answer("UserPromptExpansion")}`)],
      }),
      { ...input(), prompt: "/greet Ada" },
    );
    expect(expansion.additionalContext).toEqual([
      "UserPromptExpansion hook success: plain",
      "UserPromptExpansion hook additional context: from JSON",
    ]);
    const start = await runHookEvent(
      "SubagentStart",
      settingsWith({ SubagentStart: [...group("echo plain"), ...group(`echo ${answer("SubagentStart")}`)] }),
      { ...input(), agentId: "agent-1", agentType: "general-purpose" },
    );
    expect(start.additionalContext).toEqual(["SubagentStart hook additional context: from JSON"]);
  });

  it("R-X1, R-X4: hook text for the model over 10,000 characters is saved under the session's directory and the model gets Claude Code's <persisted-output> preview (its size, the file, the first 2,000 characters ending at a line break); 10,000 stay whole", async () => {
    const line = "y".repeat(299);
    const stdout = `CTXC\n${`${line}\n`.repeat(60)}`.trim();
    writeFileSync(join(ws.root, "long.txt"), stdout);
    const whole = `CTXA${"x".repeat(9_996)}`;
    const answer = JSON.stringify({
      hookSpecificOutput: { hookEventName: "UserPromptSubmit", additionalContext: whole },
    });
    writeFileSync(join(ws.root, "whole.json"), answer);
    const settings = settingsWith({
      UserPromptSubmit: [...group("cat long.txt"), ...group("cat whole.json")],
    });
    const transcriptPath = join(ws.root, "sessions", "s.fltr");
    const outcome = await runHookEvent("UserPromptSubmit", settings, {
      ...input(),
      prompt: "hi",
      transcriptPath,
    });
    const [long, kept] = outcome.additionalContext;
    expect(kept).toBe(`UserPromptSubmit hook additional context: ${whole}`);
    const saved = /Full output saved to: (\S+-stdout\.txt)\n/.exec(long ?? "")?.[1];
    expect(saved?.startsWith(join(ws.root, "sessions", "s", "tool-results", "hook-"))).toBe(true);
    expect(readFileSync(saved ?? "", "utf8")).toBe(stdout);
    expect(long).toBe(
      "UserPromptSubmit hook success: " +
        `<persisted-output>\nOutput too large (17.6KB). Full output saved to: ${saved}\n\n` +
        `Preview (first 2KB):\nCTXC\n${`${line}\n`.repeat(5)}${line}\n...\n</persisted-output>`,
    );
    // Without a transcript there is nowhere to keep it: the text stays whole.
    const kept2 = await runHookEvent("UserPromptSubmit", settings, { ...input(), prompt: "hi" });
    expect(kept2.additionalContext).toEqual([
      `UserPromptSubmit hook success: ${stdout}`,
      `UserPromptSubmit hook additional context: ${whole}`,
    ]);
  });

  it("R-T1: SessionStart and PreCompact matchers match the source and the trigger", async () => {
    const settings = settingsWith({
      SessionStart: group("echo resumed-context", "resume"),
      PreCompact: group('echo \'{"systemMessage": "compacting"}\'', "auto"),
    });
    expect(
      (await runHookEvent("SessionStart", settings, { ...input(), source: "startup" })).results,
    ).toHaveLength(0);
    expect(
      (await runHookEvent("SessionStart", settings, { ...input(), source: "resume" })).additionalContext,
    ).toEqual(["SessionStart:resume hook success: resumed-context"]);
    const compact = await runHookEvent("PreCompact", settings, { ...input(), trigger: "auto" });
    expect(compact.systemMessages).toEqual(["compacting"]);
  });
});

describe("in-process function hooks", () => {
  it("R-T1: mergeHooks keeps function hooks and shell hooks in order; withToolMatcher filters by tool", async () => {
    writeFileSync(join(ws.root, "marker"), "");
    const calls: string[] = [];
    const fnHooks = {
      preToolUse: [
        withToolMatcher("Edit|Write", async (input: { toolName: string }) => {
          calls.push(`fn:${input.toolName}`);
          return { decision: "deny" as const, reason: "read-only session" };
        }),
      ],
    };
    const merged = mergeHooks(fnHooks, hooksFor({ PreToolUse: group("true") }));
    expect(merged.preToolUse).toHaveLength(2);
    const [fn] = merged.preToolUse ?? [];
    const context = ws.context();
    expect(await fn?.({ toolName: "Bash", toolInput: {}, toolUseId: "t", context })).toEqual({});
    expect(await fn?.({ toolName: "Edit", toolInput: {}, toolUseId: "t", context })).toEqual({
      decision: "deny",
      reason: "read-only session",
    });
    expect(calls).toEqual(["fn:Edit"]);
    expect(mergeHooks()).toEqual({});
  });
});

describe("R-S4: hook processes get no model credentials", () => {
  it("R-S4: ANTHROPIC_API_KEY is not in a hook's environment; a settings env entry is", async () => {
    const saved = process.env.ANTHROPIC_API_KEY;
    process.env.ANTHROPIC_API_KEY = "sk-hook-secret";
    try {
      const settings: Settings = {
        ...settingsWith({ Stop: group('echo "[$ANTHROPIC_API_KEY][$FROM_SETTINGS]" > env.txt') }),
        env: { FROM_SETTINGS: "s" },
      };
      await runHookEvent("Stop", settings, { sessionId: "s", cwd: ws.root });
      expect(readFileSync(join(ws.root, "env.txt"), "utf8")).toBe("[][s]\n");
    } finally {
      if (saved === undefined) delete process.env.ANTHROPIC_API_KEY;
      else process.env.ANTHROPIC_API_KEY = saved;
    }
  });
});

describe("R-X1: the events Claude Code fires headless, with its input fields", () => {
  const read = (name: string) => JSON.parse(readFileSync(join(ws.root, name), "utf8"));

  it("R-X1: a failed call is a PostToolUseFailure with its error text, not a PostToolUse; a sub-agent's calls name the sub-agent", async () => {
    const hooks = createSettingsHooks(
      settingsWith({
        PostToolUse: group("cat > post.json"),
        PostToolUseFailure: group("cat > failure.json", "Read"),
      }),
      {
        cwd: ws.root,
        sessionId: "session-1",
        agentType: (agentId) => (agentId === "agent-1" ? "Explore" : undefined),
      },
    );
    const [post] = hooks.postToolUse ?? [];
    if (post === undefined) throw new Error("no postToolUse hook");
    const call = { toolName: "Read", toolInput: { file_path: "missing.txt" }, toolUseId: "toolu_1" };
    await post({
      ...call,
      result: { content: "File does not exist: missing.txt", isError: true },
      context: { ...ws.context(), agentId: "agent-1" },
    });
    expect(read("failure.json")).toMatchObject({
      hook_event_name: "PostToolUseFailure",
      agent_id: "agent-1",
      agent_type: "Explore",
      tool_name: "Read",
      tool_input: { file_path: "missing.txt" },
      tool_use_id: "toolu_1",
      error: "File does not exist: missing.txt",
      is_interrupt: false,
    });
    expect(existsSync(join(ws.root, "post.json"))).toBe(false);
    // The control: a successful call of the main agent is a PostToolUse without agent fields.
    await post({ ...call, result: { content: "hello" }, context: ws.context() });
    const success = read("post.json");
    expect(success).toMatchObject({ hook_event_name: "PostToolUse", tool_response: "hello" });
    expect(success.agent_id).toBeUndefined();
  });

  it("R-X1: SubagentStart runs the settings' commands its matcher (the agent type) accepts, after the message holding the call is out, and gives the model their additionalContext in Claude Code's words (their plain stdout none)", async () => {
    const context = `'{"hookSpecificOutput":{"hookEventName":"SubagentStart","additionalContext":"SUBCTX"}}'`;
    const yielded: string[] = [];
    const hooks = createSettingsHooks(
      settingsWith({
        SubagentStart: [
          ...group("cat > start-explore.json", "Explore"),
          ...group(`cat > start-any.json; test -f yielded && echo ${context}`),
          ...group("cat > /dev/null; echo plain stdout"),
        ],
      }),
      {
        cwd: ws.root,
        sessionId: "session-1",
        transcriptPath: "/tmp/t.fltr",
        toolUseYielded: async (toolUseId) => {
          yielded.push(toolUseId);
          writeFileSync(join(ws.root, "yielded"), "");
        },
      },
    );
    const [start] = hooks.subagentStart ?? [];
    if (start === undefined) throw new Error("no subagentStart hook");
    const outcome = await start({
      agentType: "general-purpose",
      toolUseId: "toolu_9",
      context: { ...ws.context(), agentId: "agent-2" },
    });
    expect(yielded).toEqual(["toolu_9"]);
    // The context came from a command that saw the message out (the `yielded` file).
    expect(outcome).toEqual({ additionalContext: ["SubagentStart hook additional context: SUBCTX"] });
    expect(existsSync(join(ws.root, "start-explore.json"))).toBe(false);
    expect(read("start-any.json")).toEqual({
      session_id: "session-1",
      transcript_path: "/tmp/t.fltr",
      cwd: ws.root,
      hook_event_name: "SubagentStart",
      agent_id: "agent-2",
      agent_type: "general-purpose",
    });
  });

  it("R-X1: SessionEnd runs the settings' commands; nothing is set up for events without hooks", async () => {
    const events = createSessionEventHooks(settingsWith({ SessionEnd: group("cat > end.json") }), {
      cwd: ws.root,
      sessionId: "session-1",
      transcriptPath: "/tmp/t.fltr",
    });
    await events.sessionEnd?.("other");
    expect(read("end.json")).toMatchObject({ hook_event_name: "SessionEnd", reason: "other" });
    expect(createSessionEventHooks(settingsWith({}), { cwd: ws.root, sessionId: "s" })).toEqual({});
    expect(createSettingsHooks(settingsWith({}), { cwd: ws.root, sessionId: "s" })).toEqual({});
  });

  it("R-X1: PermissionRequest runs the commands its matcher (the tool name) accepts with tool_name, tool_input, permission_suggestions and the effort; a deny among their decisions wins, else an allow; a sub-agent's call names the sub-agent", async () => {
    const allow = `'{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow","updatedInput":{"content":"ok"}}}}'`;
    const deny = `'{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"deny","message":"no","interrupt":true}}}'`;
    const events = (hooks: ReturnType<typeof group>) =>
      createSessionEventHooks(settingsWith({ PermissionRequest: hooks }), {
        cwd: ws.root,
        sessionId: "session-1",
        transcriptPath: "/tmp/t.fltr",
        effort: () => "medium",
        agentType: (agentId) => (agentId === "agent-2" ? "writer" : undefined),
      });
    const request = {
      toolName: "Write",
      toolInput: { file_path: join(ws.root, "out.txt"), content: "hi" },
      suggestions: [{ type: "setMode", mode: "acceptEdits", destination: "session" }],
      mode: "default" as const,
      toolUseId: "toolu_1",
      agentId: "main",
    };
    const silent = events([...group("cat > asked.json", "Write"), ...group("cat > bash.json", "Bash")]);
    expect(await silent.permissionRequest?.(request)).toBeUndefined();
    expect(existsSync(join(ws.root, "bash.json"))).toBe(false);
    expect(read("asked.json")).toEqual({
      session_id: "session-1",
      transcript_path: "/tmp/t.fltr",
      cwd: ws.root,
      hook_event_name: "PermissionRequest",
      permission_mode: "default",
      effort: { level: "medium" },
      tool_name: "Write",
      tool_input: request.toolInput,
      permission_suggestions: request.suggestions,
    });
    expect(await events(group(`printf '%s' ${allow}`)).permissionRequest?.(request)).toEqual({
      behavior: "allow",
      updatedInput: { content: "ok" },
    });
    const both = events([...group(`printf '%s' ${deny}`), ...group(`printf '%s' ${allow}`)]);
    expect(await both.permissionRequest?.(request)).toEqual({
      behavior: "deny",
      message: "no",
      interrupt: true,
    });
    await silent.permissionRequest?.({ ...request, agentId: "agent-2" });
    expect(read("asked.json")).toMatchObject({ agent_id: "agent-2", agent_type: "writer" });
  });

  it("R-X1: PostToolBatch gets a reply's calls with what the model is sent back; MessageDisplay the main agent's reply text, as Claude Code's", async () => {
    const [batch] = hooksFor({ PostToolBatch: group("cat > batch.json") }).postToolBatch ?? [];
    if (batch === undefined) throw new Error("no postToolBatch hook");
    await batch({
      calls: [
        { toolName: "Read", toolInput: { file_path: "a.txt" }, toolUseId: "toolu_1", toolResponse: "1\thi" },
        {
          toolName: "Agent",
          toolInput: { prompt: "p" },
          toolUseId: "toolu_2",
          toolResponse: [{ type: "text", text: "ok" }],
        },
      ],
      context: { ...ws.context(), agentId: "agent-3" },
    });
    expect(read("batch.json")).toMatchObject({
      hook_event_name: "PostToolBatch",
      permission_mode: "default",
      agent_id: "agent-3",
      tool_calls: [
        {
          tool_name: "Read",
          tool_input: { file_path: "a.txt" },
          tool_use_id: "toolu_1",
          tool_response: "1\thi",
        },
        {
          tool_name: "Agent",
          tool_input: { prompt: "p" },
          tool_use_id: "toolu_2",
          tool_response: [{ type: "text", text: "ok" }],
        },
      ],
    });
    const events = createSessionEventHooks(settingsWith({ MessageDisplay: group("cat > shown.json") }), {
      cwd: ws.root,
      sessionId: "session-1",
      transcriptPath: "/tmp/t.fltr",
    });
    await events.messageDisplay?.({ turnId: "turn-1", messageId: "msg-1", text: "Done." });
    expect(read("shown.json")).toEqual({
      session_id: "session-1",
      transcript_path: "/tmp/t.fltr",
      cwd: ws.root,
      hook_event_name: "MessageDisplay",
      turn_id: "turn-1",
      message_id: "msg-1",
      index: 0,
      final: true,
      delta: "Done.",
    });
  });

  it("R-X1: the hooks of a prompt carry its prompt_id (not SessionStart); those within a model turn the effort; PostToolUse the call's duration_ms; Stop background_tasks and session_crons", async () => {
    const hooks = createSettingsHooks(
      settingsWith({
        PostToolUse: group("cat > post.json"),
        Stop: group("cat > stop.json"),
        SessionStart: group("cat > start.json"),
      }),
      {
        cwd: ws.root,
        sessionId: "session-1",
        promptId: () => "prompt-1",
        effort: () => "medium",
      },
    );
    const context = ws.context();
    await hooks.postToolUse?.[0]?.({
      toolName: "Read",
      toolInput: { file_path: "a.txt" },
      toolUseId: "toolu_1",
      result: { content: "hi" },
      durationMs: 12,
      context,
    });
    expect(read("post.json")).toMatchObject({
      prompt_id: "prompt-1",
      effort: { level: "medium" },
      duration_ms: 12,
    });
    await hooks.stop?.[0]?.({ messages: [], stopHookActive: false, context });
    expect(read("stop.json")).toMatchObject({
      prompt_id: "prompt-1",
      effort: { level: "medium" },
      background_tasks: [],
      session_crons: [],
    });
    await hooks.sessionStart?.[0]?.({ source: "startup", model: "m", context });
    const start = read("start.json");
    expect(start.prompt_id).toBeUndefined();
    expect(start.effort).toBeUndefined();
  });
});
