import type { AgentView, RequestView } from "../report-data.js";
import { type Annotations, COLORS, chartBox } from "./charts.js";
import * as format from "./format.js";

/** The requests the context chart plots: those with a reply (their usage is the context sent). */
function contextPoints(agent: AgentView): { x: number; y: number | null }[] {
  return agent.requests.map((request, index) => ({
    x: index + 1,
    y: request.tokens ? format.promptTokens(request.tokens) : null,
  }));
}

/**
 * Context size per request against the auto-compact and blocking lines (R-C7); a compaction is a
 * dashed line between the last request before it and the first after it.
 */
export function contextChart(name: string, agent: AgentView): HTMLElement {
  const points = contextPoints(agent);
  const xs = [0.5, Math.max(1, points.length) + 0.5];
  const limit = (value: number) => xs.map((x) => ({ x, y: value }));
  // Each compaction as a drop at its boundary: the count before (over the line) → after.
  const drops = agent.markers.flatMap((marker) =>
    marker.preTokens === null || marker.postTokens === null
      ? []
      : [
          { x: marker.afterRequest + 0.5, y: marker.preTokens },
          { x: marker.afterRequest + 0.5, y: marker.postTokens },
          { x: marker.afterRequest + 0.5, y: null },
        ],
  );
  const highest = Math.max(0, ...points.map((point) => point.y ?? 0), ...drops.map((point) => point.y ?? 0));
  // A 1M window would flatten a 5k context to the axis: then the lines stay above the chart.
  const above = agent.limits !== null && highest > 0 && agent.limits.autoCompact > highest * 4;
  const beyond = above ? " (above the chart)" : "";
  const annotations: Annotations = {
    lines: agent.markers.map((marker) => ({
      x: marker.afterRequest + 0.5,
      color: COLORS.marker,
      label: marker.kind === "compact_boundary" ? `compact (${marker.trigger ?? "?"})` : marker.kind,
    })),
  };
  return chartBox(name, {
    type: "line",
    data: {
      datasets: [
        {
          label: "context (input + cache write + cache read)",
          data: points,
          borderColor: COLORS.context,
          backgroundColor: COLORS.context,
          spanGaps: false,
        },
        {
          label: "compaction: before → after",
          data: drops,
          borderColor: COLORS.marker,
          backgroundColor: COLORS.marker,
          pointStyle: "triangle",
          spanGaps: false,
        },
        ...(agent.limits
          ? [
              {
                label: `auto-compact line ${format.count(agent.limits.autoCompact)}${beyond}`,
                data: limit(agent.limits.autoCompact),
                borderColor: COLORS.autoCompact,
                borderDash: [6, 4],
                pointRadius: 0,
              },
              {
                label: `blocking limit ${format.count(agent.limits.blockingLimit)}${beyond}`,
                data: limit(agent.limits.blockingLimit),
                borderColor: COLORS.blocking,
                borderDash: [2, 3],
                pointRadius: 0,
              },
            ]
          : []),
      ],
    },
    options: {
      parsing: false,
      scales: {
        x: {
          type: "linear",
          min: xs[0],
          max: xs[1],
          title: { display: true, text: "request" },
          ticks: { precision: 0 },
        },
        y: {
          beginAtZero: true,
          title: { display: true, text: "tokens" },
          ...(above ? { max: Math.ceil(highest * 1.3) } : {}),
        },
      },
      plugins: {
        forkloopAnnotations: annotations,
      } as never,
    },
  });
}

/** Input, cache-write, cache-read and output tokens per request (stacked), cost on the right. */
export function tokensChart(name: string, agent: AgentView): HTMLElement {
  const labels = agent.requests.map((_, index) => String(index + 1));
  const series = (pick: (request: RequestView) => number) => agent.requests.map((request) => pick(request));
  return chartBox(name, {
    type: "bar",
    data: {
      labels,
      datasets: [
        {
          label: "input",
          data: series((r) => r.tokens?.input ?? 0),
          backgroundColor: COLORS.input,
          stack: "t",
        },
        {
          label: "cache write",
          data: series((r) => r.tokens?.cacheWrite ?? 0),
          backgroundColor: COLORS.cacheWrite,
          stack: "t",
        },
        {
          label: "cache read",
          data: series((r) => r.tokens?.cacheRead ?? 0),
          backgroundColor: COLORS.cacheRead,
          stack: "t",
        },
        {
          label: "output",
          data: series((r) => r.tokens?.output ?? 0),
          backgroundColor: COLORS.output,
          stack: "t",
        },
        {
          type: "line",
          label: "cost (USD)",
          data: series((r) => r.costUsd),
          borderColor: "#333",
          backgroundColor: "#333",
          yAxisID: "cost",
        } as never,
      ],
    },
    options: {
      scales: {
        x: { stacked: true, title: { display: true, text: "request" } },
        y: { stacked: true, beginAtZero: true, title: { display: true, text: "tokens" } },
        cost: {
          position: "right",
          beginAtZero: true,
          grid: { drawOnChartArea: false },
          title: { display: true, text: "USD" },
        },
      },
    },
  });
}

/** The narrowest a timeline bar is drawn, in pixels, however short the span. */
const MIN_BAR_PX = 3;

