import {
  BarController,
  BarElement,
  CategoryScale,
  Chart,
  type ChartConfiguration,
  type ChartType,
  Filler,
  Legend,
  LinearScale,
  LineController,
  LineElement,
  type Plugin,
  PointElement,
  Tooltip,
} from "chart.js";
import { h } from "./dom.js";

// Only what the report draws: tree-shaking keeps the rest of Chart.js out of the page.
Chart.register(
  BarController,
  BarElement,
  CategoryScale,
  Filler,
  Legend,
  LinearScale,
  LineController,
  LineElement,
  PointElement,
  Tooltip,
);
Chart.defaults.animation = false;
Chart.defaults.font.family = "system-ui, sans-serif";
Chart.defaults.maintainAspectRatio = false;
// A series with nothing to draw (no failed requests, no compaction) stays out of the legend.
Chart.defaults.plugins.legend.labels.filter = (item, data) =>
  (data.datasets[item.datasetIndex ?? -1]?.data.length ?? 0) > 0;

/** Every chart on the page by name (`window.forkloopReport.charts`): what tests and users inspect. */
export const charts = new Map<string, Chart>();

export const COLORS = {
  input: "#8da0cb",
  cacheWrite: "#fc8d62",
  cacheRead: "#66c2a5",
  output: "#e78ac3",
  context: "#3366cc",
  autoCompact: "#e6a100",
  blocking: "#cc3333",
  ok: "#66c2a5",
  error: "#d7301f",
  waiting: "#c6d4ea",
  streaming: "#3366cc",
  agent: "#a6a6d8",
  marker: "#7b3294",
  pause: "rgba(215, 48, 31, 0.14)",
};

/** Vertical lines and shaded bands at x values of a linear x scale (compactions, retries, 429 pauses). */
export interface Annotations {
  readonly lines?: readonly { readonly x: number; readonly color: string; readonly label?: string }[];
  readonly bands?: readonly { readonly from: number; readonly to: number; readonly color: string }[];
}

const annotationPlugin: Plugin = {
  id: "forkloopAnnotations",
  beforeDatasetsDraw(chart, _args, options) {
    const { bands = [] } = options as Annotations;
    const { ctx, chartArea, scales } = chart;
    const x = scales.x;
    if (!x) return;
    ctx.save();
    for (const band of bands) {
      const from = Math.max(chartArea.left, x.getPixelForValue(band.from));
      const to = Math.min(chartArea.right, x.getPixelForValue(band.to));
      ctx.fillStyle = band.color;
      ctx.fillRect(from, chartArea.top, Math.max(1, to - from), chartArea.bottom - chartArea.top);
    }
    ctx.restore();
  },
  afterDatasetsDraw(chart, _args, options) {
    const { lines = [] } = options as Annotations;
    const { ctx, chartArea, scales } = chart;
    const x = scales.x;
    if (!x) return;
    ctx.save();
    ctx.setLineDash([5, 4]);
    ctx.lineWidth = 2;
    ctx.font = "11px system-ui, sans-serif";
    for (const line of lines) {
      const at = x.getPixelForValue(line.x);
      if (at < chartArea.left || at > chartArea.right) continue;
      ctx.strokeStyle = line.color;
      ctx.beginPath();
      ctx.moveTo(at, chartArea.top);
      ctx.lineTo(at, chartArea.bottom);
      ctx.stroke();
      if (line.label) {
        ctx.fillStyle = line.color;
        ctx.fillText(line.label, at + 4, chartArea.top + 12);
      }
    }
    ctx.restore();
  },
};
Chart.register(annotationPlugin);

/** A chart in a box of fixed height, registered under `name`. */
export function chartBox<T extends ChartType>(
  name: string,
  config: ChartConfiguration<T>,
  height = 260,
): HTMLElement {
  charts.get(name)?.destroy();
  const canvas = h("canvas", { attrs: { role: "img", "aria-label": name } });
  const box = h("div", { class: "chart", data: { chart: name } }, canvas);
  box.style.height = `${height}px`;
  // Chart.js measures its parent: create the chart once the box is in the document.
  queueMicrotask(() => {
    charts.set(name, new Chart(canvas, config as ChartConfiguration) as Chart);
  });
  return box;
}
