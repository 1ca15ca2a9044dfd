import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import {
  type CallToolResult,
  ErrorCode,
  McpError,
  type Tool as McpTool,
} from "@modelcontextprotocol/sdk/types.js";
import type { McpServerEntry } from "./mcp-config.js";
import { type McpLimits, timerMs } from "./mcp-limits.js";
import type { McpNotice } from "./mcp-notice.js";
import {
  type McpTransportType,
  type OpenedTransport,
  openTransport,
  type TransportOptions,
} from "./transports.js";

const MCP_CLIENT_INFO = { name: "forkloop", version: "0.1.0" } as const;

/** A server that pages its tool list forever is broken; stop after this many pages. */
const MAX_TOOL_PAGES = 1_000;

/** `pending` while starting or restarting; the names and the first three are Claude Code's. */
export interface McpServerStatus {
  readonly name: string;
  readonly status: "pending" | "connected" | "failed" | "closed";
  readonly transport: McpTransportType;
  /** Why it failed, or why it last stopped (with the end of its stderr for stdio servers). */
  readonly error?: string;
  /** How many times it was restarted after dying (at most once per session). */
  readonly restarts: number;
}

export type CallOutcome =
  | { readonly ok: true; readonly result: CallToolResult }
  | { readonly ok: false; readonly error: string };

interface Live {
  readonly client: Client;
  readonly opened: OpenedTransport;
  readonly toolNames: ReadonlySet<string>;
}

export interface ServerConnectionOptions extends TransportOptions {
  readonly limits: McpLimits;
  readonly onNotice?: ((notice: McpNotice) => void) | undefined;
  /** The session's stop: a start still connecting gives up (it would otherwise wait out MCP_TIMEOUT). */
  readonly signal?: AbortSignal | undefined;
}

/**
 * One configured server for the length of a session: started once, restarted once if it dies
 * (R-M1), closed with the session. Calls to a dead server are answered with an error, never
 * a throw; calls that arrive while it restarts wait for the restart.
 */
export class ServerConnection {
  private live: Live | undefined;
  private state: McpServerStatus["status"] = "pending";
  private lastError: string | undefined;
  private restarts = 0;
  private restarting: Promise<void> | undefined;
  /** Aborts a start or restart still connecting when the session closes. */
  private readonly closing = new AbortController();

  constructor(
    readonly entry: McpServerEntry,
    private readonly options: ServerConnectionOptions,
  ) {}

  get name(): string {
    return this.entry.name;
  }

  /** The name the server reported for itself when it connected (undefined before). */
  get reportedName(): string | undefined {
    return this.live?.client.getServerVersion()?.name;
  }

  /** Per-call timeout: the server's own `timeout`, else MCP_TOOL_TIMEOUT. */
  get toolTimeoutMs(): number {
    return this.entry.config.timeout ?? this.options.limits.toolTimeoutMs;
  }

  status(): McpServerStatus {
    return {
      name: this.name,
      status: this.state,
      transport: this.entry.config.type ?? "stdio",
      ...(this.lastError === undefined ? {} : { error: this.lastError }),
      restarts: this.restarts,
    };
  }

  /** Connects and lists every tool (all pages) within MCP_TIMEOUT. */
  async start(): Promise<{ ok: true; tools: readonly McpTool[] } | { ok: false; error: string }> {
    const started = await this.connect();
    if (!started.ok) {
      this.state = "failed";
      this.lastError = started.error;
      return started;
    }
    this.adopt(started.live);
    return { ok: true, tools: started.tools };
  }

  async call(toolName: string, args: Record<string, unknown>, signal: AbortSignal): Promise<CallOutcome> {
    if (this.restarting) await this.restarting;
    const live = this.live;
    if (live === undefined) {
      return {
        ok: false,
        error: `MCP server "${this.name}" is not running: ${this.lastError ?? this.state}`,
      };
    }
    if (!live.toolNames.has(toolName)) {
      return {
        ok: false,
        error: `MCP server "${this.name}" no longer offers the tool "${toolName}" (since its restart)`,
      };
    }
    // The SDK leaves its abort listener on the signal it is given, and a turn's signal serves
    // every call of the turn: each call gets a signal of its own, unlinked when it ends.
    const callAbort = new AbortController();
    const forward = () => callAbort.abort(signal.reason);
    if (signal.aborted) forward();
    else signal.addEventListener("abort", forward, { once: true });
    try {
      const timeout = timerMs(this.toolTimeoutMs);
      const result = (await live.client.callTool({ name: toolName, arguments: args }, undefined, {
        signal: callAbort.signal,
        timeout,
      })) as CallToolResult;
      return { ok: true, result };
    } catch (error) {
      if (signal.aborted) throw error; // the loop answers an interrupted call itself (R-L16)
      if (error instanceof McpError && error.code === ErrorCode.RequestTimeout) {
        return {
          ok: false,
          error: `MCP server "${this.name}" tool "${toolName}" timed out after ${this.toolTimeoutMs} ms (MCP_TOOL_TIMEOUT, or the server's "timeout")`,
        };
      }
      if (error instanceof McpError && error.code !== ErrorCode.ConnectionClosed) {
        return { ok: false, error: error.message };
      }
      // The connection is gone: the process died (stdio) or the server stopped answering HTTP.
      const reason = this.lost(live, errorText(error));
      return { ok: false, error: `MCP server "${this.name}" stopped during the call: ${reason}` };
    } finally {
      signal.removeEventListener("abort", forward);
    }
  }

