// Replay: a game step by step, a slider over its versions (GET /games/{id}/states/{version})
// beside its event list (GET /games/{id}/events).

import { api } from "./api.js";
import { cardName, cardShort, pileName } from "./cards.js";
import { dealTitle } from "./dealing.js";
import { fill, h, plural, when } from "./dom.js";
import { endingText, readOrExplain } from "./game.js";
import { currentPlayer } from "./player.js";
import { rulesetOf, rulesetTitle } from "./rulesets.js";
import { renderTable } from "./table.js";

const SLIDE_SETTLE_MS = 120; // read a state once the slider rests this long (not one read per pixel)
const AUTOPLAY_MS = 700;
const MOST_EVENTS = 20000;

/** One event in words (the event list and the caption under the table). */
export function eventText(event) {
  const d = event.data || {};
  switch (event.type) {
    case "GameDealt": return `Dealt: foundation base ${cardShort(d.baseCard)}, reserve top ${cardShort(d.reserveTop)}, `
      + `columns ${(d.tableau || []).map(cardShort).join(" ")}`;
    case "StockDrawn": return `Drew ${d.count}: waste top ${cardShort(d.wasteTop)}`;
    case "WasteRecycled": return `Turned ${d.count} waste cards back into the stock`;
    case "CardsMoved": {
      const more = (d.cards?.length || 1) - 1;
      return `${cardShort(d.card)}${more ? ` and ${more} more` : ""} from ${pileName(d.from)} to ${pileName(d.to)}`;
    }
    case "ReserveRefilled": return `The reserve's ${cardShort(d.card)} filled ${pileName(d.to)}`;
    case "MoveUndone": return `Undid: ${(d.reverted || []).map(eventText).join("; ").toLowerCase() || "the last move"}`;
    case "SolverHintUsed": return "Asked the solver (the game is assisted from here)";
    case "LessonCompleted": return "The lesson's goal was reached";
    case "GameWon": return "Won";
    case "GameStalled": return "Stalled";
    case "GameResigned": return "Resigned";
    case "GameAbandoned": return `Abandoned by the service: no move for ${plural(d.idleDays, "day")}`;
    default: return event.type;
  }
}

