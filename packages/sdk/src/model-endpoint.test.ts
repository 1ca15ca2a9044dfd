import { afterEach, describe, expect, it } from "vitest";
import { EMBEDDED_SIM_RECORD_LIMIT, type ModelSource, resolveModelSource } from "./model-endpoint.js";

let source: ModelSource | undefined;
afterEach(async () => {
  await source?.close();
  source = undefined;
});

describe("the embedded simulator", () => {
  it("keeps at most EMBEDDED_SIM_RECORD_LIMIT request records, so a long batch's memory stays bounded", async () => {
    const notices: string[] = [];
    source = await resolveModelSource({ FORKLOOP_SIM_LATENCY: "none" }, (line) => notices.push(line));
    expect(source.simulated).toBe(true);
    expect(notices).toHaveLength(1);
    const url = source.endpoint.baseURL ?? "";
    const headers = { "x-api-key": source.endpoint.apiKey, "anthropic-version": "2023-06-01" };
    for (let i = 0; i < EMBEDDED_SIM_RECORD_LIMIT + 5; i++) {
      const response = await fetch(`${url}/v1/models`, { headers });
      expect(response.status).toBe(200);
      await response.arrayBuffer();
    }
    const records = (await (await fetch(`${url}/_sim/requests`)).json()) as unknown[];
    expect(records).toHaveLength(EMBEDDED_SIM_RECORD_LIMIT);
  });
});
