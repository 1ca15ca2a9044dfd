import type { AgentView, MarkerView, SessionReportData } from "../report-data.js";
import { contextChart, timelineChart, tokensChart } from "./agent-charts.js";
import { figure, h, replace, section } from "./dom.js";
import * as format from "./format.js";
import { messagesList } from "./messages-view.js";

function agentFigures(agent: AgentView): HTMLElement {
  return h(
    "div",
    { class: "figures" },
    figure("status", agent.status, agent.status, "status"),
    figure("turns", String(agent.turns), agent.turns, "turns"),
    figure("requests", String(agent.requests.length), agent.requests.length, "requests"),
    figure(
      "input tokens",
      format.count(format.promptTokens(agent.tokens)),
      format.promptTokens(agent.tokens),
      "input",
    ),
    figure("output tokens", format.count(agent.tokens.output), agent.tokens.output, "output"),
    figure(
      "cache reads",
      format.percent(format.cacheReadShare(agent.tokens)),
      format.cacheReadShare(agent.tokens),
      "cacheReadShare",
    ),
    figure("cost", format.cost(agent.costUsd), agent.costUsd, "cost"),
    figure(
      "duration",
      format.duration(agent.createdAt && agent.endedAt ? agent.endedAt - agent.createdAt : null),
      (agent.endedAt ?? 0) - (agent.createdAt ?? 0),
      "duration",
    ),
    agent.firstRequestCacheShare === null
      ? null
      : figure(
          agent.parentId === null
            ? "first request read from the cache"
            : "first request read from the parent's cache",
          format.percent(agent.firstRequestCacheShare),
          agent.firstRequestCacheShare,
          "firstRequestCacheShare",
        ),
  );
}

function toolTable(agent: AgentView): HTMLElement {
  if (agent.tools.length === 0) return h("p", { class: "note" }, "No tool calls.");
  return h(
    "table",
    { class: "tools" },
    h(
      "thead",
      {},
      h(
        "tr",
        {},
        h("th", {}, "request"),
        h("th", {}, "tool"),
        h("th", {}, "status"),
        h("th", {}, "duration"),
        h("th", {}, "input"),
      ),
    ),
    h(
      "tbody",
      {},
      ...agent.tools.map((tool) =>
        h(
          "tr",
          { class: `status-${tool.status}`, data: { toolUseId: tool.id } },
          h("td", {}, String(tool.request + 1)),
          h("td", {}, tool.name),
          h("td", {}, tool.status),
          h(
            "td",
            {},
            format.duration(
              tool.startedAt !== null && tool.endedAt !== null ? tool.endedAt - tool.startedAt : null,
            ),
          ),
          h("td", { class: "summary" }, tool.summary),
        ),
      ),
    ),
  );
}

/** Retries, fallbacks, compactions and 429 pauses, in words (the charts draw them as lines). */
function eventsList(agent: AgentView): HTMLElement | null {
  const rows: HTMLElement[] = [];
  agent.requests.forEach((request, index) => {
    for (const retry of request.retries)
      rows.push(
        h(
          "li",
          { data: { event: "retry" } },
          `request ${index + 1}: retry ${retry.attempt} at ${format.clock(retry.at)} after: ${retry.error}`,
        ),
      );
    if (request.fallbackTo !== null)
      rows.push(
        h(
          "li",
          { data: { event: "fallback" } },
          `request ${index + 1}: ${request.model} stayed overloaded; fell back to ${request.fallbackTo}`,
        ),
      );
    if (request.outcome === "api_error")
      rows.push(
        h(
          "li",
          { data: { event: "api_error" } },
          `request ${index + 1}: API error: ${request.error ?? "unknown"}`,
        ),
      );
  });
  for (const marker of agent.markers)
    rows.push(
      h(
        "li",
        {
          class: "marker",
          data: {
            marker: marker.kind,
            afterRequest: marker.afterRequest,
            preTokens: marker.preTokens ?? "",
            postTokens: marker.postTokens ?? "",
          },
        },
        markerText(marker),
      ),
    );
  for (const pause of agent.rateLimits)
    rows.push(
      h(
        "li",
        { data: { event: "rate_limited" } },
        `429: the pool paused ${format.duration(pause.until - pause.at)} at ${format.clock(pause.at)}`,
      ),
    );
  return rows.length === 0 ? null : h("ul", { class: "events" }, ...rows);
}

