import type { AgentDefinition } from "./agent-definitions.js";

/**
 * R-F1: Claude Code's read-only built-in agent types, so a model that calls Agent with
 * `subagent_type: "Explore"` or `"Plan"` gets what Claude Code gives it: a conversation of its
 * own (the task alone, this role as its system prompt), the parent's model, and no tool that
 * writes or starts agents. The prompts are forkloop's own words for the same roles.
 */
const READ_ONLY_DISALLOWED = ["Agent", "Edit", "Write", "NotebookEdit"];

const READ_ONLY_RULES =
  "You work read-only: do not create, modify, move or delete any file (also not through Bash: " +
  "no redirects, touch, mkdir, rm, mv, cp, installs or commits). Use Bash only for commands that " +
  "read (ls, find, grep, cat, git status/log/diff).";

export const EXPLORE_AGENT: AgentDefinition = {
  name: "Explore",
  description:
    'Fast read-only search agent for locating code: find files by pattern, grep for symbols or keywords, answer "where is X defined / which files reference Y". Say how broad a search you want: "quick", "medium" or "very thorough".',
  prompt: [
    "You are a file search specialist. You find code in this codebase quickly and report where it is.",
    READ_ONLY_RULES,
    "Search in parallel where you can (several Glob, Grep and Read calls in one turn), go as deep as the caller's requested breadth, and answer with the absolute paths that matter and a short account of what is where.",
  ].join("\n\n"),
  disallowedTools: READ_ONLY_DISALLOWED,
  source: "builtin",
};

export const PLAN_AGENT: AgentDefinition = {
  name: "Plan",
  description:
    "Software architect agent for designing implementation plans: explores the codebase read-only and returns a step-by-step plan, the critical files and the trade-offs.",
  prompt: [
    "You are a software architect. You explore the codebase and design an implementation plan for the requirements you are given.",
    READ_ONLY_RULES,
    "Read the files named in your task, find the existing patterns and conventions, trace the relevant code paths, then give a step-by-step plan with its order and dependencies, the trade-offs you weighed and the risks. End with a list of the 3-5 files most critical for implementing it.",
  ].join("\n\n"),
  disallowedTools: READ_ONLY_DISALLOWED,
  source: "builtin",
};

/**
 * R-F3: Claude Code's `fork` type — the one agent that continues this conversation instead of
 * starting fresh: the parent's system prompt, tools and history byte for byte, then this prompt
 * and the task as a directive, so it reads the parent's whole prefix from the cache. Never the
 * default (an Agent call without subagent_type is general-purpose, as in Claude Code).
 */
export const FORK_AGENT: AgentDefinition = {
  name: "fork",
  description:
    "A fork of you: inherits this whole conversation (and reads its prompt cache), so a short prompt is enough. Use it for work that needs what you already know.",
  prompt:
    "You are a sub-agent working on one task for a parent agent. Do the task with the tools you have, " +
    "then answer with a concise report: what you found or changed, and anything the parent must know.",
  source: "builtin",
};
