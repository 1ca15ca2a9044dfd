import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { type SimHandle, startSimInProcess } from "@forkloop/cli/testing";

/**
 * R-B4's conflict made on purpose: the simulator answers item 1 with a Bash call appending "one"
 * to shared.txt and item 2 with one appending "two" (the prompt names "(item N)"), then "appended".
 * Two isolated items made from one base append at the same spot: the second applied is a conflict.
 */
export async function startAppendSim(root: string): Promise<SimHandle> {
  const append = (n: string, word: string) => ({
    match: { lastUserText: `(item ${n})` },
    reply: {
      content: [{ type: "tool_use", name: "Bash", input: { command: `echo ${word} >> shared.txt` } }],
    },
  });
  await writeFile(
    join(root, "scenario.json"),
    JSON.stringify({
      rules: [
        { match: { turn: { min: 1 } }, reply: { content: [{ type: "text", text: "appended" }] } },
        append("1", "one"),
        append("2", "two"),
      ],
    }),
  );
  return startSimInProcess(root, ["--scenario", "scenario.json"]);
}
