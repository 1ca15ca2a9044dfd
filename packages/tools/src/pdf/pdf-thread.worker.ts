import { parentPort } from "node:worker_threads";
import { pdfForRead } from "./pdf-pages.js";

/**
 * The thread a PDF Read parses on (pdf-thread.ts): one PDF, then the thread is done. Parsing here
 * rather than on the caller's thread is what lets a deadline or a signal end a parse a hostile
 * file drags out (R-S12): pdf-lib inflates a compressed object stream whole and synchronously.
 */
const port = parentPort;
if (port === null) throw new Error("pdf-thread.worker.js runs as a worker thread");
port.once(
  "message",
  async (message: { readonly bytes: Uint8Array; readonly path: string; readonly pages?: string }) => {
    try {
      const result = await pdfForRead(Buffer.from(message.bytes), message.path, message.pages);
      port.postMessage({ result });
    } catch (error) {
      port.postMessage({ failure: error instanceof Error ? error.message : String(error) });
    }
  },
);
port.postMessage("ready");
