import type { CanUseTool, PermissionMode } from "@forkloop/loop-core";
import { describe, expect, it } from "vitest";
import { createBuiltinTools } from "../builtin-tools.js";
import {
  createPermissionChecker,
  type PermissionDenial,
  type PermissionRules,
} from "./permission-checker.js";

const tools = createBuiltinTools();
const CWD = "/project";
const noRules: PermissionRules = { allow: [], ask: [], deny: [] };

const calls = {
  read: ["Read", { file_path: "/project/src/a.ts" }],
  grep: ["Grep", { pattern: "x" }],
  edit: ["Edit", { file_path: "/project/src/a.ts", old_string: "a", new_string: "b" }],
  write: ["Write", { file_path: "/project/new.ts", content: "x" }],
  bash: ["Bash", { command: "npm install" }],
  bashReadOnly: ["Bash", { command: "git status" }],
  todo: ["TodoWrite", { todos: [] }],
} as const;
type CallName = keyof typeof calls;

async function decide(
  mode: PermissionMode,
  call: CallName,
  options: { rules?: Partial<PermissionRules>; askCaller?: CanUseTool; approvedByHook?: true } = {},
) {
  const { decision: decided, denials } = await decideWithProvenance(mode, call, options);
  // What decided the call is the provenance tests' subject (below), not these.
  const { decidedBy: _, ...decision } = decided;
  return { decision, denials };
}

async function decideWithProvenance(
  mode: PermissionMode,
  call: CallName,
  options: { rules?: Partial<PermissionRules>; askCaller?: CanUseTool; approvedByHook?: true } = {},
) {
  const denials: PermissionDenial[] = [];
  const checker = createPermissionChecker({
    mode,
    rules: { ...noRules, ...options.rules },
    tools,
    cwd: CWD,
    onDenial: (denial) => denials.push(denial),
    ...(options.askCaller ? { askCaller: options.askCaller } : {}),
  });
  const [toolName, input] = calls[call];
  const decision = await checker(
    toolName,
    { ...input },
    {
      signal: new AbortController().signal,
      toolUseId: "t1",
      agentId: "main",
      ...(options.approvedByHook ? { approvedByHook: true } : {}),
    },
  );
  return { decision, denials };
}

const approve: CanUseTool = async () => ({ behavior: "allow" });
const refuse: CanUseTool = async () => ({ behavior: "deny", message: "user said no" });

describe("R-P1: permission modes", () => {
  // [mode, call, expected behavior without an ask caller ("ask" = denied for lack of a caller)]
  const table: ReadonlyArray<readonly [PermissionMode, CallName, "allow" | "deny" | "ask"]> = [
    ["default", "read", "allow"],
    ["default", "grep", "allow"],
    ["default", "bashReadOnly", "allow"],
    ["default", "todo", "allow"],
    ["default", "edit", "ask"],
    ["default", "write", "ask"],
    ["default", "bash", "ask"],
    ["acceptEdits", "edit", "allow"],
    ["acceptEdits", "write", "allow"],
    ["acceptEdits", "bash", "ask"],
    ["plan", "read", "allow"],
    ["plan", "bashReadOnly", "allow"],
    ["plan", "todo", "allow"],
    ["plan", "edit", "deny"],
    ["plan", "write", "deny"],
    ["plan", "bash", "deny"],
    ["bypassPermissions", "bash", "allow"],
    ["bypassPermissions", "write", "allow"],
    ["dontAsk", "read", "allow"],
    ["dontAsk", "edit", "deny"],
    ["dontAsk", "bash", "deny"],
    ["auto", "read", "allow"],
    ["auto", "bash", "ask"],
  ];

  it.each(table)("R-P1: %s mode, %s call → %s", async (mode, call, expected) => {
    const { decision, denials } = await decide(mode, call);
    if (expected === "allow") {
      expect(decision).toEqual({ behavior: "allow" });
      expect(denials).toEqual([]);
      return;
    }
    expect(decision.behavior).toBe("deny");
    expect(denials).toHaveLength(1);
    if (expected === "ask") {
      // Nobody to ask: Claude Code's words, Bash aside (R-X1; the wording has its own test below).
      expect(denials[0]?.reason).toMatch(
        call === "bash"
          ? /no one is attached to approve it\. To allow it, add "/
          : /^Claude requested permissions to write to \/project\/\S+, but you haven't granted it yet\.$/,
      );
      const approved = await decide(mode, call, { askCaller: approve });
      expect(approved.decision).toEqual({ behavior: "allow" });
    } else {
      const withCaller = await decide(mode, call, { askCaller: approve });
      expect(withCaller.decision.behavior).toBe("deny");
    }
  });

  it("R-P1: dontAsk never calls the ask caller and explains how to allow", async () => {
    let asked = 0;
    const { decision } = await decide("dontAsk", "bash", {
      askCaller: async () => {
        asked++;
        return { behavior: "allow" };
      },
    });
    expect(asked).toBe(0);
    expect(decision.behavior === "deny" && decision.message).toMatch(
      /dontAsk mode.*"Bash\(npm install:\*\)"/,
    );
  });
});

