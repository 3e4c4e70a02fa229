// Charts as plain SVG elements (no library): grouped bars and lines over
// days, with a text table for screen readers.
import { h, s } from "./dom.js";

const W = 640, H = 200, PAD_L = 40, PAD_B = 28, PAD_T = 10, PAD_R = 10;

function scaleMax(rows, series) {
  let m = 0;
  for (const r of rows) for (const k of series) m = Math.max(m, Number(r[k]) || 0);
  return m || 1;
}

function axes(svg, max, rows, x) {
  const y0 = H - PAD_B;
  svg.appendChild(s("line", { x1: PAD_L, y1: y0, x2: W - PAD_R, y2: y0, class: "axis" }));
  svg.appendChild(s("line", { x1: PAD_L, y1: PAD_T, x2: PAD_L, y2: y0, class: "axis" }));
  for (const f of [0, 0.5, 1]) {
    const y = y0 - f * (y0 - PAD_T);
    svg.appendChild(s("text", { x: PAD_L - 4, y: y + 4, class: "tick", "text-anchor": "end" }, String(Math.round(max * f))));
  }
  const step = Math.max(1, Math.ceil(rows.length / 8));
  rows.forEach((r, i) => {
    if (i % step) return;
    svg.appendChild(s("text", { x: x(i), y: H - 8, class: "tick", "text-anchor": "middle" }, String(r.day).slice(5)));
  });
}

function legend(series, labels) {
  return h("ul", { class: "legend" }, series.map((k, i) =>
    h("li", {}, h("span", { class: `swatch c${i}`, "aria-hidden": "true" }), labels[k] || k)));
}

function dataTable(rows, series, labels, caption) {
  return h("details", { class: "chart-data" }, h("summary", {}, "Data"),
    h("table", {}, h("caption", {}, caption),
      h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "day"), series.map((k) => h("th", { scope: "col" }, labels[k] || k)))),
      h("tbody", {}, rows.map((r) => h("tr", {}, h("td", {}, r.day), series.map((k) => h("td", {}, String(r[k] ?? 0))))))));
}

export function barChart(rows, series, labels, title) {
  const max = scaleMax(rows, series);
  const n = Math.max(rows.length, 1);
  const band = (W - PAD_L - PAD_R) / n;
  const x = (i) => PAD_L + band * (i + 0.5);
  const svg = s("svg", { viewBox: `0 0 ${W} ${H}`, role: "img", "aria-label": title, class: "chart" }, s("title", {}, title));
  axes(svg, max, rows, x);
  const bw = Math.max(1, (band * 0.8) / series.length);
  rows.forEach((r, i) => {
    series.forEach((k, j) => {
      const v = Number(r[k]) || 0;
      const hgt = (v / max) * (H - PAD_B - PAD_T);
      svg.appendChild(s("rect", {
        x: PAD_L + band * i + band * 0.1 + j * bw, y: H - PAD_B - hgt, width: bw, height: hgt, class: `bar c${j}`,
      }, s("title", {}, `${r.day} ${labels[k] || k}: ${v}`)));
    });
  });
  return h("figure", { class: "chart-fig" }, h("figcaption", {}, title), svg, legend(series, labels),
    dataTable(rows, series, labels, title));
}

export function lineChart(rows, series, labels, title) {
  const max = scaleMax(rows, series);
  const n = Math.max(rows.length - 1, 1);
  // One day: its points in the middle.
  const x = (i) => rows.length === 1 ? (PAD_L + W - PAD_R) / 2 : PAD_L + ((W - PAD_L - PAD_R) * i) / n;
  const y = (v) => H - PAD_B - (v / max) * (H - PAD_B - PAD_T);
  const svg = s("svg", { viewBox: `0 0 ${W} ${H}`, role: "img", "aria-label": title, class: "chart" }, s("title", {}, title));
  axes(svg, max, rows, x);
  series.forEach((k, j) => {
    const pts = rows.map((r, i) => `${x(i)},${y(Number(r[k]) || 0)}`).join(" ");
    svg.appendChild(s("polyline", { points: pts, class: `line c${j}` }));
    rows.forEach((r, i) => svg.appendChild(s("circle", { cx: x(i), cy: y(Number(r[k]) || 0), r: 3, class: `dot c${j}` },
      s("title", {}, `${r.day} ${labels[k] || k}: ${r[k] ?? 0}`))));
  });
  return h("figure", { class: "chart-fig" }, h("figcaption", {}, title), svg, legend(series, labels),
    dataTable(rows, series, labels, title));
}

// A small horizontal bar (heat parts of a segment).
export function meter(parts, total, label) {
  const width = 200, hgt = 14;
  const svg = s("svg", { viewBox: `0 0 ${width} ${hgt}`, role: "img", "aria-label": label, class: "meter" }, s("title", {}, label));
  let x = 0;
  const sum = Math.max(total, parts.reduce((a, p) => a + p.value, 0), 1e-9);
  parts.forEach((p, i) => {
    const w = (p.value / sum) * width;
    svg.appendChild(s("rect", { x, y: 0, width: Math.max(0, w), height: hgt, class: `bar c${i}` }, s("title", {}, `${p.label}: ${p.value.toFixed(2)}`)));
    x += w;
  });
  return svg;
}
