import type { LookupAddress } from "node:dns";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPermissionChecker } from "../permissions/permission-checker.js";
import { callTool, resultText, useTempWorkspace } from "../testing/index.js";
import { createWebFetchTool } from "../tools/web-fetch.js";
import { privateAddressReason } from "./address-policy.js";

const ws = useTempWorkspace();
let server: Server;
let port = 0;
let served = 0;

/** Names the test resolves itself: every one is the local server, i.e. a loopback address. */
const fakeDns = ((
  hostname: string,
  _options: unknown,
  callback: (e: Error | null, a: LookupAddress[]) => void,
) => {
  if (hostname.endsWith(".test")) return callback(null, [{ address: "127.0.0.1", family: 4 }]);
  callback(Object.assign(new Error(`ENOTFOUND ${hostname}`), { code: "ENOTFOUND" }), []);
}) as never;

beforeAll(async () => {
  server = createServer((request, response) => {
    const path = request.url ?? "/";
    if (path === "/page") {
      response.writeHead(200, { "content-type": "text/html; charset=utf-8" });
      response.end(
        "<html><head><title>t</title><script>steal()</script><style>p{}</style></head>" +
          '<body><h1>Release notes</h1><p>See <a href="https://example.com/x">the docs</a>.</p>' +
          "<ul><li>one</li><li>two</li></ul></body></html>",
      );
    } else if (path === "/secret") {
      response.writeHead(200, { "content-type": "text/plain" });
      response.end("metadata-credentials");
    } else if (path === "/hop") {
      response.writeHead(302, { location: "/page" });
      response.end();
    } else if (path === "/to-metadata") {
      response.writeHead(302, { location: `http://metadata.test:${port}/secret` });
      response.end();
    } else if (path === "/to-loopback-ip") {
      response.writeHead(301, { location: `http://127.0.0.1:${port}/secret` });
      response.end();
    } else if (path === "/to-file") {
      response.writeHead(302, { location: "file:///etc/passwd" });
      response.end();
    } else if (path === "/huge") {
      response.writeHead(200, { "content-type": "text/plain" });
      const chunk = Buffer.alloc(64 * 1024, "a");
      let left = 5 * 1024 * 1024;
      const pump = () => {
        while (left > 0) {
          left -= chunk.length;
          served += chunk.length;
          if (!response.write(chunk)) return void response.once("drain", pump);
        }
        response.end();
      };
      pump();
    } else if (path === "/bomb") {
      response.writeHead(200, { "content-type": "text/plain", "content-encoding": "gzip" });
      response.end(gzipSync(Buffer.alloc(50 * 1024 * 1024, "b")));
    } else if (path === "/image") {
      response.writeHead(200, { "content-type": "image/png" });
      response.end(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0, 0, 0]));
    } else if (path === "/hang") {
      // Never answers: the fetch's own timeout ends it.
    } else {
      response.writeHead(404);
      response.end("no");
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const allowed = (hosts: string[], extra: Parameters<typeof createWebFetchTool>[0] = {}) =>
  createWebFetchTool({ allowPrivateHosts: hosts, lookup: fakeDns, ...extra });
const fetchWith = async (tool: ReturnType<typeof createWebFetchTool>, url: string, offset?: number) =>
  callTool(tool, { url, prompt: "what changed?", ...(offset === undefined ? {} : { offset }) }, ws.context());

describe("WebFetch", () => {
  it("R-T6: an HTML page becomes Markdown shown with the prompt; scripts and styles are dropped", async () => {
    const result = await fetchWith(allowed(["site.test"]), `http://site.test:${port}/page`);
    expect(result.isError).toBeUndefined();
    const text = resultText(result);
    expect(text).toContain(`URL: http://site.test:${port}/page\nStatus: 200 OK`);
    expect(text).toContain("Prompt: what changed?");
    expect(text).toContain("# Release notes");
    expect(text).toContain("See [the docs](https://example.com/x).");
    expect(text).toMatch(/- {1,3}one\n- {1,3}two/);
    expect(text).not.toContain("steal()");
  });

  it("R-T6: a private address is refused by IP and by a name resolving to it; control: the allowed host is fetched", async () => {
    const tool = allowed(["site.test"]);
    const byIp = await fetchWith(tool, `http://127.0.0.1:${port}/secret`);
    expect(byIp.isError).toBe(true);
    expect(resultText(byIp)).toMatch(/refuses 127\.0\.0\.1: it is a loopback address/);
    const byName = await fetchWith(tool, `http://metadata.test:${port}/secret`);
    expect(byName.isError).toBe(true);
    expect(resultText(byName)).toMatch(
      /refuses metadata\.test: it resolves to 127\.0\.0\.1, which is a loopback/,
    );
    const metadata = await fetchWith(tool, "http://169.254.169.254/latest/meta-data/");
    expect(resultText(metadata)).toMatch(/link-local \(cloud metadata\)/);
    const control = await fetchWith(allowed(["metadata.test"]), `http://metadata.test:${port}/secret`);
    expect(resultText(control)).toContain("metadata-credentials");
  });

  it("R-T6: SSRF through redirects — a redirect to another host is returned, not followed; the next call is judged again", async () => {
    const tool = allowed(["site.test"]);
    const same = await fetchWith(tool, `http://site.test:${port}/hop`);
    expect(resultText(same)).toContain("# Release notes");
    for (const [path, target] of [
      ["/to-metadata", `http://metadata.test:${port}/secret`],
      ["/to-loopback-ip", `http://127.0.0.1:${port}/secret`],
      ["/to-file", "file:///etc/passwd"],
    ] as const) {
      const result = await fetchWith(tool, `http://site.test:${port}${path}`);
      const text = resultText(result);
      expect(text).toContain("REDIRECT DETECTED");
      expect(text).toContain(`Redirect URL: ${target}`);
      expect(text).not.toContain("metadata-credentials");
      const followed = await fetchWith(tool, target);
      expect(followed.isError, target).toBe(true);
    }
    // Control: with the target host allowed, the same chain does reach the secret.
    const open = allowed(["site.test", "metadata.test"]);
    expect(resultText(await fetchWith(open, `http://metadata.test:${port}/secret`))).toContain(
      "metadata-credentials",
    );
  });

  it("R-T6: a huge page and a compression bomb are cut at the byte cap; control: the server sent more", async () => {
    const tool = allowed(["site.test"], { maxBytes: 1024 * 1024 });
    const huge = resultText(await fetchWith(tool, `http://site.test:${port}/huge`));
    expect(huge).toContain("cut at 1048576 bytes");
    expect(huge).toContain("Use offset=100000 to read on.");
    const next = resultText(await fetchWith(tool, `http://site.test:${port}/huge`, 100_000));
    expect(next).toContain("Showing characters 100000-200000 of 1048576");
    expect(served).toBeGreaterThan(1024 * 1024);
    const bomb = resultText(await fetchWith(tool, `http://site.test:${port}/bomb`));
    expect(bomb).toContain("cut at 1048576 bytes");
  });

  it("R-T6: a binary, a URL that is not http(s), a hanging server and a network-off sandbox are tool errors", async () => {
    const tool = allowed(["site.test"], { timeoutMs: 500 });
    const image = await fetchWith(tool, `http://site.test:${port}/image`);
    expect(resultText(image)).toMatch(/image\/png \(8 bytes\), not a text page/);
    for (const url of ["file:///etc/passwd", "ftp://site.test/x", "gopher://site.test/"]) {
      const result = await fetchWith(tool, url);
      expect(result.isError).toBe(true);
      expect(resultText(result)).toMatch(/only http and https URLs/);
    }
    const bad = await fetchWith(tool, "http://user:pw@site.test/");
    expect(resultText(bad)).toMatch(/user name or password/);
    const local = await fetchWith(tool, "http://intranet/");
    expect(resultText(local)).toMatch(/without a dot/);
    const hang = await fetchWith(tool, `http://site.test:${port}/hang`);
    expect(resultText(hang)).toMatch(/timed out/);
    const off = await fetchWith(
      allowed(["site.test"], { networkOff: true }),
      `http://site.test:${port}/page`,
    );
    expect(resultText(off)).toMatch(/network off/);
  });

  it("R-T6: permissions — asked without a rule, allowed by WebFetch(domain:…), a deny rule wins, plan mode may still ask", async () => {
    const tool = allowed(["site.test"]);
    const check = (rules: { allow?: string[]; deny?: string[] }, mode: "default" | "plan" = "default") =>
      createPermissionChecker({
        mode,
        rules: { allow: rules.allow ?? [], ask: [], deny: rules.deny ?? [] },
        tools: [tool],
        cwd: ws.root,
      })(
        "WebFetch",
        { url: "https://docs.site.test/a", prompt: "p" },
        {
          signal: new AbortController().signal,
          toolUseId: "t",
          agentId: "main",
        },
      );
    const asked = await check({});
    expect(asked).toMatchObject({ behavior: "deny" });
    // With no one to approve it, the denial is Claude Code's sentence (R-X1).
    expect((asked as { message: string }).message).toBe(
      "Claude requested permissions to use WebFetch, but you haven't granted it yet.",
    );
    const byRule = { behavior: "allow", decidedBy: { source: "config", reasonType: "rule" } };
    expect(await check({ allow: ["WebFetch(domain:docs.site.test)"] })).toEqual(byRule);
    expect(await check({ allow: ["WebFetch(domain:*.site.test)"] })).toEqual(byRule);
    expect((await check({ allow: ["WebFetch(domain:site.test)"] })).behavior).toBe("deny");
    expect(
      (await check({ allow: ["WebFetch(domain:docs.site.test)"], deny: ["WebFetch(domain:*.site.test)"] }))
        .behavior,
    ).toBe("deny");
    const plan = await check({ allow: ["WebFetch(domain:docs.site.test)"] }, "plan");
    expect(plan).toEqual(byRule);
  });
});

describe("private address ranges", () => {
  it("R-T6: IPv4 and IPv6 private, loopback, link-local and embedded-IPv4 forms are private; public ones are not", () => {
    for (const address of [
      "127.0.0.1",
      "127.255.0.9",
      "10.1.2.3",
      "172.16.0.1",
      "172.31.255.255",
      "192.168.1.1",
      "169.254.169.254",
      "100.64.0.1",
      "0.0.0.0",
      "224.0.0.1",
      "::1",
      "::",
      "::ffff:127.0.0.1",
      "::ffff:7f00:1",
      "::ffff:169.254.169.254",
      "::ffff:0:127.0.0.1",
      "::ffff:0:a9fe:a9fe",
      "64:ff9b::a9fe:a9fe",
      "2002:7f00:1::",
      "64:ff9b:1::a9fe:a9fe",
      "64:ff9b:1:abcd::1",
      "2001:0:4136:e378:8000:63bf:80ff:fffe",
      "2001::1",
      "2001:2::1",
      "100::1",
      "3fff::1",
      "fe80::1",
      "fc00::1",
      "fd12:3456::1",
      "ff02::1",
    ]) {
      expect(privateAddressReason(address), address).toBeDefined();
    }
    for (const address of [
      "8.8.8.8",
      "1.1.1.1",
      "172.32.0.1",
      "2606:4700:4700::1111",
      "::ffff:8.8.8.8",
      "::ffff:0:8.8.8.8",
      "64:ff9b::808:808",
      "2001:4860:4860::8888",
    ]) {
      expect(privateAddressReason(address), address).toBeUndefined();
    }
  });
});
