import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { runCli, runCliInProcess } from "@forkloop/cli/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "forkloop-cli-bad-"));
  await writeFile(join(dir, "a.ts"), "export const a = 1;\n");
  await writeFile(join(dir, "bad.jsonl"), "{not json\n");
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

// Every case: exit code 2, no stack trace, and a message that names the problem and the fix.
const cases: {
  name: string;
  args: string[];
  env?: Record<string, string>;
  stdin?: string;
  setup?: { path: string; text: string };
  message: RegExp;
}[] = [
  { name: "no command", args: [], message: /Usage: forkloop <command>/ },
  {
    name: "unknown command",
    args: ["bach"],
    message: /unknown command "bach"\. Did you mean `forkloop batch`\?/,
  },
  {
    name: "unknown flag",
    args: ["run", "--max-turn", "3", "hi"],
    message: /unknown flag --max-turn\. Did you mean --max-turns\?/,
  },
  {
    name: "bad enum",
    args: ["run", "--output-format", "yaml", "hi"],
    message: /--output-format: must be text, json or stream-json/,
  },
  {
    name: "bad number",
    args: ["run", "--max-turns", "lots", "hi"],
    message: /--max-turns: must be a whole number, e.g\. --max-turns 10/,
  },
  {
    name: "bad budget",
    args: ["run", "--budget", "huge", "hi"],
    message: /--budget: "huge" is not a token budget; write it like \+500k/,
  },
  {
    name: "bad permission mode",
    args: ["run", "--permission-mode", "yolo", "hi"],
    message: /--permission-mode: must be one of default, acceptEdits/,
  },
  {
    name: "unknown tool",
    args: ["run", "--allowed-tools", "Reed", "hi"],
    message: /unknown tool "Reed" \(did you mean Read\?\)/,
  },
  { name: "empty prompt", args: ["run"], stdin: "", message: /forkloop run needs a prompt/ },
  {
    name: "unknown session",
    args: ["run", "--resume", "s-nope", "hi"],
    message: /no session "s-nope".*forkloop sessions list/s,
  },
  { name: "path-like session id", args: ["replay", "../../etc"], message: /not a valid session id/ },
  {
    name: "batch without items",
    args: ["batch", "--prompt", "x {{file}}"],
    message: /give exactly one of --files GLOB or --items FILE\.jsonl/,
  },
  {
    name: "batch wrong placeholder",
    args: ["batch", "--files", "*.ts", "--prompt", "Summarize {{item}}"],
    message: /uses \{\{item\}\} but the items come from --files; use \{\{file\}\} instead/,
  },
  {
    name: "batch glob matches nothing",
    args: ["batch", "--files", "*.rs", "--prompt", "Summarize {{file}}"],
    message: /--files "\*\.rs" matched no file/,
  },
  {
    name: "batch bad JSONL",
    args: ["batch", "--items", "bad.jsonl", "--prompt", "Do {{item}}"],
    message: /bad\.jsonl:1 is not JSON; write one JSON value per line/,
  },
  {
    name: "batch bad concurrency",
    args: ["batch", "--files", "*.ts", "--prompt", "{{file}}", "--concurrency", "0"],
    message: /--concurrency: must be between 1 and 256/,
  },
  {
    name: "batch unknown resume id",
    args: ["batch", "--resume", "b-missing"],
    message: /no batch "b-missing"/,
  },
  {
    name: "R-R7: resume with other items",
    args: ["batch", "--resume", "b-x", "--files", "*.ts"],
    message: /--resume continues batch b-x, whose items and prompt are fixed; drop --files/,
  },
  {
    name: "batch bad --sandbox",
    args: ["batch", "--files", "*.ts", "--prompt", "{{file}}", "--sandbox", "maybe"],
    message: /--sandbox: must be auto, on or off/,
  },
  {
    name: "R-S6: batch --sandbox on without bubblewrap (never silently unsandboxed)",
    args: ["batch", "--files", "*.ts", "--prompt", "{{file}}", "--sandbox", "on"],
    env: { PATH: "/nonexistent" },
    message: /sandbox "on" \(--sandbox on\): bwrap is not on PATH.*Fix: install bubblewrap/,
  },
  {
    name: "R-S6: run --sandbox on without bubblewrap",
    args: ["run", "hi", "--sandbox", "on"],
    env: { PATH: "/nonexistent" },
    message: /sandbox "on" \(--sandbox on\): bwrap is not on PATH.*Fix: install bubblewrap/,
  },
  {
    name: "bad permission rule",
    args: ["run", "--allowed-tools", "Bash(", "hi"],
    message: /--allowed-tools: rule "Bash\(":/,
  },
  {
    name: "bad settings file",
    args: ["run", "hi"],
    setup: { path: ".forkloop/settings.json", text: '{"permissions":{"defaultMode":"yolo"}}' },
    message: /bad settings: .*\.forkloop\/settings\.json.*permissions\.defaultMode/s,
  },
  {
    name: "bad simulator env",
    args: ["run", "hi"],
    env: { FORKLOOP_SIM_LATENCY: "slowish" },
    message: /environment variable FORKLOOP_SIM_LATENCY: must be none or realistic\. Fix or unset it\./,
  },
  {
    name: "base URL without key",
    args: ["run", "hi"],
    env: { ANTHROPIC_BASE_URL: "http://127.0.0.1:1" },
    message: /ANTHROPIC_BASE_URL is set but neither ANTHROPIC_API_KEY nor ANTHROPIC_AUTH_TOKEN is/,
  },
];

describe("bad input: exit 2 and a message naming the problem and the fix", () => {
  it.each(cases)("$name", async ({ args, env, stdin, setup, message }) => {
    const cwd = setup ? await mkdtemp(join(dir, "case-")) : dir;
    if (setup) {
      await mkdir(dirname(join(cwd, setup.path)), { recursive: true });
      await writeFile(join(cwd, setup.path), setup.text);
    }
    const result = await runCliInProcess(args, {
      cwd,
      ...(env ? { env } : {}),
      ...(stdin === undefined ? {} : { stdin }),
    });
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr).toMatch(message);
    expect(result.stderr).not.toMatch(/\n\s+at .+:\d+:\d+/); // no stack trace
  });

  it("--help exits 0 and lists every flag", async () => {
    for (const command of ["run", "batch", "sim", "sessions", "replay"]) {
      const result = await runCliInProcess([command, "--help"], { cwd: dir });
      expect(result.code).toBe(0);
      expect(result.stdout).toMatch(/^Usage: forkloop/);
    }
  });

  it("the built binary exits with the code the command line returns (2), the message on its stderr", async () => {
    // The cases above run the command line in-process; this one is about the process itself.
    const result = await runCli(["bach"], { cwd: dir });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/unknown command "bach"\. Did you mean `forkloop batch`\?/);
  });
});
