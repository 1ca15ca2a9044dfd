import type { BatchItemRow, BatchReportData } from "../report-data.js";
import { COLORS, chartBox } from "./charts.js";
import { figure, h, replace, section } from "./dom.js";
import * as format from "./format.js";
import { agentDetail } from "./session-view.js";
import { type Column, VirtualTable } from "./virtual-table.js";

/** The totals report.json has, computed from the rows (so a filter can show its own). */
function totalsOf(items: readonly BatchItemRow[]) {
  const tokens = items.reduce((sum, item) => format.addTokens(sum, item.tokens), format.NO_TOKENS);
  return {
    items: items.length,
    succeeded: items.filter((item) => item.status === "succeeded").length,
    failed: items.filter((item) => item.status === "failed").length,
    pending: items.filter((item) => item.status === "pending").length,
    turns: items.reduce((sum, item) => sum + item.turns, 0),
    compactions: items.reduce((sum, item) => sum + item.compactions, 0),
    apiRetries: items.reduce((sum, item) => sum + item.apiRetries, 0),
    apiCalls: items.reduce((sum, item) => sum + item.apiCalls, 0),
    inputTokens: tokens.input,
    outputTokens: tokens.output,
    cacheCreationInputTokens: tokens.cacheWrite,
    cacheReadInputTokens: tokens.cacheRead,
    costUsd: items.reduce((sum, item) => sum + item.costUsd, 0),
    cacheReadShare: format.cacheReadShare(tokens),
  };
}

/**
 * The batch's totals: the items' and the reduce's turns, tokens and cost (R-B7), as report.json's
 * totals count them; the filter line below the table counts the shown items only.
 */
function totalsFigures(
  items: readonly BatchItemRow[],
  reduce: BatchReportData["reduce"],
  wallMs: number | null,
): HTMLElement {
  const t = withReduce(totalsOf(items), reduce);
  return h(
    "div",
    { class: "figures" },
    figure("items", String(t.items), t.items, "items"),
    figure("succeeded", String(t.succeeded), t.succeeded, "succeeded"),
    figure("failed", String(t.failed), t.failed, "failed"),
    figure("not finished", String(t.pending), t.pending, "pending"),
    figure("turns", format.count(t.turns), t.turns, "turns"),
    figure("compactions", String(t.compactions), t.compactions, "compactions"),
    figure("API calls", format.count(t.apiCalls), t.apiCalls, "apiCalls"),
    figure("API retries", String(t.apiRetries), t.apiRetries, "apiRetries"),
    figure("uncached input", format.count(t.inputTokens), t.inputTokens, "inputTokens"),
    figure(
      "cache writes",
      format.count(t.cacheCreationInputTokens),
      t.cacheCreationInputTokens,
      "cacheCreationInputTokens",
    ),
    figure(
      "cache reads",
      format.count(t.cacheReadInputTokens),
      t.cacheReadInputTokens,
      "cacheReadInputTokens",
    ),
    figure("read from the cache", format.percent(t.cacheReadShare), t.cacheReadShare, "cacheReadShare"),
    figure("output", format.count(t.outputTokens), t.outputTokens, "outputTokens"),
    figure("cost", format.cost(t.costUsd), t.costUsd, "costUsd"),
    wallMs === null ? null : figure("wall time", format.duration(wallMs), wallMs, "wallMs"),
  );
}

function costChart(items: readonly BatchItemRow[]): HTMLElement {
  return chartBox("batch-cost", {
    type: "bar",
    data: {
      labels: items.map((_, index) => String(index + 1)),
      datasets: [
        {
          label: "cost (USD)",
          data: items.map((item) => item.costUsd),
          backgroundColor: COLORS.context,
          yAxisID: "y",
        },
        {
          type: "line",
          label: "read from the cache",
          data: items.map((item) => format.cacheReadShare(item.tokens)),
          borderColor: COLORS.cacheRead,
          backgroundColor: COLORS.cacheRead,
          pointRadius: items.length > 200 ? 0 : 2,
          yAxisID: "share",
        } as never,
      ],
    },
    options: {
      scales: {
        x: { title: { display: true, text: "item (in enqueue order)" }, ticks: { maxTicksLimit: 20 } },
        y: { beginAtZero: true, title: { display: true, text: "USD" } },
        share: {
          position: "right",
          min: 0,
          max: 1,
          grid: { drawOnChartArea: false },
          ticks: { format: { style: "percent" } },
        },
      },
    },
  });
}

