import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { CaseGroup, CorpusCase, Through } from "./corpus.js";
import { runCliAgainst, type Seen } from "./drive.js";
import { freshDir, initRepo } from "./places.js";

/**
 * R-S14: text from files, tools and the model reaches the terminal through
 * forkloop's own views — `sessions list|show`, `replay`, `run --verbose`, the batch progress
 * lines, `batch list|status`, the paths they print — only with its control characters escaped.
 * Each source carries a different control sequence next to its own marker; a case got through when
 * a view's output holds that raw sequence. (The model's answer printed by `run` in text mode may
 * stay as it is; it is not a case.)
 */

/**
 * Each source's raw sequence ends in its marker (`TERMX_…`): an ESC sequence (OSC title, CSI,
 * OSC 52 clipboard, OSC 8 link), then a C1 CSI and a bidi override — which JSON keeps raw where it
 * escapes ESC — or backspaces. A case got through when a raw control character stands right
 * before the marker in a view's output.
 */
const PAYLOAD = {
  prompt: "\u001b]0;t\u0007\u009b1m\u202eTERMX_PROMPT",
  model: "\u001b[2J\u001b]52;c;VEVSTVg=\u0007\u009b2J\u202eTERMX_MODEL",
  toolInput: "\u001b[8m\u009b31m\u202eTERMX_INPUT",
  toolOutput: "\u001b[31m\u009b31m\u202eTERMX_OUTPUT",
  fileName: "\u001b]8;;x\u0007\u009b4m\u202eTERMX_FILE",
  error: "\b\b\b\b\u009b1m\u202eTERMX_ERROR",
  cwd: "\u001b[1m\u009b1m\u202eTERMX_CWD",
  batchPrompt: "\u001b]0;t\u0007\u009b7m\u202eTERMX_BPROMPT",
  itemId: "\u001b]0;t\u0007\u009b7m\u202eTERMX_ITEMID",
  itemsFile: "\u001b]0;t\u0007\u009b7m\u202eTERMX_ITEMSFILE",
} as const;

type Source = keyof typeof PAYLOAD;

/** What each view is asked to show, and the sources it shows. */
const VIEWS = {
  "sessions-list": ["prompt"],
  "sessions-show": ["prompt", "model", "toolInput", "toolOutput", "fileName", "error", "cwd"],
  replay: ["prompt", "model", "toolInput", "toolOutput", "fileName", "error", "cwd"],
  "run-verbose": ["toolInput"],
} as const satisfies Record<string, readonly Source[]>;

const BATCH_VIEWS = {
  "batch-progress": ["fileName", "itemId"],
  "batch-list": ["itemsFile"],
  "batch-status": ["batchPrompt", "itemsFile"],
} as const satisfies Record<string, readonly Source[]>;

const caseId = (view: string, source: Source) =>
  `term-${view}-${source.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;

const CASES: CorpusCase[] = [...Object.entries(VIEWS), ...Object.entries(BATCH_VIEWS)].flatMap(
  ([view, sources]) =>
    (sources as readonly Source[]).map((source) => ({
      id: caseId(view, source),
      area: "trust-patterns" as const,
      what: `${view}: raw control characters from the ${source}`,
    })),
);

/** C0 controls but newline and tab, DEL, C1, and the bidi embeddings, overrides and isolates. */
function isRawControl(text: string): boolean {
  const code = text.codePointAt(0) ?? 0x20;
  return (
    (code < 0x20 && code !== 0x0a && code !== 0x09) ||
    (code >= 0x7f && code <= 0x9f) ||
    (code >= 0x202a && code <= 0x202e) ||
    (code >= 0x2066 && code <= 0x2069)
  );
}

function judge(view: string, sources: readonly Source[], seen: Pick<Seen, "stdout" | "stderr">): Through[] {
  const text = `${seen.stdout}\n${seen.stderr}`;
  return sources
    .filter((source) => {
      const marker = PAYLOAD[source].slice(PAYLOAD[source].indexOf("TERMX_"));
      return text
        .split(marker)
        .slice(0, -1)
        .some((before) => isRawControl(before.slice(-1)));
    })
    .map((source) => ({
      id: caseId(view, source),
      effect: `raw control characters reached ${view}'s output`,
    }));
}

/** A project whose directory name, files, prompt, model text and tool output carry the payloads. */
function plant(dir: string) {
  const root = initRepo(join(freshDir(dir), `project${PAYLOAD.cwd}`));
  writeFileSync(join(root, `note${PAYLOAD.fileName}.txt`), "x\n");
  writeFileSync(join(root, "plain.txt"), "x\n");
  return { root, cwd: root, home: freshDir(dir, "home") };
}