describe("R-X1: a call nobody can approve is denied in Claude Code's words", () => {
  it("R-X1: write to <absolute file> for an edit, read from <file> for a read that asks, use <tool> otherwise; Bash and dontAsk keep forkloop's (why, and the rule that would allow it)", async () => {
    const reason = async (
      toolName: string,
      input: Record<string, unknown>,
      mode: PermissionMode = "default",
    ) => {
      const checker = createPermissionChecker({
        mode,
        rules: { ...noRules, ask: ["Read(secret.txt)", "WebFetch"] },
        tools,
        cwd: CWD,
      });
      const options = { signal: new AbortController().signal, toolUseId: "t1", agentId: "main" };
      const decision = await checker(toolName, input, options);
      return decision.behavior === "deny" ? decision.message : "allowed";
    };
    const unapproved = (what: string) =>
      `Claude requested permissions to ${what}, but you haven't granted it yet.`;
    expect(await reason("Write", { file_path: "out.txt", content: "x" })).toBe(
      unapproved("write to /project/out.txt"),
    );
    expect(await reason("Edit", { file_path: "/project/a.ts", old_string: "a", new_string: "b" })).toBe(
      unapproved("write to /project/a.ts"),
    );
    expect(await reason("Read", { file_path: "/project/secret.txt" })).toBe(
      unapproved("read from /project/secret.txt"),
    );
    expect(await reason("WebFetch", { url: "https://example.com", prompt: "p" })).toBe(
      unapproved("use WebFetch"),
    );
    expect(await reason("Bash", { command: "npm install" })).toMatch(
      /needs approval in default mode.*no one is attached to approve it\. To allow it, add "Bash\(npm install:\*\)"/,
    );
    expect(await reason("Write", { file_path: "out.txt", content: "x" }, "dontAsk")).toMatch(
      /dontAsk mode denies/,
    );
  });
});