  async close(): Promise<void> {
    this.state = "closed";
    this.closing.abort(new Error("the session closed"));
    await this.restarting; // a restart in progress sees "closed" and closes what it opened
    const live = this.live;
    this.live = undefined;
    if (live) await closeLive(live);
  }

  private async connect(): Promise<
    { ok: true; live: Live; tools: readonly McpTool[] } | { ok: false; error: string }
  > {
    const limitMs = timerMs(this.options.limits.startupTimeoutMs);
    let opened: OpenedTransport | undefined;
    const client = new Client(MCP_CLIENT_INFO, { capabilities: {} });
    const timer = AbortSignal.timeout(limitMs);
    const stop = this.options.signal;
    const deadline = AbortSignal.any([timer, this.closing.signal, ...(stop ? [stop] : [])]);
    try {
      opened = await openTransport(this.entry.config, this.options);
      const transport = opened.transport;
      const attempt = (async () => {
        await client.connect(transport, { timeout: limitMs, signal: deadline });
        return client.getServerCapabilities()?.tools ? await listAllTools(client, limitMs, deadline) : [];
      })();
      // The deadline covers transports whose start itself hangs (an SSE stream that never opens).
      attempt.catch(() => undefined); // when the deadline wins, the attempt's own failure is moot
      const tools = await Promise.race([attempt, rejectOnAbort(deadline)]);
      const live: Live = { client, opened, toolNames: new Set(tools.map((tool) => tool.name)) };
      return { ok: true, live, tools };
    } catch (error) {
      await client.close().catch(() => undefined);
      await opened?.endLeftovers();
      const reason = timer.aborted
        ? `did not start within ${limitMs} ms (MCP_TIMEOUT)`
        : stop?.aborted
          ? "its start was stopped (the session was interrupted)"
          : errorText(error);
      const stderr = opened?.stderrTail() ?? "";
      return { ok: false, error: stderr === "" ? reason : `${reason}; its stderr ends: ${stderr}` };
    }
  }

  private adopt(live: Live): void {
    this.live = live;
    this.state = "connected";
    live.client.onclose = () => {
      if (this.live === live) this.lost(live, "the connection closed");
    };
  }

  /**
   * The server died: restart it once (eagerly, so the next call finds it running); a second
   * death, or a failed restart, leaves it failed for the rest of the session. Returns what a
   * call that was running is told.
   */
  private lost(live: Live, reason: string): string {
    if (this.live === live && this.state !== "closed") {
      this.live = undefined;
      void closeLive(live);
      const stderr = live.opened.stderrTail();
      this.lastError = stderr === "" ? reason : `${reason}; its stderr ends: ${stderr}`;
      const restarting = this.restarts === 0;
      this.options.onNotice?.({
        type: "server_exited",
        server: this.name,
        error: this.lastError,
        restarting,
      });
      if (restarting) this.restart();
      else this.state = "failed";
    }
    const after =
      this.state === "pending" ? "it is being restarted" : "it was restarted once already and stays stopped";
    return `${this.lastError ?? reason} (${after})`;
  }

  private restart(): void {
    this.restarts++;
    this.state = "pending";
    this.restarting = this.reconnect().finally(() => {
      this.restarting = undefined;
    });
  }

  private async reconnect(): Promise<void> {
    const outcome = await this.connect();
    if (this.state === "closed") {
      if (outcome.ok) await closeLive(outcome.live);
      return;
    }
    if (!outcome.ok) {
      this.state = "failed";
      this.lastError = `restart failed: ${outcome.error}`;
      this.options.onNotice?.({ type: "server_failed", server: this.name, error: this.lastError });
      return;
    }
    this.adopt(outcome.live);
    this.options.onNotice?.({ type: "server_restarted", server: this.name });
  }
}

async function listAllTools(client: Client, timeout: number, signal: AbortSignal): Promise<McpTool[]> {
  const tools: McpTool[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < MAX_TOOL_PAGES; page++) {
    const result = await client.listTools(cursor === undefined ? {} : { cursor }, { timeout, signal });
    tools.push(...result.tools);
    if (result.nextCursor === undefined || result.nextCursor === cursor) return tools;
    cursor = result.nextCursor;
  }
  throw new Error(`the tool list did not end after ${MAX_TOOL_PAGES} pages`);
}

async function closeLive(live: Live): Promise<void> {
  live.client.onclose = () => undefined; // a close we asked for is not a death
  await live.client.close().catch(() => undefined);
  await live.opened.endLeftovers();
}

function rejectOnAbort(signal: AbortSignal): Promise<never> {
  return new Promise((_resolve, reject) => {
    signal.addEventListener("abort", () => reject(signal.reason), { once: true });
  });
}

function errorText(error: unknown): string {
  if (error instanceof Error) {
    const cause = (error as { cause?: unknown }).cause;
    return cause instanceof Error ? `${error.message} (${cause.message})` : error.message;
  }
  return String(error);
}