interface Bar {
  readonly x: [number, number];
  readonly y: string;
  readonly what: string;
}

/** Lanes for bars that may overlap (parallel tool calls, parallel sub-agents): first free lane. */
function lanes<T extends { from: number; to: number }>(spans: readonly T[], prefix: string) {
  const ends: number[] = [];
  return spans.map((span) => {
    let lane = ends.findIndex((end) => end <= span.from);
    if (lane === -1) lane = ends.push(span.to) - 1;
    else ends[lane] = span.to;
    return { ...span, lane: `${prefix} ${lane + 1}` };
  });
}

/**
 * The agent's run over time (seconds from its start): each request (waiting for the first token,
 * then streaming; failed or abandoned ones apart), each tool call with its status, each child
 * agent's lifetime; retries, fallbacks and compactions as lines, 429 pauses as bands.
 */
export function timelineChart(name: string, agent: AgentView, children: readonly AgentView[]): HTMLElement {
  const origin =
    [agent.createdAt, ...agent.requests.map((request) => request.startedAt)].find((at) => at !== null) ?? 0;
  const s = (at: number) => (at - origin) / 1000;
  const waiting: Bar[] = [];
  const streaming: Bar[] = [];
  const failed: Bar[] = [];
  agent.requests.forEach((request, index) => {
    if (request.startedAt === null || request.endedAt === null) return;
    const what = `request ${index + 1} (${request.model}): ${request.outcome}`;
    if (request.outcome !== "reply") {
      failed.push({ x: [s(request.startedAt), s(request.endedAt)], y: "model", what });
      return;
    }
    const first = request.firstTokenAt ?? request.endedAt;
    waiting.push({ x: [s(request.startedAt), s(first)], y: "model", what: `${what}, time to first token` });
    streaming.push({ x: [s(first), s(request.endedAt)], y: "model", what: `${what}, streaming` });
  });
  const toolSpans = agent.tools
    .filter((tool) => tool.endedAt !== null)
    .map((tool) => ({ tool, from: s(tool.startedAt ?? tool.endedAt!), to: s(tool.endedAt!) }))
    .sort((a, b) => a.from - b.from);
  const toolBars = lanes(toolSpans, "tools").map(({ tool, from, to, lane }) => ({
    x: [from, to] as [number, number],
    y: lane,
    what: `${tool.name} ${tool.status} ${format.duration((to - from) * 1000)}`,
    status: tool.status,
  }));
  const childSpans = children
    .filter((child) => child.createdAt !== null && child.endedAt !== null)
    .map((child) => ({ child, from: s(child.createdAt!), to: s(child.endedAt!) }))
    .sort((a, b) => a.from - b.from);
  const childBars = lanes(childSpans, "sub-agents").map(({ child, from, to, lane }) => ({
    x: [from, to] as [number, number],
    y: lane,
    what: `${child.label} (${child.querySource}) ${format.duration((to - from) * 1000)}`,
  }));
  const annotations: Annotations = {
    lines: [
      ...agent.requests.flatMap((request) =>
        request.retries.map((retry) => ({
          x: s(retry.at),
          color: COLORS.error,
          label: `retry ${retry.attempt}`,
        })),
      ),
      ...agent.requests.flatMap((request) =>
        request.fallbackTo !== null && request.endedAt !== null
          ? [{ x: s(request.endedAt), color: COLORS.error, label: `fallback → ${request.fallbackTo}` }]
          : [],
      ),
      ...agent.markers.flatMap((marker) =>
        marker.at === null ? [] : [{ x: s(marker.at), color: COLORS.marker, label: "compact" }],
      ),
    ],
    bands: agent.rateLimits.map((pause) => ({ from: s(pause.at), to: s(pause.until), color: COLORS.pause })),
  };
  const rows = ["model", ...new Set(toolBars.map((bar) => bar.y)), ...new Set(childBars.map((bar) => bar.y))];
  const bar = (label: string, data: readonly Bar[], color: string) => ({
    label,
    data: data as never,
    backgroundColor: color,
    grouped: false,
    barPercentage: 0.8,
    categoryPercentage: 1,
    // A failed Read takes milliseconds of a minute's run: drawn to scale it would be invisible.
    minBarLength: MIN_BAR_PX,
  });
  return chartBox(
    name,
    {
      type: "bar",
      data: {
        labels: rows,
        datasets: [
          bar("waiting for first token", waiting, COLORS.waiting),
          bar("streaming", streaming, COLORS.streaming),
          bar("failed / abandoned request", failed, COLORS.error),
          bar(
            "tool ok",
            toolBars.filter((b) => b.status === "ok"),
            COLORS.ok,
          ),
          bar(
            "tool error",
            toolBars.filter((b) => b.status !== "ok"),
            COLORS.error,
          ),
          bar("sub-agent", childBars, COLORS.agent),
        ],
      },
      options: {
        indexAxis: "y",
        scales: {
          x: { type: "linear", beginAtZero: true, title: { display: true, text: "seconds from start" } },
          y: { type: "category" },
        },
        plugins: {
          tooltip: {
            callbacks: { label: (item: { raw: unknown }) => (item.raw as Bar).what },
          },
          forkloopAnnotations: annotations,
        } as never,
      },
    },
    Math.max(140, 60 + rows.length * 28),
  );
}