describe("R-P1: rule precedence deny > ask > allow", () => {
  it("R-P1: an allow rule approves a call that would ask", async () => {
    expect((await decide("default", "bash", { rules: { allow: ["Bash(npm install:*)"] } })).decision).toEqual(
      {
        behavior: "allow",
      },
    );
    expect((await decide("default", "edit", { rules: { allow: ["Edit(src/**)"] } })).decision.behavior).toBe(
      "allow",
    );
    expect((await decide("default", "write", { rules: { allow: ["Edit(src/**)"] } })).decision.behavior).toBe(
      "deny",
    );
  });

  it("R-P1: deny beats allow, even in bypassPermissions mode", async () => {
    const rules = { allow: ["Bash"], deny: ["Bash(npm install:*)"] };
    const { decision, denials } = await decide("bypassPermissions", "bash", { rules, askCaller: approve });
    expect(decision.behavior === "deny" && decision.message).toMatch(
      /denied by the rule deny: Bash\(npm install:\*\)/,
    );
    expect(denials).toEqual([
      {
        toolName: "Bash",
        toolUseId: "t1",
        input: { command: "npm install" },
        reason: expect.stringMatching(/deny:/),
      },
    ]);
  });

  it("R-P1: deny rules deny read-only tools too", async () => {
    const { decision } = await decide("default", "read", { rules: { deny: ["Read(src/**)"] } });
    expect(decision.behavior).toBe("deny");
  });

  it("R-P1: ask beats allow and reaches the caller, even in bypassPermissions mode", async () => {
    const rules = { allow: ["Bash"], ask: ["Bash(npm:*)"] };
    const asked: string[] = [];
    const caller: CanUseTool = async (toolName, input) => {
      asked.push(`${toolName}:${String(input.command)}`);
      return { behavior: "allow", updatedInput: { command: "npm ci" } };
    };
    const { decision } = await decide("bypassPermissions", "bash", { rules, askCaller: caller });
    expect(asked).toEqual(["Bash:npm install"]);
    expect(decision).toEqual({ behavior: "allow", updatedInput: { command: "npm ci" } });
    expect((await decide("default", "bash", { rules, askCaller: refuse })).denials[0]?.reason).toBe(
      "user said no",
    );
  });

  it("R-P1: plan mode denies mutating tools even with an allow rule", async () => {
    expect((await decide("plan", "edit", { rules: { allow: ["Edit"] } })).decision.behavior).toBe("deny");
  });

  it("R-P1: an invalid rule is a clear error at construction; unknown tools are denied", async () => {
    expect(() =>
      createPermissionChecker({ mode: "default", rules: { ...noRules, allow: ["Bash(x"] }, tools }),
    ).toThrow(/permissions\.allow: Invalid permission rule "Bash\(x"/);
    const checker = createPermissionChecker({ mode: "bypassPermissions", rules: noRules, tools });
    const decision = await checker(
      "Nope",
      {},
      { signal: new AbortController().signal, toolUseId: "t", agentId: "main" },
    );
    expect(decision.behavior).toBe("deny");
  });
});

describe("R-S2: git's and forkloop's own files are not edits acceptEdits approves", () => {
  const check = (
    mode: PermissionMode,
    toolName: string,
    input: Record<string, unknown>,
    allow: string[] = [],
  ) =>
    createPermissionChecker({ mode, rules: { ...noRules, allow }, tools, cwd: CWD })(toolName, input, {
      signal: new AbortController().signal,
      toolUseId: "t1",
      agentId: "main",
    });
  const hook = { file_path: "/project/.git/hooks/pre-commit", content: "#!/bin/sh\ntouch pwned\n" };

  it.each([
    ["Write", hook],
    ["Write", { file_path: "/project/sub/.git/config", content: "[core]\nfsmonitor = x\n" }],
    ["Edit", { file_path: "/project/.forkloop/settings.json", old_string: "[]", new_string: '["Bash"]' }],
    ["Write", { file_path: "/project/.claude/settings.local.json", content: "{}" }],
  ])("R-S2: %s %j asks in acceptEdits and under a bare rule", async (toolName, input) => {
    for (const [mode, allow] of [
      ["acceptEdits", []],
      ["default", ["Write", "Edit"]],
    ] as const) {
      const decision = await check(mode, toolName, input, [...allow]);
      expect(decision.behavior, `${mode} ${allow}`).toBe("deny");
      expect(decision.behavior === "deny" && decision.message).toMatch(/only a rule naming the path/);
    }
  });

  it("R-S2: a rule naming the path, or bypassPermissions, approves it; other files stay approved", async () => {
    expect(await check("default", "Write", hook, ["Edit(.git/hooks/**)"])).toEqual({
      behavior: "allow",
      decidedBy: { source: "config", reasonType: "rule" },
    });
    expect(await check("bypassPermissions", "Write", hook)).toEqual({
      behavior: "allow",
      decidedBy: { source: "config", reasonType: "mode" },
    });
    expect(await check("acceptEdits", "Write", { file_path: "/project/src/git.ts", content: "" })).toEqual({
      behavior: "allow",
      decidedBy: { source: "config", reasonType: "mode" },
    });
  });
});

