import { startToolThread } from "../tool-thread.js";
import type { PdfForRead } from "./pdf-pages.js";

/**
 * How long one PDF may take to parse. An ordinary document of the 64 MiB Read takes parses in a
 * few seconds; a file whose compressed object streams inflate to gigabytes (a few hundred KiB
 * of PDF each) would keep pdf-lib busy for minutes and fill the memory.
 */
const PDF_PARSE_DEADLINE_MS = 30_000;

type ThreadMessage = "ready" | { readonly result: PdfForRead } | { readonly failure: string };

/**
 * `pdfForRead` on a thread of its own, with a deadline (R-T7, R-S12): pdf-lib inflates a
 * compressed object stream whole, synchronously, so on the caller's thread a hostile PDF in the
 * project would block everything there — the signal handlers, the other sub-agents' messages,
 * the abort — for as long as it likes. Here the caller only waits; past the deadline or on the
 * signal the thread is terminated and the Read says why.
 */
export function pdfForReadOffThread(
  bytes: Buffer,
  path: string,
  pages: string | undefined,
  options: { readonly signal?: AbortSignal; readonly deadlineMs?: number } = {},
): Promise<PdfForRead> {
  const deadlineMs = options.deadlineMs ?? PDF_PARSE_DEADLINE_MS;
  const thread = startToolThread(
    [
      new URL("./pdf-thread.worker.js", import.meta.url),
      new URL("../../dist/pdf/pdf-thread.worker.js", import.meta.url),
    ],
    "The PDF thread",
  );
  const { worker } = thread;
  return new Promise<PdfForRead>((resolve, reject) => {
    let timer: NodeJS.Timeout | undefined;
    const finish = (outcome: () => void) => {
      clearTimeout(timer);
      worker.off("message", onMessage);
      worker.off("error", onError);
      worker.off("exit", onExit);
      options.signal?.removeEventListener("abort", onAbort);
      thread.end();
      outcome();
    };
    const onMessage = (message: ThreadMessage) => {
      if (message === "ready") {
        const copy = Uint8Array.from(bytes);
        worker.postMessage({ bytes: copy, path, ...(pages === undefined ? {} : { pages }) }, [copy.buffer]);
        return;
      }
      if ("result" in message) {
        const result = message.result;
        finish(() => resolve(result.ok ? { ...result, data: Buffer.from(result.data) } : result));
      } else finish(() => reject(new Error(`the PDF thread failed: ${message.failure}`)));
    };
    const onError = (error: Error) => finish(() => reject(error));
    const onExit = (code: number) => onError(new Error(`the PDF thread exited (code ${code})`));
    const onAbort = () => finish(() => reject(new DOMException("Read was stopped", "AbortError")));
    worker.on("message", onMessage);
    worker.on("error", onError);
    worker.on("exit", onExit);
    if (options.signal?.aborted) return onAbort();
    options.signal?.addEventListener("abort", onAbort, { once: true });
    timer = setTimeout(
      () =>
        finish(() =>
          resolve({
            ok: false,
            error: `${path} starts like a PDF but did not parse within ${deadlineMs / 1000} s (its compressed streams may expand without end); Read stopped. Extract the pages you need to a new file (e.g. qpdf ${path} --pages . 1-3 -- part.pdf) and Read that.`,
          }),
        ),
      deadlineMs,
    );
  });
}