/** The replay of game `id` in `root`. */
export async function mountReplay(root, { id }) {
  const latest = await readOrExplain(root, id);
  if (!latest) return;
  const me = currentPlayer();
  const mine = Boolean(me && me.id === latest.player.id);
  if (latest.status === "playing" && !mine) {
    fill(root, h("section", { class: "card-panel" }, h("h1", {}, "This game is still being played"),
      h("p", {}, "Its replay opens when it ends. ", h("a", { href: `#/game/${id}` }, "Watch it live"), " meanwhile.")));
    return;
  }
  const ruleset = await rulesetOf(latest.ruleset);
  const events = await allEvents(id);
  const last = Math.max(1, ...events.map((event) => event.version), latest.version);
  const states = new Map([[latest.version, latest]]);
  let version = last;
  let shown = null;
  let settle = null;
  let autoplay = null;
  let stopped = false;

  const slider = h("input", { type: "range", id: "replay-version", min: 1, max: last, step: 1, value: version,
    "data-replay-slider": "" });
  const position = h("output", { for: "replay-version", class: "position" });
  const caption = h("p", { class: "caption-line", "aria-live": "polite" });
  const frame = h("div", { class: "table-frame" });
  const list = h("ol", { class: "events", "aria-label": "Events" }, events.map((event) => h("li", {},
    h("button", { type: "button", "data-version": event.version, onclick: () => goTo(event.version, true) },
      h("span", { class: "v" }, String(event.version)), " ", eventText(event)))));
  const play = h("button", { type: "button", "data-action": "autoplay", "aria-pressed": "false", onclick: toggleAutoplay }, "Play");
  const step = (delta, label, action) => h("button", { type: "button", "data-action": action, onclick: () => goTo(version + delta, true) }, label);

  fill(root, h("section", { class: "replay", "aria-labelledby": "replay-title", "data-game": id },
    h("header", { class: "game-head" },
      h("h1", { id: "replay-title" }, `Replay · ${rulesetTitle(latest.ruleset.id)} · ${dealTitle(latest.deal)}`),
      h("p", { class: "small" }, latest.status === "playing" ? "Still in play. " : `${endingText(latest)} `,
        `Started ${when(latest.startedAt)}. `, h("a", { href: `#/game/${id}` }, latest.status === "playing" ? "Back to the game" : "The final table"))),
    h("div", { class: "replay-body" },
      h("div", { class: "replay-main" },
        h("div", { class: "scrubber" },
          h("label", { for: "replay-version" }, "Version"), slider, position),
        h("div", { class: "tools", role: "group", "aria-label": "Replay steps" },
          h("button", { type: "button", "data-action": "first", onclick: () => goTo(1, true) }, "First"),
          step(-1, "◀ Back", "back"), play, step(1, "Forward ▶", "forward"),
          h("button", { type: "button", "data-action": "last", onclick: () => goTo(last, true) }, "Last")),
        caption, frame),
      h("div", { class: "replay-events" }, h("h2", {}, "Events"), list))));

  slider.addEventListener("input", () => goTo(Number(slider.value), false));
  document.title = `Replay: ${rulesetTitle(latest.ruleset.id)} · ${dealTitle(latest.deal)} · Canfield`;

  function eventAt(v) {
    return events.find((event) => event.version === v);
  }

  function goTo(v, now) {
    version = Math.min(last, Math.max(1, v));
    slider.value = String(version);
    const event = eventAt(version);
    const words = event ? eventText(event) : "";
    slider.setAttribute("aria-valuetext", `Version ${version} of ${last}${words ? `: ${words}` : ""}`);
    position.textContent = `${version} / ${last}`;
    for (const button of list.querySelectorAll("button[data-version]")) {
      const current = Number(button.dataset.version) === version;
      button.toggleAttribute("aria-current", current);
      if (current) button.scrollIntoView({ block: "nearest" });
    }
    clearTimeout(settle);
    if (states.has(version)) return showState(version);
    settle = setTimeout(() => load(version), now ? 0 : SLIDE_SETTLE_MS);
  }

  async function load(v) {
    try {
      const { data } = await api.stateAt(id, v);
      states.set(v, data);
      if (!stopped && v === version) showState(v);
    } catch (error) {
      if (!stopped && v === version) caption.textContent = error.message;
    }
  }

  function showState(v) {
    const view = states.get(v);
    if (shown === view) return;
    shown = view;
    const event = eventAt(v);
    caption.textContent = `After version ${v}${event ? ` (${eventText(event)})` : ""}: ${plural(view.moveCount, "move")}, `
      + `${view.table.stock.count} in the stock, ${view.table.reserve.count} in the reserve`
      + (view.table.waste.length ? `, waste top ${cardName(view.table.waste[view.table.waste.length - 1])}.` : ".");
    fill(frame, renderTable(view, { drawCount: ruleset.drawCount || 3, interactive: false }));
  }

  function toggleAutoplay() {
    if (autoplay) return stopAutoplay();
    if (version >= last) goTo(1, true);
    play.setAttribute("aria-pressed", "true");
    play.textContent = "Pause";
    autoplay = setInterval(() => {
      if (version >= last) return stopAutoplay();
      goTo(version + 1, true);
    }, AUTOPLAY_MS);
  }

  function stopAutoplay() {
    clearInterval(autoplay);
    autoplay = null;
    play.setAttribute("aria-pressed", "false");
    play.textContent = "Play";
  }

  goTo(version, true);
  return () => {
    stopped = true;
    stopAutoplay();
    clearTimeout(settle);
  };
}

/** Every event of game `id`, page by page. */
export async function allEvents(id) {
  const events = [];
  let cursor = null;
  do {
    const { data } = await api.events(id, cursor);
    events.push(...data.items);
    cursor = data.next;
  } while (cursor && events.length < MOST_EVENTS);
  return events;
}