/** Everything about one agent: figures, timeline, context, tokens and cost, tools, messages. */
/** A boundary in words: its pre → post tokens when it has them (a compaction), else its own text. */
function markerText(marker: MarkerView): string {
  const where = `${marker.kind}${marker.trigger === null ? "" : ` (${marker.trigger})`} after request ${marker.afterRequest}`;
  return marker.preTokens === null || marker.postTokens === null
    ? `${where}: ${marker.detail}`
    : `${where}: ${format.count(marker.preTokens)} → ${format.count(marker.postTokens)} tokens`;
}

export function agentDetail(
  agent: AgentView,
  children: readonly AgentView[],
  chartPrefix: string,
): HTMLElement {
  return h(
    "div",
    { class: "agent-detail", data: { agentId: agent.id } },
    h(
      "h2",
      {},
      agent.label,
      " ",
      h("span", { class: "muted" }, `${agent.querySource} · ${agent.id} · ${agent.model}`),
    ),
    agent.problem ? h("p", { class: "problem" }, agent.problem) : null,
    agentFigures(agent),
    section(
      "Timeline",
      agent.timed
        ? timelineChart(`${chartPrefix}timeline`, agent, children)
        : h(
            "p",
            { class: "note" },
            "This transcript has no timing records (written before they were recorded).",
          ),
      eventsList(agent),
    ),
    section("Context per request", contextChart(`${chartPrefix}context`, agent)),
    section("Tokens and cost per request", tokensChart(`${chartPrefix}tokens`, agent)),
    section("Tool calls", toolTable(agent)),
    section("Messages", messagesList(agent.messages, agent.inheritedMessages, agent.messagesCut)),
  );
}

function treeNode(
  agent: AgentView,
  all: readonly AgentView[],
  select: (agent: AgentView) => void,
): HTMLElement {
  const kids = all.filter((other) => other.parentId === agent.id && other !== agent);
  return h(
    "li",
    { data: { agentId: agent.id, querySource: agent.querySource } },
    h(
      "button",
      { class: "tree-node", onClick: () => select(agent) },
      h("span", { class: "tree-label" }, agent.label),
      h("span", { class: "muted" }, ` ${agent.querySource}`),
      h(
        "span",
        { class: "tree-figures" },
        ` · ${agent.turns} turns · ${format.count(format.promptTokens(agent.tokens))} in / ${format.count(agent.tokens.output)} out · ${format.cost(agent.costUsd)}`,
        agent.firstRequestCacheShare === null
          ? ""
          : ` · ${format.percent(agent.firstRequestCacheShare)} from the parent's cache`,
        agent.problem ? " · ⚠" : "",
      ),
    ),
    kids.length > 0 ? h("ul", {}, ...kids.map((kid) => treeNode(kid, all, select))) : null,
  );
}

export function renderSession(root: HTMLElement, data: SessionReportData): void {
  const main = data.agents[0];
  if (!main) {
    replace(root, h("p", { class: "problem" }, "The transcript holds no session."));
    return;
  }
  const whole = data.agents.reduce((sum, agent) => format.addTokens(sum, agent.tokens), format.NO_TOKENS);
  const wholeCost = data.agents.reduce((sum, agent) => sum + agent.costUsd, 0);
  const detail = h("div", { class: "detail" });
  const select = (agent: AgentView) => {
    for (const node of root.querySelectorAll(".tree-node.selected")) node.classList.remove("selected");
    root.querySelector(`li[data-agent-id="${CSS.escape(agent.id)}"] > .tree-node`)?.classList.add("selected");
    replace(
      detail,
      agentDetail(
        agent,
        data.agents.filter((other) => other.parentId === agent.id),
        "",
      ),
    );
  };
  replace(
    root,
    h(
      "header",
      {},
      h("h1", {}, data.title),
      h(
        "p",
        { class: "muted" },
        `${main.model} · started ${format.clock(main.createdAt)} · report generated ${data.generatedAt}`,
      ),
    ),
    section(
      "Whole run (main agent and every fork)",
      h(
        "div",
        { class: "figures" },
        figure("agents", String(data.agents.length), data.agents.length, "agents"),
        figure("input tokens", format.count(format.promptTokens(whole)), format.promptTokens(whole), "input"),
        figure("output tokens", format.count(whole.output), whole.output, "output"),
        figure(
          "cache reads",
          format.percent(format.cacheReadShare(whole)),
          format.cacheReadShare(whole),
          "cacheReadShare",
        ),
        figure("cache writes", format.count(whole.cacheWrite), whole.cacheWrite, "cacheWrite"),
        figure("cost", format.cost(wholeCost), wholeCost, "cost"),
      ),
    ),
    section("Fork tree", h("ul", { class: "fork-tree" }, treeNode(main, data.agents, select))),
    detail,
  );
  select(main);
}