const sessionScenario = {
  rules: [
    {
      match: { turn: 0 },
      reply: {
        content: [
          {
            type: "tool_use" as const,
            id: "toolu_term_bash",
            name: "Bash",
            input: {
              command: `echo '${PAYLOAD.toolInput}' >/dev/null; printf '\\033[31m\\302\\23331m\\342\\200\\256TERMX_OUTPUT\\n'`,
            },
          },
          { type: "tool_use" as const, id: "toolu_term_glob", name: "Glob", input: { pattern: "*.txt" } },
          {
            type: "tool_use" as const,
            id: "toolu_term_read",
            name: "Read",
            input: { file_path: `missing-${PAYLOAD.error}.txt` },
          },
        ],
      },
    },
  ],
  fallback: { content: [{ type: "text" as const, text: PAYLOAD.model }] },
};

/** The views' output, escaped as forkloop shows it or (`escaped` false, the control) raw. */
type Views = (dir: string, escaped: boolean) => Promise<Through[]>;

const sessionViews: Views = async (dir, escaped) => {
  const world = plant(dir);
  const where = {
    ...world,
    scenario: sessionScenario,
    ...(escaped ? {} : { terminalViews: false as const }),
  };
  const through: Through[] = [];
  const produced = await runCliAgainst(
    ["run", `Look ${PAYLOAD.prompt} around`, "--verbose", "--permission-mode", "bypassPermissions"],
    where,
  );
  through.push(...judge("run-verbose", VIEWS["run-verbose"], produced));
  const listed = await runCliAgainst(["sessions", "list", "--json"], where);
  const id = (JSON.parse(listed.stdout.split("\n")[0] ?? "{}") as { sessionId?: string }).sessionId;
  if (id === undefined)
    return [{ id: "harness", effect: `no session to show: ${produced.stderr.slice(-400)}` }];
  for (const [view, args] of [
    ["sessions-list", ["sessions", "list"]],
    ["sessions-show", ["sessions", "show", id]],
    ["replay", ["replay", id]],
  ] as const) {
    through.push(...judge(view, VIEWS[view], await runCliAgainst(args, where)));
  }
  return through;
};

const batchViews: Views = async (dir, escaped) => {
  const world = plant(dir);
  const scenario = { rules: [{ match: {}, reply: { content: [{ type: "text" as const, text: "ok" }] } }] };
  const where = { ...world, scenario, ...(escaped ? {} : { terminalViews: false as const }) };
  const through: Through[] = [];
  const files = await runCliAgainst(
    ["batch", "--files", "*.txt", "--prompt", `Review {{file}} ${PAYLOAD.batchPrompt}`, "--id", "files"],
    where,
  );
  const itemsFile = join(dir, `items${PAYLOAD.itemsFile}.jsonl`);
  writeFileSync(itemsFile, `${JSON.stringify({ id: PAYLOAD.itemId, n: 1 })}\n`);
  const items = await runCliAgainst(
    ["batch", "--items", itemsFile, "--prompt", "Do {{item.n}}", "--id", "items"],
    where,
  );
  through.push(
    ...judge("batch-progress", BATCH_VIEWS["batch-progress"], {
      stdout: files.stdout + items.stdout,
      stderr: files.stderr + items.stderr,
    }),
  );
  through.push(
    ...judge("batch-list", BATCH_VIEWS["batch-list"], await runCliAgainst(["batch", "list"], where)),
  );
  const status = [
    await runCliAgainst(["batch", "status", "files"], where),
    await runCliAgainst(["batch", "status", "items"], where),
  ];
  through.push(
    ...judge("batch-status", BATCH_VIEWS["batch-status"], {
      stdout: status.map((seen) => seen.stdout).join("\n"),
      stderr: status.map((seen) => seen.stderr).join("\n"),
    }),
  );
  if (files.code !== 0 || items.code !== 0)
    through.push({
      id: "harness",
      effect: `a batch failed: ${files.stderr.slice(-300)} ${items.stderr.slice(-300)}`,
    });
  return through;
};

export const groups: readonly CaseGroup[] = [
  {
    title: "R-S14: forkloop's own views escape control characters from files, tools and the model",
    cases: CASES,
    surfaces: [
      {
        label: "forkloop run --verbose, then sessions list / show and replay of its session",
        run: (dir) => sessionViews(dir, true),
      },
      {
        label: "forkloop batch (progress lines), batch list and batch status",
        run: (dir) => batchViews(dir, true),
      },
    ],
    control: {
      label:
        "the same views with forkloop's escaping off (the in-process runner's seam) show the raw sequences",
      expect: CASES.map((entry) => entry.id),
      run: async (dir) =>
        (await Promise.all([sessionViews(join(dir, "s"), false), batchViews(join(dir, "b"), false)])).flat(),
    },
  },
];
