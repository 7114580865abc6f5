// The table of a game view, laid out as at seed 000: stock and waste, the four foundations with
// the deal's base rank, the reserve and four tableau columns. Pure rendering: what a click means
// is the caller's business (game.js plays, replay.js only looks).

import { h, plural } from "./dom.js";
import { SUITS, cardName, isRed, rankName, rankOf, rankShown, suitName, suitOf, suitSymbol } from "./cards.js";

/**
 * Build the table for `view` (a game view of the API).
 * options:
 *   drawCount     1 or 3 (how many waste cards lie fanned)
 *   interactive   false for a replay: no buttons at all
 *   selected      the selected card's code, or null
 *   targets       Set of piles ("tableau-2", "foundation") the selected card may go to
 *   hint          { card, to } of a hint to show, or null
 *   onCard(code, from), onPile(pile)   click handlers
 */
export function renderTable(view, options = {}) {
  const o = { drawCount: 3, interactive: true, selected: null, targets: new Set(), hint: null, ...options };
  const t = view.table;
  return h("div", {
    class: `table${o.interactive ? "" : " still"}`,
    "data-version": view.version,
    "data-status": view.status,
  },
  stockPile(t, o),
  wastePile(t, o),
  foundations(view, o),
  reservePile(t, o),
  tableau(t, o));
}

// ---------------------------------------------------------------- cards

/** A face-up card: a button when it can be picked up, otherwise a labelled picture. */
function faceCard(code, o, { from, pickable, extraLabel = "" }) {
  const classes = ["card", isRed(code) ? "red" : "black"];
  if (o.selected === code) classes.push("selected");
  if (o.hint?.card === code) classes.push("hinted");
  const face = [
    h("span", { class: "corner", "aria-hidden": "true" },
      h("span", { class: "rank", text: rankShown(rankOf(code)) }),
      h("span", { class: "suit", text: suitSymbol(suitOf(code)) })),
    h("span", { class: "pip", "aria-hidden": "true", text: suitSymbol(suitOf(code)) }),
  ];
  const label = cardName(code) + extraLabel;
  if (o.interactive && pickable) {
    return h("button", {
      type: "button", class: classes.join(" "), "data-card": code, "data-from": from, "data-key": `card:${code}`,
      "aria-label": label, "aria-pressed": String(o.selected === code),
      onclick: () => o.onCard?.(code, from),
    }, face);
  }
  return h("div", { class: classes.join(" "), "data-card": code, "data-from": from, role: "img", "aria-label": label }, face);
}

const back = () => h("div", { class: "card back", "aria-hidden": "true" });

function badge(count, what) {
  return h("span", { class: "count", "aria-hidden": "true", title: `${count} ${what}`, text: String(count) });
}

// ---------------------------------------------------------------- stock and waste

function stockPile(t, o) {
  const count = t.stock.count;
  const wasteCount = t.waste.length;
  let label, action, shown;
  if (count > 0) {
    action = o.drawCount === 1 ? "draw one card" : "draw three cards";
    label = `Stock, ${count} face down: ${action}`;
    shown = [back(), badge(count, "cards in the stock")];
  } else if (wasteCount > 0) {
    action = "recycle the waste";
    label = `Stock empty: recycle the waste into the stock`;
    shown = [h("span", { class: "slot-mark recycle", "aria-hidden": "true", text: "↻" })];
  } else {
    label = "Stock and waste are empty";
    shown = [h("span", { class: "slot-mark", "aria-hidden": "true" })];
  }
  const attrs = { class: `pile stock${count ? "" : " empty"}`, "data-pile": "stock", "data-count": count };
  const caption = h("span", { class: "caption", "aria-hidden": "true", text: count > 0 ? (o.drawCount === 1 ? "Draw" : "Draw 3") : (wasteCount ? "Recycle" : "Stock") });
  if (!o.interactive) return h("div", { ...attrs, role: "img", "aria-label": `Stock, ${count} cards` }, shown, caption);
  return h("button", { ...attrs, type: "button", "data-key": "pile:stock", "aria-label": label,
    disabled: !action, onclick: () => o.onPile?.(count > 0 ? "draw" : "recycle") }, shown, caption);
}

function wastePile(t, o) {
  const waste = t.waste;
  const fan = waste.slice(-(o.drawCount === 1 ? 1 : 3)); // the last packet lies fanned; the rest under it
  const top = waste[waste.length - 1];
  const label = waste.length
    ? `Waste, ${plural(waste.length, "card")} face up; top ${cardName(top)}`
    : "Waste, empty";
  return h("div", { class: "pile waste", role: "group", "aria-label": label, "data-count": waste.length },
    waste.length === 0 ? h("span", { class: "slot-mark", "aria-hidden": "true" }) : h("div", { class: "fan" },
      fan.map((code, index) => index === fan.length - 1
        ? faceCard(code, o, { from: "waste", pickable: true, extraLabel: ", waste top" })
        : faceCard(code, o, { from: "waste", pickable: false, extraLabel: ", covered in the waste" }))),
    h("span", { class: "caption", "aria-hidden": "true" }, waste.length ? `Waste · ${waste.length}` : "Waste"));
}