/** Items running at each moment (every attempt, claim to settle); 429 pauses shaded. */
function concurrencyPoints(data: BatchReportData): { x: number; y: number }[] {
  const origin = data.items
    .flatMap((item) => item.runs.map((run) => run.startedAt))
    .reduce((a, b) => Math.min(a, b), Infinity);
  const changes = data.items
    .flatMap((item) =>
      item.runs.flatMap((run) =>
        run.endedAt === null
          ? []
          : [
              { at: run.startedAt, step: 1 },
              { at: run.endedAt, step: -1 },
            ],
      ),
    )
    .sort((a, b) => a.at - b.at || a.step - b.step);
  let running = 0;
  const points = [{ x: 0, y: 0 }];
  for (const change of changes) {
    running += change.step;
    points.push({ x: (change.at - origin) / 1000, y: running });
  }
  return points;
}

function concurrencyChart(data: BatchReportData): HTMLElement {
  const origin = data.items
    .flatMap((item) => item.runs.map((run) => run.startedAt))
    .reduce((a, b) => Math.min(a, b), Infinity);
  return chartBox("batch-concurrency", {
    type: "line",
    data: {
      datasets: [
        {
          label: "items running",
          data: concurrencyPoints(data),
          stepped: "after",
          borderColor: COLORS.context,
          backgroundColor: "rgba(51, 102, 204, 0.15)",
          fill: true,
          pointRadius: 0,
        },
      ],
    },
    options: {
      parsing: false,
      scales: {
        x: {
          type: "linear",
          beginAtZero: true,
          title: { display: true, text: "seconds from the first claim" },
        },
        y: { beginAtZero: true, ticks: { precision: 0 } },
      },
      plugins: {
        forkloopAnnotations: {
          bands: data.pauses.map((pause) => ({
            from: (pause.at - origin) / 1000,
            to: (pause.until - origin) / 1000,
            color: COLORS.pause,
          })),
        },
      } as never,
    },
  });
}

function failureGroups(items: readonly BatchItemRow[], filterByCode: (code: string) => void): HTMLElement {
  const groups = new Map<string, BatchItemRow[]>();
  for (const item of items)
    if (item.error) groups.set(item.error.code, [...(groups.get(item.error.code) ?? []), item]);
  if (groups.size === 0) return h("p", { class: "note" }, "No item failed.");
  return h(
    "table",
    { class: "failures" },
    h(
      "thead",
      {},
      h(
        "tr",
        {},
        h("th", {}, "error"),
        h("th", {}, "items"),
        h("th", {}, "first message"),
        h("th", {}, "examples"),
      ),
    ),
    h(
      "tbody",
      {},
      ...[...groups.entries()]
        .sort((a, b) => b[1].length - a[1].length)
        .map(([code, failed]) =>
          h(
            "tr",
            { data: { errorCode: code } },
            h("td", {}, h("button", { class: "link", onClick: () => filterByCode(code) }, code)),
            h("td", { class: "numeric" }, String(failed.length)),
            h("td", {}, failed[0]?.error?.message ?? ""),
            h(
              "td",
              {},
              failed
                .slice(0, 3)
                .map((item) => item.label)
                .join(", "),
            ),
          ),
        ),
    ),
  );
}

/** The address of an item's session page in this file (a link that also works copied or reloaded). */
function itemHref(id: string): string {
  return `#item=${encodeURIComponent(id)}`;
}

/**
 * What the labels of all items share up to a `/` (e.g. `/home/me/project/`): the item column
 * leaves it out, so a cell shows `tasks.jsonl:17` rather than the same cut-off directory on every row.
 */
function sharedDirectory(labels: readonly string[]): string {
  if (labels.length === 0) return "";
  let shared = labels[0] ?? "";
  for (const label of labels) {
    let length = 0;
    while (length < shared.length && length < label.length && shared[length] === label[length]) length++;
    shared = shared.slice(0, length);
  }
  return shared.slice(0, shared.lastIndexOf("/") + 1);
}