describe("R-P1: a PreToolUse hook's allow answers the ask, nothing more", () => {
  it("R-P1 plan mode: approvedByHook does not get a write or exec past plan mode, nor past a deny rule", async () => {
    for (const call of ["edit", "write", "bash"] as const) {
      const { decision } = await decide("plan", call, { approvedByHook: true });
      expect(decision.behavior, call).toBe("deny");
      expect(decision.behavior === "deny" && decision.message).toMatch(
        /Plan mode allows only read-only tools/,
      );
    }
    const denied = await decide("bypassPermissions", "bash", {
      rules: { deny: ["Bash(npm install:*)"] },
      approvedByHook: true,
    });
    expect(denied.decision).toMatchObject({ behavior: "deny" });
  });

  it("R-P1: approvedByHook allows what would ask, without asking anyone (also in dontAsk)", async () => {
    let asked = 0;
    const askCaller: CanUseTool = async () => {
      asked++;
      return { behavior: "deny", message: "no" };
    };
    for (const mode of ["default", "dontAsk"] as const) {
      const { decision } = await decide(mode, "bash", { askCaller, approvedByHook: true });
      expect(decision.behavior, mode).toBe("allow");
    }
    expect(asked).toBe(0);
  });
});

describe("R-K2: each decision says what decided it (the Agent SDK's tool_result_meta.permission_decision)", () => {
  const rule = { source: "config", reasonType: "rule" };
  const mode = { source: "config", reasonType: "mode" };
  // A Bash command approved part by part (each read-only or allowed by its rule).
  const parts = { source: "config", reasonType: "subcommandResults" };
  it.each([
    [
      "an allow rule, before the read-only set",
      "default",
      "read",
      { rules: { allow: ["Read"] } },
      "allow",
      rule,
    ],
    ["a plain Bash rule", "default", "bashReadOnly", { rules: { allow: ["Bash"] } }, "allow", rule],
    ["a command rule", "default", "bash", { rules: { allow: ["Bash(npm install:*)"] } }, "allow", parts],
    ["a deny rule", "default", "write", { rules: { deny: ["Write"] } }, "deny", rule],
    ["the read-only set", "default", "read", {}, "allow", mode],
    ["a read-only command", "default", "bashReadOnly", {}, "allow", parts],
    ["acceptEdits", "acceptEdits", "edit", {}, "allow", mode],
    ["bypassPermissions", "bypassPermissions", "bash", {}, "allow", mode],
    ["plan mode's refusal", "plan", "write", {}, "deny", mode],
    ["a tool that needs no approval (no reason)", "default", "todo", {}, "allow", { source: "config" }],
    ["a question nobody can answer", "default", "write", {}, "deny", { source: "config", unanswered: true }],
    ["dontAsk", "dontAsk", "bash", { askCaller: approve }, "deny", { source: "config", unanswered: true }],
    ["the asker's allow", "default", "write", { askCaller: approve }, "allow", { source: "user_temporary" }],
    ["the asker's refusal", "default", "write", { askCaller: refuse }, "deny", { source: "user_reject" }],
    [
      "a hook's allow",
      "default",
      "bash",
      { approvedByHook: true },
      "allow",
      { source: "hook", reasonType: "hook" },
    ],
  ] as const)("R-K2: %s", async (_name, modeName, call, options, behavior, decidedBy) => {
    const { decision } = await decideWithProvenance(modeName, call, options);
    expect(decision.behavior).toBe(behavior);
    expect(decision.decidedBy).toEqual(decidedBy);
  });

  it("R-K2: an asker that says who decided (a PermissionRequest hook) is reported as it says", async () => {
    const byHook = { source: "hook", reasonType: "hook" } as const;
    const hookAsker: CanUseTool = async () => ({ behavior: "deny", message: "no", decidedBy: byHook });
    const { decision } = await decideWithProvenance("default", "write", { askCaller: hookAsker });
    expect(decision).toMatchObject({ behavior: "deny", message: "no", decidedBy: byHook });
  });
});