// ---------------------------------------------------------------- foundations

function foundations(view, o) {
  const base = view.baseRank;
  return h("div", { class: "foundations", role: "group", "aria-label": `Foundations, built up by suit from ${rankName(base)}` },
    h("p", { class: "base" }, "Foundation base ", h("strong", { "data-base-rank": base, text: rankShown(base) })),
    h("div", { class: "slots" }, SUITS.map((suit) => foundation(view.table.foundations[suit] || [], suit, base, o))));
}

function foundation(cards, suit, base, o) {
  const top = cards[cards.length - 1];
  const target = o.targets.has("foundation") && o.selected && suitOf(o.selected) === suit;
  const hinted = o.hint?.to === "foundation" && o.hint.card && suitOf(o.hint.card) === suit;
  const classes = ["pile", "foundation", isRed(`x${suit}`) ? "red" : "black"];
  if (target) classes.push("legal");
  if (hinted) classes.push("hint-target");
  const shown = top
    ? faceCard(top, { ...o, interactive: false }, { from: "foundation" })
    : h("span", { class: "slot-mark ghost", "aria-hidden": "true" }, rankShown(base), h("br"), suitSymbol(suit));
  const what = top
    ? `${suitName(suit)} foundation, ${plural(cards.length, "card")}, top ${cardName(top)}`
    : `${suitName(suit)} foundation, empty: starts with the ${cardName(base + suit)}`;
  const attrs = { class: classes.join(" "), "data-pile": "foundation", "data-suit": suit, "data-count": cards.length,
    "data-top": top || "" };
  const complete = cards.length === 13 ? h("span", { class: "done", "aria-hidden": "true", text: "✓" }) : null;
  if (!o.interactive) return h("div", { ...attrs, role: "img", "aria-label": what }, shown, complete);
  const picked = o.selected && top === o.selected;
  return h("button", {
    ...attrs, type: "button", "data-key": `pile:foundation-${suit}`,
    "data-card": top || undefined, "aria-pressed": top ? String(Boolean(picked)) : undefined,
    "aria-label": capitalise(what) + (target ? ", a legal destination" : ""),
    onclick: () => o.onPile?.("foundation", suit),
  }, shown, complete);
}

// ---------------------------------------------------------------- reserve and tableau

function reservePile(t, o) {
  const { count, top } = t.reserve;
  const label = count ? `Reserve, ${plural(count, "card")}; top ${cardName(top)}` : "Reserve, empty";
  return h("div", { class: "pile reserve", role: "group", "aria-label": label, "data-count": count },
    count > 1 ? h("div", { class: "under", "aria-hidden": "true" }, back()) : null,
    top ? faceCard(top, o, { from: "reserve", pickable: true, extraLabel: ", reserve top" })
      : h("span", { class: "slot-mark", "aria-hidden": "true" }),
    count ? badge(count, "cards in the reserve") : null,
    h("span", { class: "caption", "aria-hidden": "true" }, "Reserve"));
}

function tableau(t, o) {
  return h("div", { class: "tableau" }, t.tableau.map((cards, index) => column(cards, index + 1, o)));
}

function column(cards, number, o) {
  const pile = `tableau-${number}`;
  const target = o.targets.has(pile);
  const hinted = o.hint?.to === pile;
  const classes = ["column"];
  if (target) classes.push("legal");
  if (hinted) classes.push("hint-target");
  const end = cards[cards.length - 1];
  const what = cards.length ? `Column ${number}, ${plural(cards.length, "card")}, ends with ${cardName(end)}`
    : `Column ${number}, empty`;
  const head = o.interactive
    ? h("button", { type: "button", class: "column-head", "data-pile": pile, "data-key": `pile:${pile}`,
      "aria-label": what + (target ? ", a legal destination" : ""), onclick: () => o.onPile?.(pile) }, String(number))
    : h("div", { class: "column-head", "aria-hidden": "true" }, String(number));
  const list = h("ol", { class: "cards", "aria-label": `Column ${number}` },
    cards.length === 0 ? h("li", { class: "empty-slot", "aria-hidden": "true" }, h("span", { class: "slot-mark" })) : null,
    cards.map((code) => h("li", {}, faceCard(code, o, { from: pile, pickable: true }))));
  const body = h("div", { class: "column-body", onclick: o.interactive ? (event) => {
    if (event.target === event.currentTarget || event.target.closest(".empty-slot")) o.onPile?.(pile);
  } : undefined }, list);
  return h("div", { class: classes.join(" "), "data-pile": pile, "data-count": cards.length }, head, body);
}

const capitalise = (text) => text.charAt(0).toUpperCase() + text.slice(1);
