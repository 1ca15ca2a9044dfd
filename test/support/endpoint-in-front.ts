import { createServer, type IncomingMessage, request, type ServerResponse } from "node:http";

/** A model endpoint in front of the simulator: what the CLI is pointed at, and its end. */
export interface EndpointInFront {
  /** ANTHROPIC_API_KEY and ANTHROPIC_BASE_URL for the CLI. */
  readonly env: Record<string, string>;
  close(): Promise<void>;
}

/**
 * An HTTP server between the CLI and the simulator at `simUrl`, for faults the simulator does not
 * script (a key revoked mid-batch, a proxy's login page, a limit on the batch's own clock): each
 * request goes to `answer` first, and to the simulator unless `answer` answered it (returns true);
 * an `answer` that returns a promise holds the request until it settles (a gate).
 */
export async function endpointInFront(
  simUrl: string,
  answer: (req: IncomingMessage, res: ServerResponse) => boolean | Promise<boolean>,
): Promise<EndpointInFront> {
  const target = new URL(simUrl);
  const server = createServer(async (req, res) => {
    if (await answer(req, res)) return;
    const forwarded = request(
      { host: target.hostname, port: target.port, path: req.url, method: req.method, headers: req.headers },
      (upstream) => {
        res.writeHead(upstream.statusCode ?? 502, upstream.headers);
        upstream.pipe(res);
      },
    );
    req.pipe(forwarded);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : 0;
  return {
    env: { ANTHROPIC_API_KEY: "test-key", ANTHROPIC_BASE_URL: `http://127.0.0.1:${port}` },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
