import { execFileSync } from "node:child_process";
import { runCliInProcess } from "@forkloop/cli/testing";
import type { Difference } from "../support/differences.js";

/** A flag of `claude --help`: its spellings and whether it takes a value. */
export interface ClaudeFlag {
  /** The long spelling `claude --help` lists last (`--allowed-tools` of `--allowedTools, --allowed-tools`). */
  name: string;
  spellings: readonly string[];
  value: "none" | "required" | "optional";
}

/**
 * Print-mode flags Claude Code accepts without listing them in `--help` (the issue and scripts
 * name them). `hiddenFlagAccepted` proves each against the real binary.
 */
export const HIDDEN_PRINT_FLAGS: readonly ClaudeFlag[] = [
  { name: "--max-turns", spellings: ["--max-turns"], value: "required" },
  { name: "--permission-prompt-tool", spellings: ["--permission-prompt-tool"], value: "required" },
  { name: "--system-prompt-file", spellings: ["--system-prompt-file"], value: "required" },
  { name: "--append-system-prompt-file", spellings: ["--append-system-prompt-file"], value: "required" },
];

/** A value each flag accepts, for flags whose value forkloop checks; others get `x`. */
const SAMPLE_VALUES: Readonly<Record<string, string>> = {
  "--add-dir": ".",
  "--agent": "reviewer",
  "--agents": '{"reviewer":{"description":"Reviews code","prompt":"You review code."}}',
  "--allowed-tools": "Read",
  "--disallowed-tools": "Bash",
  "--autocompact": "auto",
  "--effort": "high",
  "--fallback-model": "claude-haiku-4-5",
  "--input-format": "text",
  "--json-schema": '{"type":"object","properties":{"name":{"type":"string"}}}',
  "--max-budget-usd": "1",
  "--max-turns": "3",
  "--mcp-config": '{"mcpServers":{}}',
  "--model": "sonnet",
  "--output-format": "json",
  "--permission-mode": "acceptEdits",
  "--permission-prompts": "none",
  "--resume": "00000000-0000-4000-8000-000000000001",
  "--session-id": "00000000-0000-4000-8000-000000000001",
  "--setting-sources": "user,project",
  "--settings": "{}",
  "--system-prompt": "You are terse.",
  "--system-prompt-file": "prompt.txt",
  "--append-system-prompt": "Be terse.",
  "--append-system-prompt-file": "prompt.txt",
  "--system-prompt-snapshot": "on",
  "--tools": "Read,Edit",
  "--betas": "context-1m-2025-08-07",
  "--prompt-suggestions": "false",
};

/** Flags that only mean something with others (each side refuses them alone): what they are checked with. */
const FLAG_CONTEXT: Readonly<Record<string, readonly string[]>> = {
  "--include-partial-messages": ["--output-format", "stream-json", "--verbose"],
  "--include-hook-events": ["--output-format", "stream-json", "--verbose"],
  "--forward-subagent-text": ["--output-format", "stream-json", "--verbose"],
  "--replay-user-messages": ["--input-format", "stream-json", "--output-format", "stream-json", "--verbose"],
  "--fork-session": ["--continue"],
};

/** The flags of `claude --help`'s Options section. */
export function claudeHelpFlags(binary: string, env: Record<string, string>): ClaudeFlag[] {
  const help = execFileSync(binary, ["--help"], { env, encoding: "utf8" });
  const options = help.slice(help.indexOf("Options:"), help.indexOf("Commands:"));
  const flags: ClaudeFlag[] = [];
  for (const line of options.split("\n")) {
    const match = /^ {2}((?:-{1,2}[\w-]+(?:, )?)+)(?: (<[^>]+>|\[[^\]]+\]))?/.exec(line);
    if (!match) continue;
    const spellings = (match[1] ?? "").split(", ").map((s) => s.trim());
    const name = spellings.filter((s) => s.startsWith("--")).at(-1) ?? spellings[0] ?? "";
    const value = match[2] === undefined ? "none" : match[2].startsWith("<") ? "required" : "optional";
    flags.push({ name, spellings, value });
  }
  return flags;
}

/**
 * That the real Claude Code accepts a flag its help does not list: it then reports the unknown
 * probe flag after it (commander stops at the first unknown option).
 */
export function hiddenFlagAccepted(binary: string, env: Record<string, string>, flag: ClaudeFlag): boolean {
  const value = flag.value === "none" ? [] : [SAMPLE_VALUES[flag.name] ?? "x"];
  const args = ["-p", flag.name, ...value, "--conformance-probe-flag", "hi"];
  try {
    execFileSync(binary, args, { env, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
    return false;
  } catch (error) {
    const stderr = String((error as { stderr?: string }).stderr ?? "");
    return stderr.includes("--conformance-probe-flag") && !stderr.includes(`'${flag.name}'`);
  }
}

/**
 * A flag forkloop did not take: refused as R-X3 asks (exit 2, bad input, the message naming the
 * flag — its reason follows), unknown, or failed some other way (another exit code, a message
 * that does not name it), which no allowlist entry should cover.
 */
function flagVerdict(flag: ClaudeFlag, code: number | null, message: string): string {
  if (/unknown flag/.test(message)) return "flag.unknown";
  const named = flag.spellings.some((spelling) => message.includes(spelling));
  return code === 2 && named ? "flag.refused" : "flag.failed";
}

/**
 * How `forkloop -p <flag> [value] --help` takes each Claude Code flag: parsed (exit 0 — the
 * help is printed after the flags are read), refused with a reason (exit 2 naming the flag: `flag.refused`),
 * unknown (`flag.unknown`, never right for a Claude Code flag) or failed otherwise (`flag.failed`).
 */
export async function flagDifferences(flags: readonly ClaudeFlag[], cwd: string): Promise<Difference[]> {
  const out: Difference[] = [];
  for (const flag of flags) {
    const sample = SAMPLE_VALUES[flag.name];
    const value =
      flag.value === "required" ? [sample ?? "x"] : flag.value === "optional" && sample ? [sample] : [];
    const args = ["-p", ...(FLAG_CONTEXT[flag.name] ?? []), flag.name, ...value, "--help"];
    const result = await runCliInProcess(args, { cwd });
    if (result.code === 0) continue;
    const message = result.stderr.split("\n")[0] ?? "";
    out.push({
      code: `${flagVerdict(flag, result.code, message)} ${flag.name}`,
      detail: `exit ${result.code}: ${message}`,
    });
  }
  return out;
}
