import { readFileSync } from "node:fs";
import { z } from "zod";
import type { ProgramDifference } from "./differences.js";

/**
 * The allowlist: every difference a conformance harness may find, each entry with its reason.
 * `deliberate` entries are differences forkloop keeps on purpose; `notYetFixed` entries are
 * differences the harness found that are still to be closed, each naming the issue item it
 * belongs to — fixing one removes its entry. A difference no entry names fails the harness, and
 * so does an entry no difference needs any more (a fix must remove it).
 */
const entrySchema = z.strictObject({
  /** A difference code; `*` matches any run of characters, `{a,b}` either alternative (each may hold `*`). */
  match: z.string().min(1),
  /** Only these programs (or scenarios); default: all. */
  programs: z.array(z.string().min(1)).min(1).optional(),
  reason: z.string().min(10),
  /**
   * The difference depends on the peer's timing (e.g. Claude Code sends some messages on a
   * timer), so a run may not show it: such an entry is never judged stale. Use it only where a
   * run on an idle machine and one under load were seen to differ.
   */
  timing: z.literal(true).optional(),
});
/** What a difference not fixed yet belongs to (an issue item or a requirement), e.g. "R-K2: hook denials". */
const notYetFixedSchema = entrySchema.extend({ issue: z.string().min(3) });

export const allowlistSchema = z.strictObject({
  deliberate: z.array(entrySchema),
  notYetFixed: z.array(notYetFixedSchema),
});

export type Allowlist = z.infer<typeof allowlistSchema>;
export type AllowlistEntry = Allowlist["deliberate"][number] & { issue?: string };

export function loadAllowlist(path: string): Allowlist {
  const parsed = allowlistSchema.safeParse(JSON.parse(readFileSync(path, "utf8")));
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new Error(`${path}: ${issue?.path.join(".")}: ${issue?.message}`);
  }
  return parsed.data;
}

function globRegex(pattern: string): RegExp {
  return new RegExp(`^${globSource(pattern)}$`, "s");
}

/** `*` any run of characters; `{a,b*}` either alternative, each a glob of its own. */
function globSource(pattern: string): string {
  return pattern
    .split(/(\*|\{[^{}]*\})/)
    .map((part) =>
      part === "*"
        ? ".*"
        : part.startsWith("{") && part.endsWith("}")
          ? `(?:${part.slice(1, -1).split(",").map(globSource).join("|")})`
          : escapeRegex(part),
    )
    .join("");
}

function escapeRegex(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

export function entries(allowlist: Allowlist): AllowlistEntry[] {
  return [...allowlist.deliberate, ...allowlist.notYetFixed];
}

/** The entry that names a difference, if any. */
export function entryFor(allowlist: Allowlist, difference: ProgramDifference): AllowlistEntry | undefined {
  return entries(allowlist).find(
    (entry) =>
      (entry.programs === undefined || entry.programs.includes(difference.program)) &&
      globRegex(entry.match).test(difference.code),
  );
}

/** Splits differences into those the allowlist names and those it does not. */
export function judge(
  allowlist: Allowlist,
  differences: readonly ProgramDifference[],
): { unexplained: ProgramDifference[]; used: Set<AllowlistEntry> } {
  const used = new Set<AllowlistEntry>();
  const unexplained: ProgramDifference[] = [];
  for (const difference of differences) {
    const entry = entryFor(allowlist, difference);
    if (entry) used.add(entry);
    else unexplained.push(difference);
  }
  return { unexplained, used };
}

/** Entries no difference needed (after the whole corpus ran): each must be removed. */
export function staleEntries(allowlist: Allowlist, used: ReadonlySet<AllowlistEntry>): AllowlistEntry[] {
  return entries(allowlist).filter((entry) => entry.timing !== true && !used.has(entry));
}

/** A report of unexplained differences, grouped by program, for a failing test. */
export function describeDifferences(differences: readonly ProgramDifference[]): string {
  return differences
    .map((d) => `${d.program}: ${d.code}\n    ${d.detail.replace(/\n/g, "\n    ")}`)
    .join("\n");
}

/**
 * The allowlist as a README section: each entry's reason with what it covers, deliberate
 * differences first, then those not fixed yet with their issue item.
 */
export function allowlistMarkdown(allowlist: Allowlist, source: string): string {
  const line = (entry: AllowlistEntry) => {
    const programs = entry.programs ? ` — in ${entry.programs.map((p) => `\`${p}\``).join(", ")}` : "";
    const issue = entry.issue ? ` (${entry.issue})` : "";
    const timing = entry.timing ? " (timing-dependent)" : "";
    return `- ${entry.reason}${issue}${timing} \`${entry.match}\`${programs}`;
  };
  return [
    `Generated from \`${source}\` (the conformance harness's allowlist; a test keeps this in step).`,
    "",
    `**Deliberate** (${allowlist.deliberate.length}):`,
    "",
    ...allowlist.deliberate.map(line),
    "",
    `**Not yet fixed** (${allowlist.notYetFixed.length}):`,
    "",
    ...(allowlist.notYetFixed.length ? allowlist.notYetFixed.map(line) : ["- none"]),
  ].join("\n");
}
