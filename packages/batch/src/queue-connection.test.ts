import { describe, expect, it } from "vitest";
import { parseQueueUrl } from "./queue-connection.js";

describe("parseQueueUrl (R-B1: --queue redis://HOST:PORT[/DB])", () => {
  it("reads host, port, database and credentials; the display form drops the password", () => {
    expect(parseQueueUrl("redis://127.0.0.1:6390/3")).toEqual({
      display: "redis://127.0.0.1:6390/3",
      options: { host: "127.0.0.1", port: 6390, db: 3 },
    });
    const withAuth = parseQueueUrl("redis://ops:s%40cret@redis.internal");
    expect(withAuth.display).toBe("redis://redis.internal:6379");
    expect(withAuth.options).toEqual({
      host: "redis.internal",
      port: 6379,
      db: 0,
      username: "ops",
      password: "s@cret",
    });
    expect(parseQueueUrl("rediss://[::1]:6380").options).toMatchObject({ host: "::1", port: 6380, tls: {} });
  });

  it.each([
    ["localhost:6379", "is not a Redis URL"],
    ["not a url", "is not a URL"],
    ["http://127.0.0.1:6379", "is not a Redis URL (http:)"],
    ["redis://127.0.0.1:6379/queue", 'the database "queue" is not a number'],
    ["redis://127.0.0.1:6379/0?timeout=5", "has a query or fragment"],
  ])("%s is refused with the expected shape in the message", (url, problem) => {
    expect(() => parseQueueUrl(url)).toThrow(problem);
    expect(() => parseQueueUrl(url)).toThrow("redis://HOST:PORT[/DB]");
  });
});