/** A right-aligned column that sorts by the number and shows it formatted. */
function numeric(
  key: string,
  title: string,
  width: string,
  value: (row: BatchItemRow) => number,
  text: (value: number) => string = format.count,
): Column<BatchItemRow> {
  return { key, title, width, value, text: (row) => text(value(row)), numeric: true };
}

/** The item table's columns; narrower than their sum (≈ 76rem), the table scrolls sideways. */
function itemColumns(labelPrefix: string, structured: boolean): readonly Column<BatchItemRow>[] {
  return [
    {
      key: "label",
      title: "item",
      value: (row) => row.label,
      text: (row) => row.label.slice(labelPrefix.length),
      href: (row) => itemHref(row.id),
      width: "minmax(8rem, 2fr)",
    },
    { key: "status", title: "status", value: (row) => row.status, width: "6rem" },
    {
      key: "answer",
      title: "answer / error",
      value: (row) => (row.error ? `${row.error.code}: ${row.error.message}` : row.answer),
      width: "minmax(10rem, 3fr)",
    },
    // R-B6: a --json-schema batch's items answer in JSON; the column shows it as the journal has it.
    ...(structured
      ? [
          {
            key: "structuredOutput",
            title: "structured output",
            value: (row: BatchItemRow) => row.structuredOutput ?? "",
            width: "minmax(10rem, 3fr)",
          },
        ]
      : []),
    { key: "turns", title: "turns", value: (row) => row.turns, numeric: true, width: "4rem" },
    numeric("input", "input", "5rem", (row) => format.promptTokens(row.tokens)),
    numeric("output", "output", "4.5rem", (row) => row.tokens.output),
    numeric("cacheRead", "cache read", "6.5rem", (row) => row.tokens.cacheRead),
    numeric("cacheWrite", "cache write", "7rem", (row) => row.tokens.cacheWrite),
    numeric("cost", "cost", "5rem", (row) => row.costUsd, format.cost),
    numeric("duration", "duration", "5.5rem", (row) => row.durationMs, format.duration),
    numeric("compactions", "compactions", "7.5rem", (row) => row.compactions, String),
    numeric("retries", "API retries", "6.5rem", (row) => row.apiRetries, String),
  ];
}

function itemPage(root: HTMLElement, item: BatchItemRow): void {
  replace(
    root,
    h("p", {}, h("a", { attrs: { href: "#" } }, "← back to the batch")),
    h(
      "header",
      {},
      h("h1", {}, `Item ${item.label}`),
      h("p", { class: "muted" }, `${item.status} · ${item.attempts} attempt(s) · ${item.id}`),
    ),
    item.error ? h("p", { class: "problem" }, `${item.error.code}: ${item.error.message}`) : null,
    item.session
      ? agentDetail(item.session, [], "item-")
      : h(
          "p",
          { class: "note" },
          "This item has no transcript (it never ran, or it ran before transcripts were kept).",
        ),
  );
}

function withReduce(
  t: ReturnType<typeof totalsOf>,
  reduce: BatchReportData["reduce"],
): ReturnType<typeof totalsOf> {
  if (reduce === null) return t;
  const tokens = format.addTokens(
    {
      input: t.inputTokens,
      output: t.outputTokens,
      cacheWrite: t.cacheCreationInputTokens,
      cacheRead: t.cacheReadInputTokens,
    },
    reduce.tokens,
  );
  return {
    ...t,
    turns: t.turns + reduce.turns,
    inputTokens: tokens.input,
    outputTokens: tokens.output,
    cacheCreationInputTokens: tokens.cacheWrite,
    cacheReadInputTokens: tokens.cacheRead,
    costUsd: t.costUsd + reduce.costUsd,
    cacheReadShare: format.cacheReadShare(tokens),
  };
}

/** R-B7: the reduce's answer (the batch's result) as text, with what it read and cost. */
function reduceResult(reduce: NonNullable<BatchReportData["reduce"]>): HTMLElement {
  const answer =
    reduce.text !== null && reduce.text !== ""
      ? h("pre", { class: "reduce-answer" }, reduce.text)
      : h("p", {}, reduce.error === null ? "not finished: a resume runs it" : "");
  return h(
    "div",
    { class: "reduce", data: { reduceStatus: reduce.status } },
    h(
      "p",
      { class: "muted" },
      `${reduce.status} · over ${reduce.items} item${reduce.items === 1 ? "" : "s"} · ${format.count(reduce.turns)} turn${reduce.turns === 1 ? "" : "s"} · ${format.count(reduce.tokens.cacheRead)} read from the cache · ${format.cost(reduce.costUsd)}`,
    ),
    reduce.error === null
      ? null
      : h("p", { class: "error" }, `${reduce.error.code}: ${reduce.error.message}`),
    answer,
    h("details", {}, h("summary", {}, "reduce prompt"), h("pre", {}, reduce.prompt)),
  );
}

