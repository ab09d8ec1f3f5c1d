// A small horizontal bar chart as inline SVG (no chart library): one bar per candidate, labelled above the bar.
import { h } from "./dom.js";

const WIDTH = 360;
const ROW = 34;
const TOP = 6;
let counter = 0;

/**
 * rows: [{label, value, valueText, cloud, pick, bad}]; returns a <figure> holding the SVG and its caption.
 * The SVG is an image with a title and a text description listing every value (the table has them too).
 * legend: {clouds: {tencent: "腾讯云", ...}, pick: "推荐", bad: "超预算"}: the keys of what the chart shows.
 */
export function barChart(caption, rows, legend = null) {
  counter += 1;
  const id = `chart-${counter}`;
  const max = Math.max(...rows.map((r) => r.value), 1e-9);
  const height = TOP + rows.length * ROW + 4;
  const svg = h("svg:svg", {
    viewBox: `0 0 ${WIDTH} ${height}`, width: "100%", class: "bar-chart", role: "img",
    "aria-labelledby": `${id}-title ${id}-desc`, preserveAspectRatio: "xMinYMin meet",
  },
  h("svg:title", { id: `${id}-title` }, caption),
  h("svg:desc", { id: `${id}-desc` }, rows.map((r) => `${r.label}: ${r.valueText}`).join("; ")));
  rows.forEach((r, i) => {
    const y = TOP + i * ROW;
    const barWidth = Math.max(2, (r.value / max) * (WIDTH - 110));
    const classes = ["bar", r.cloud, r.pick ? "pick" : "", r.bad ? "bad" : ""].filter(Boolean).join(" ");
    svg.append(
      h("svg:text", { x: 0, y: y + 11, class: "bar-label" }, `${r.pick ? "★ " : ""}${r.label}`),
      h("svg:rect", { x: 0, y: y + 15, width: barWidth.toFixed(1), height: 11, rx: 2, class: classes }),
      h("svg:text", { x: (barWidth + 5).toFixed(1), y: y + 25, class: `bar-value${r.bad ? " bad" : ""}` }, r.valueText),
    );
  });
  return h("figure", { class: "chart" }, h("figcaption", {}, caption), svg, legend ? legendFor(rows, legend) : null);
}

function legendFor(rows, legend) {
  const item = (cls, text) => h("li", {}, h("span", { class: `swatch ${cls}`, "aria-hidden": "true" }), text);
  const clouds = [...new Set(rows.map((r) => r.cloud))].filter((c) => legend.clouds[c]);
  return h("ul", { class: "chart-legend small" },
    ...clouds.map((c) => item(c, legend.clouds[c])),
    rows.some((r) => r.pick) ? h("li", {}, `★ ${legend.pick}`) : null,
    rows.some((r) => r.bad) ? item("bad", legend.bad) : null);
}
