import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { loadTranscript, TranscriptWriter } from "@forkloop/orchestrator";
import { afterEach, describe, expect, it } from "vitest";

const here = fileURLToPath(new URL(".", import.meta.url));
// The child runs plain Node, so it loads the built transcript writer (`npx turbo run build`).
const writerModule = pathToFileURL(resolve(here, "../packages/orchestrator/dist/transcript.js")).href;

/** A child that appends ~200 KB messages forever; it reports each record after writing it. */
const CHILD = `
import { TranscriptWriter } from ${JSON.stringify(writerModule)};
const writer = new TranscriptWriter(process.argv[1]);
const filler = "x".repeat(200_000);
for (let index = 0; ; index++) {
  writer.append({ type: "message", message: {
    type: "user", uuid: "m" + index, parentUuid: index === 0 ? null : "m" + (index - 1),
    timestamp: new Date().toISOString(), message: { role: "user", content: index + ":" + filler } } });
  process.stdout.write(index + "\\n");
}
`;

let dir: string | undefined;
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

describe("transcripts survive a kill", () => {
  it("transcript resume after kill -9 mid-write: every complete record loads, a torn tail is dropped, appends continue", async () => {
    dir = mkdtempSync(join(tmpdir(), "forkloop-kill-"));
    const path = join(dir, "session.fltr");
    const child = spawn(process.execPath, ["--input-type=module", "-e", CHILD, path], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    let reported = -1;
    await new Promise<void>((resolveKilled) => {
      child.stdout.on("data", (chunk: Buffer) => {
        const lines = chunk.toString().trim().split("\n");
        reported = Number(lines.at(-1));
        // Kill while it is busy writing (it never stops): the last record may be torn.
        if (reported >= 40 && !child.killed) child.kill("SIGKILL");
      });
      child.on("exit", () => resolveKilled());
    });
    expect(child.signalCode).toBe("SIGKILL");

    const loaded = await loadTranscript(path);
    // Everything the child reported as written is there, intact and in order.
    expect(loaded.messages.length).toBeGreaterThanOrEqual(reported + 1);
    loaded.messages.forEach((message, index) => {
      expect(message.uuid).toBe(`m${index}`);
      expect(message.parentUuid).toBe(index === 0 ? null : `m${index - 1}`);
      const content = message.type === "user" ? message.message.content : "";
      expect(typeof content === "string" && content.startsWith(`${index}:`) && content.length > 200_000).toBe(
        true,
      );
    });

    // Resume: the writer cuts any torn tail, and the next record lands right after the last good one.
    const writer = new TranscriptWriter(path);
    const count = loaded.messages.length;
    writer.append({
      type: "message",
      message: {
        type: "user",
        uuid: "resumed",
        parentUuid: `m${count - 1}`,
        timestamp: new Date().toISOString(),
        message: { role: "user", content: "after the crash" },
      },
    });
    writer.close();
    const resumed = await loadTranscript(path);
    expect(resumed.torn).toBe(false);
    expect(resumed.messages).toHaveLength(count + 1);
    expect(resumed.messages.at(-1)?.uuid).toBe("resumed");
  });
});
