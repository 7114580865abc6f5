// A rating's history as a small inline SVG chart: the rating after each rated race as a line, its
// uncertainty (± the deviation) as a band around it. It is drawn at the width it is given (and
// again when that changes), so its labels stay the same readable size on a phone and a desktop.

const SVG = "http://www.w3.org/2000/svg";
const PAD = { left: 46, right: 12, top: 12, bottom: 26 }; // room for the axes' labels, in CSS pixels

/** An SVG element: `attrs` as attributes (null and undefined left out), `text` as its text. */
function s(tag, attrs = {}, ...children) {
  const element = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === null || value === undefined) continue;
    if (name === "text") element.textContent = value;
    else element.setAttribute(name, String(value));
  }
  for (const child of children.flat(Infinity)) if (child) element.append(child);
  return element;
}

/** Round values from `low` to `high`, about `count` of them: `{ values, step }`. */
export function ticks(low, high, count) {
  const raw = Math.max(high - low, 1) / Math.max(1, count);
  const magnitude = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 2.5, 5, 10].map((m) => m * magnitude).find((m) => m >= raw - 1e-9);
  const values = [];
  for (let value = Math.ceil(low / step) * step; value <= high + 1e-9; value += step) values.push(Math.round(value));
  return { values, step };
}

/** The y range: every rating and band, widened to whole steps with a little room above and below. */
function range(points) {
  const lows = points.map((p) => p.rating - (p.deviation ?? 0));
  const highs = points.map((p) => p.rating + (p.deviation ?? 0));
  let low = Math.min(...lows);
  let high = Math.max(...highs);
  if (high - low < 40) { // a flat line: give it room, centred
    low -= 20;
    high += 20;
  }
  const { step } = ticks(low, high, 4);
  return [Math.floor(low / step) * step, Math.ceil(high / step) * step];
}

/** Which race numbers get a label on the x axis: the first, the last and evenly between, as room allows. */
function labelled(count, width) {
  const most = Math.max(2, Math.floor(width / 56));
  if (count <= most) return [...Array(count).keys()];
  const step = Math.ceil((count - 1) / (most - 1));
  const shown = [];
  for (let index = 0; index < count - 1; index += step) shown.push(index);
  if (count - 1 - shown[shown.length - 1] < step / 2) shown.pop(); // the last label needs its room
  return [...shown, count - 1];
}

function draw(svg, points, width, height) {
  const [low, high] = range(points);
  const plotWidth = width - PAD.left - PAD.right;
  const plotHeight = height - PAD.top - PAD.bottom;
  const x = (index) => PAD.left + (points.length === 1 ? plotWidth / 2 : (index * plotWidth) / (points.length - 1));
  const y = (value) => PAD.top + ((high - value) / (high - low)) * plotHeight;
  const banded = points.map((p, index) => ({ ...p, index })).filter((p) => p.deviation != null);
  const band = banded.length > 1 ? [
    ...banded.map((p) => `${x(p.index)},${y(p.rating + p.deviation)}`),
    ...banded.reverse().map((p) => `${x(p.index)},${y(p.rating - p.deviation)}`),
  ].join(" ") : null;
  svg.setAttribute("viewBox", `0 0 ${width} ${height}`);
  svg.setAttribute("width", width);
  svg.setAttribute("height", height);
  svg.replaceChildren(
    s("g", { class: "grid" }, ticks(low, high, Math.max(2, Math.floor(plotHeight / 40))).values.map((value) => [
      s("line", { x1: PAD.left, x2: width - PAD.right, y1: y(value), y2: y(value) }),
      s("text", { x: PAD.left - 6, y: y(value), "text-anchor": "end", "dominant-baseline": "middle", text: value }),
    ])),
    s("g", { class: "x-axis" }, labelled(points.length, plotWidth).map((index) =>
      s("text", { x: x(index), y: height - 8, "text-anchor": "middle", text: points[index].number }))),
    band ? s("polygon", { class: "band", points: band }) : null,
    s("polyline", { class: "line", points: points.map((p, index) => `${x(index)},${y(p.rating)}`).join(" ") }),
    s("g", { class: "dots" }, points.map((p, index) => s("circle", {
      cx: x(index), cy: y(p.rating), r: index === points.length - 1 ? 5 : 3.5,
      class: p.tournament ? "tournament" : null, "data-rating": p.rating, "data-race-number": p.number,
    }, s("title", { text: p.label })))),
  );
}

/**
 * A chart of `points`, oldest first: `{ number, rating, deviation, label, tournament }` each
 * (`number`: the race's number on the x axis; `deviation` null: no band there). `summary` is what
 * a screen reader hears for the whole chart. Returns the element; it draws itself once in the page.
 */
export function ratingChart(points, summary) {
  const svg = s("svg", { role: "img", "aria-label": summary, class: "rating-chart", focusable: "false" });
  const element = document.createElement("div");
  element.className = "chart";
  element.append(svg);
  let drawn = 0;
  const observer = new ResizeObserver(() => {
    const width = Math.floor(element.clientWidth);
    if (width <= 0 || width === drawn || !element.isConnected) return;
    drawn = width;
    draw(svg, points, width, Math.round(Math.min(260, Math.max(170, width * 0.42))));
  });
  observer.observe(element);
  return element;
}