export function renderBatch(root: HTMLElement, data: BatchReportData): void {
  const byId = new Map(data.items.map((item) => [item.id, item]));
  const batchPage = h("div", { class: "batch" });
  const itemView = h("div", { class: "item-view" });
  const route = () => {
    const id = new URLSearchParams(location.hash.slice(1)).get("item");
    const item = id === null ? undefined : byId.get(id);
    batchPage.hidden = item !== undefined;
    itemView.hidden = item === undefined;
    if (item) itemPage(itemView, item);
    else replace(itemView);
    window.scrollTo(0, 0);
  };

  const search = h("input", {
    attrs: { type: "search", placeholder: "filter: item, answer or error", "aria-label": "filter items" },
  });
  const status = h(
    "select",
    { attrs: { "aria-label": "status" } },
    ...["all", "succeeded", "failed", "pending"].map((value) => h("option", { attrs: { value } }, value)),
  );
  const shown = h("div", { class: "shown" });
  const labelPrefix = sharedDirectory(data.items.map((item) => item.label));
  const structured = data.items.some((item) => item.structuredOutput !== null);
  const table = new VirtualTable<BatchItemRow>(itemColumns(labelPrefix, structured), {
    minWidth: "76rem",
    rowKey: (row) => row.id,
    onRowClick: (row) => {
      location.hash = itemHref(row.id);
    },
  });
  const applyFilter = () => {
    const text = search.value.trim().toLowerCase();
    const wanted = status.value;
    const rows = data.items.filter(
      (item) =>
        (wanted === "all" || item.status === wanted) &&
        (text === "" ||
          item.label.toLowerCase().includes(text) ||
          item.answer.toLowerCase().includes(text) ||
          item.id.toLowerCase().includes(text) ||
          `${item.error?.code ?? ""} ${item.error?.message ?? ""}`.toLowerCase().includes(text)),
    );
    table.setRows(rows);
    const t = totalsOf(rows);
    replace(
      shown,
      `${rows.length} of ${data.items.length} items · ${format.cost(t.costUsd)} · ${format.percent(t.cacheReadShare)} read from the cache`,
    );
    shown.dataset.rows = String(rows.length);
  };
  search.addEventListener("input", applyFilter);
  status.addEventListener("change", applyFilter);
  const filterByCode = (code: string) => {
    status.value = "failed";
    search.value = code;
    applyFilter();
    table.element.scrollIntoView();
  };

  replace(
    batchPage,
    h(
      "header",
      {},
      h("h1", {}, `Batch ${data.batchId}`),
      h("p", { class: "muted" }, `${data.model ?? "model ?"} · report generated ${data.generatedAt}`),
      data.prompt ? h("details", {}, h("summary", {}, "prompt"), h("pre", {}, data.prompt)) : null,
    ),
    data.reduce === null ? null : section("Result (reduce)", reduceResult(data.reduce)),
    section("Totals", totalsFigures(data.items, data.reduce, data.wallMs)),
    section("Cost and cache reads per item", costChart(data.items)),
    section(
      "Concurrency over time",
      concurrencyChart(data),
      data.pauses.length === 0
        ? null
        : h(
            "ul",
            { class: "events" },
            ...data.pauses.map((pause) =>
              h(
                "li",
                { data: { event: "pause" } },
                `429: every worker paused ${format.duration(pause.until - pause.at)} at ${format.clock(pause.at)}`,
              ),
            ),
          ),
    ),
    section("Failures by error", failureGroups(data.items, filterByCode)),
    section("Items", h("div", { class: "controls" }, search, status, shown), table.element),
  );
  replace(root, batchPage, itemView);
  applyFilter();
  window.addEventListener("hashchange", route);
  route();
}
