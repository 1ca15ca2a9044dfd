import { parentPort } from "node:worker_threads";
import { linearRegexEngine } from "../patterns/linear-regex.js";
import { type FileMatchRequest, matchFiles } from "./grep-text.js";

/**
 * A search thread of the JavaScript Grep backend (grep-thread.ts): reads and matches the files it
 * is sent, one search at a time. Matching here rather than on the caller's thread is what lets a
 * signal end the run while a long search runs (R-S12): the caller's thread stays free, and this
 * one is terminated when the search is stopped.
 */
const port = parentPort;
if (port === null) throw new Error("grep-thread.worker.js runs as a worker thread");
port.on(
  "message",
  async (message: { readonly files: readonly string[]; readonly request: FileMatchRequest }) => {
    try {
      port.postMessage({ outcome: await matchFiles(message.files, message.request, linearRegexEngine) });
    } catch (error) {
      port.postMessage({ failure: error instanceof Error ? (error.stack ?? error.message) : String(error) });
    }
  },
);
port.postMessage("ready");
