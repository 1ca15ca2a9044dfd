import { fstatSync } from "node:fs";
import { createInterface } from "node:readline";
import type { SDKUserMessage } from "@forkloop/sdk";
import { z } from "zod";
import { CliError } from "./cli-error.js";
import type { CommandContext } from "./command-context.js";

type Stdin = CommandContext["stdin"];

/**
 * The prompt as `claude -p` takes it: the arguments, with piped stdin appended
 * (`cat log | forkloop run "explain"`), or stdin alone when there are no arguments. "Piped" is a
 * shell pipe or a file redirect: a program that spawns forkloop with an open, silent stdin
 * socket and a prompt argument must not hang waiting for an end of file that never comes.
 */
export async function textPrompt(positionals: readonly string[], stdin: Stdin): Promise<string> {
  const argument = positionals.join(" ");
  const piped = stdin.isTTY !== true && (argument.trim() === "" || isPipeOrFile(stdin));
  const input = piped ? await readAll(stdin) : "";
  const prompt = argument.trim() === "" ? input : input.trim() === "" ? argument : `${argument}\n\n${input}`;
  if (prompt.trim() === "") {
    throw new CliError(
      `forkloop run needs a prompt: \`forkloop run "Summarize README.md"\` or pipe it on stdin.`,
    );
  }
  return prompt;
}

function isPipeOrFile(stdin: Stdin): boolean {
  const fd = (stdin as { fd?: unknown }).fd;
  if (typeof fd !== "number") return false;
  try {
    const info = fstatSync(fd);
    return info.isFIFO() || info.isFile();
  } catch {
    return false;
  }
}

async function readAll(stdin: Stdin): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stdin) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk)));
  return Buffer.concat(chunks).toString("utf8");
}

/** One line of `--input-format stream-json`: Claude Code's user message shape. */
const inputLineSchema = z.object({
  type: z.literal("user"),
  message: z.object({
    role: z.literal("user"),
    content: z.union([z.string().min(1), z.array(z.looseObject({ type: z.string() })).min(1)]),
  }),
  parent_tool_use_id: z.string().nullable().optional(),
  session_id: z.string().optional(),
  uuid: z.string().optional(),
});

const INPUT_EXAMPLE = `{"type":"user","message":{"role":"user","content":"Summarize README.md"}}`;

/**
 * `--input-format stream-json`: each stdin line is a user message, each one turn. A line that is
 * not one stops the input (the turns so far finish and stay saved); `problem()` then names the
 * line and the expected shape, and the command exits 2.
 */
export function streamJsonPrompt(stdin: Stdin): {
  readonly messages: AsyncIterable<SDKUserMessage>;
  readonly problem: () => string | undefined;
} {
  let problem: string | undefined;
  async function* messages(): AsyncGenerator<SDKUserMessage> {
    let number = 0;
    for await (const text of createInterface({ input: stdin, crlfDelay: Number.POSITIVE_INFINITY })) {
      number++;
      if (text.trim() === "") continue;
      let parsed: z.ZodSafeParseResult<z.infer<typeof inputLineSchema>>;
      try {
        parsed = inputLineSchema.safeParse(JSON.parse(text));
      } catch {
        problem = `--input-format stream-json: stdin line ${number} is not JSON; each line must be one user message, e.g. ${INPUT_EXAMPLE}`;
        return;
      }
      if (!parsed.success) {
        const issue = parsed.error.issues[0];
        problem = `--input-format stream-json: stdin line ${number}: ${issue?.path.join(".") || "the line"}: ${issue?.message}; each line must be one user message, e.g. ${INPUT_EXAMPLE}`;
        return;
      }
      yield {
        type: "user",
        message: parsed.data.message as SDKUserMessage["message"],
        parent_tool_use_id: null,
        // The host's own id, so what --replay-user-messages prints back names the message it sent.
        ...(parsed.data.uuid === undefined ? {} : { uuid: parsed.data.uuid }),
      };
    }
  }
  return { messages: messages(), problem: () => problem };
}
