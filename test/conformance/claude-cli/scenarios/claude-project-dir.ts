import { testServerConfig } from "@forkloop/mcp/testing";
import { agentCall, byTurn, text, toolCall } from "../../support/script.js";
import { CLAUDE_CODE_HOOK_EVENTS, type CliScenario, hookLogSettings } from "../scenario.js";

const TASK = "Review notes.txt for tone.";

// A project directory as a Claude Code user keeps it: project settings with a hook for every
// event Claude Code knows (and its .mcp.json servers enabled), a custom command, a custom agent, a
// skill, CLAUDE.md with an @import, and .mcp.json. forkloop honours a project's hooks and servers
// only once it is trusted (R-S5), so its side adds --trust-project, as a user switching over would.
export default {
  what: "a project directory written for Claude Code (settings with every hook event, a command, an agent, a skill, CLAUDE.md with an @import, .mcp.json) under --trust-project: the same hooks fire with the same inputs and the requests carry the same content",
  args: ["-p", "/review notes.txt", "--output-format", "json"],
  forkloopArgs: ["--trust-project"],
  files: {
    "notes.txt": "hello there\n",
    ".claude/settings.json": hookLogSettings(CLAUDE_CODE_HOOK_EVENTS, { enableAllProjectMcpServers: true }),
    ".claude/commands/review.md":
      "---\ndescription: Review a file\n---\nHave the reviewer agent review $ARGUMENTS and report its verdict.\n",
    ".claude/agents/reviewer.md":
      "---\nname: reviewer\ndescription: Reviews text for tone\ntools: Read\n---\nYou are a tone reviewer. Be brief.\n",
    ".claude/skills/greet/SKILL.md":
      "---\nname: greet\ndescription: Greets the user\n---\nSay hello warmly.\n",
    "CLAUDE.md": "# Project\nSee @docs/codename.md for the codename.\n",
    "docs/codename.md": "The codename is SILVER-FOX-5.\n",
    ".mcp.json": JSON.stringify({ mcpServers: { probe: testServerConfig() } }),
  },
  requestTexts: ["The codename is SILVER-FOX-5.", "Have the reviewer agent review notes.txt"],
  systemTexts: ["You are a tone reviewer. Be brief."],
  script: {
    tasks: [TASK],
    main: (request) =>
      byTurn(request, [
        toolCall("Read", { file_path: `${request.work}/notes.txt` }),
        agentCall({ description: "Review tone", prompt: TASK, subagent_type: "reviewer" }),
        text("The reviewer finds the tone friendly."),
      ]),
    subAgent: (request) =>
      byTurn(request, [toolCall("Read", { file_path: `${request.work}/notes.txt` }), text("Friendly.")]),
  },
} satisfies CliScenario;
