import Anthropic from "@anthropic-ai/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSimulator } from "./server.js";
import type { Case, Expect, ResponseBody } from "./test-support/fidelity/case.js";
import { DOCUMENT_AND_TOOL_CASES } from "./test-support/fidelity/document-and-tool-cases.js";
import { IMAGE_AND_REFERENCE_CASES, URL_IMAGES } from "./test-support/fidelity/image-and-reference-cases.js";
import { MODEL_RULE_CASES } from "./test-support/fidelity/model-rule-cases.js";
import { OUTPUT_SCHEMA_CASES } from "./test-support/fidelity/output-schema-cases.js";
import { QUOTED_WORDING_CASES } from "./test-support/fidelity/quoted-wording-cases.js";
import { REQUEST_RULE_CASES } from "./test-support/fidelity/request-rule-cases.js";
import { TOOL_SET_CASES } from "./test-support/fidelity/tool-set-cases.js";
import type { Simulator } from "./types.js";

/**
 * The fidelity suite (R-D1, R-D2, R-D4): each case is a request and what the API
 * answers, with the documentation page that says so (test-support/fidelity/), sent twice —
 * through the official SDK (`client.post`) and as raw HTTP.
 */
const CASES: readonly Case[] = [
  ...MODEL_RULE_CASES,
  ...REQUEST_RULE_CASES,
  ...DOCUMENT_AND_TOOL_CASES,
  ...TOOL_SET_CASES,
  ...OUTPUT_SCHEMA_CASES,
  ...IMAGE_AND_REFERENCE_CASES,
  ...QUOTED_WORDING_CASES,
];

let sim: Simulator;
let client: Anthropic;
beforeAll(async () => {
  sim = await startSimulator({ web: { images: URL_IMAGES } });
  client = new Anthropic({ apiKey: "k", baseURL: sim.url, maxRetries: 0 });
});
afterAll(async () => {
  await sim.close();
});

interface Answer {
  status: number;
  body: ResponseBody;
}

async function viaHttp(c: Case): Promise<Answer> {
  const response = await fetch(`${sim.url}/v1/messages`, {
    method: "POST",
    headers: {
      "x-api-key": "k",
      "anthropic-version": c.version ?? "2023-06-01",
      "content-type": "application/json",
      ...(c.betas ? { "anthropic-beta": c.betas.join(",") } : {}),
    },
    body: JSON.stringify(c.body),
  });
  return { status: response.status, body: (await response.json()) as ResponseBody };
}

async function viaSdk(c: Case): Promise<Answer> {
  try {
    const headers = {
      ...(c.betas ? { "anthropic-beta": c.betas.join(",") } : {}),
      ...(c.version ? { "anthropic-version": c.version } : {}),
    };
    const body = await client.post<ResponseBody>("/v1/messages", { body: c.body, headers });
    return { status: 200, body };
  } catch (error) {
    if (!(error instanceof Anthropic.APIError) || error.status === undefined) throw error;
    return { status: error.status, body: error.error as ResponseBody };
  }
}

function check(answer: Answer, expected: Expect): void {
  expect(answer.status, JSON.stringify(answer.body)).toBe(expected.status);
  if (expected.status === 200) {
    if ("body" in expected && expected.body) expected.body(answer.body);
    if (!("thinkingText" in expected) || expected.thinkingText === undefined) return;
    const content = answer.body.content as { type: string; thinking?: string }[];
    const thinking = content.find((b) => b.type === "thinking");
    if (expected.thinkingText === "empty") expect(thinking?.thinking).toBe("");
    else expect(thinking?.thinking?.length ?? 0).toBeGreaterThan(0);
    return;
  }
  if (!("type" in expected)) return;
  const error = answer.body.error as { type: string; message: string; details?: { error_code?: string } };
  expect(answer.body.type).toBe("error");
  expect(error.type).toBe(expected.type);
  if (typeof expected.message === "string") expect(error.message).toBe(expected.message);
  else if (expected.message) expect(error.message).toMatch(expected.message);
  expect(error.details?.error_code).toBe(expected.errorCode);
  if (expected.details) expect(error.details).toMatchObject(expected.details);
}

describe("R-D2 fidelity: requests and what the API answers, each case citing its page", () => {
  it("has at least 80 cases, each citing a documentation page", () => {
    expect(CASES.length).toBeGreaterThanOrEqual(80);
    for (const c of CASES) expect(c.page).toMatch(/^https:\/\/platform\.claude\.com\/docs\/en\//);
    for (const c of CASES) if (c.source !== undefined) expect(c.source).toMatch(/^https:\/\/github\.com\//);
  });
  describe.each(CASES.map((c) => [`${c.title} (${c.source ?? c.page})`, c] as const))("%s", (_title, c) => {
    it("R-D2: through the official SDK", async () => check(await viaSdk(c), c.expect));
    it("R-D2: as raw HTTP", async () => check(await viaHttp(c), c.expect));
  });
});
