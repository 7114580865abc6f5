// The Play page: pick a name once, deal a game (random, seed or pool; the daily deal, lessons and
// races have pages of their own) and resume or replay any of your games.

import { api } from "./api.js";
import { dealTitle, startGame } from "./dealing.js";
import { fill, h, plural, say, when } from "./dom.js";
import { currentPlayer, register } from "./player.js";
import { allRulesets, rulesetFieldset, rulesetTitle } from "./rulesets.js";

/** The Play page in `root`. */
export async function mountLobby(root) {
  const player = currentPlayer();
  if (!player) return mountWelcome(root);
  const [rulesets, pools] = await Promise.all([allRulesets(), api.pools().then(({ data }) => data.pools).catch(() => [])]);
  const poolSize = Object.fromEntries(pools.map((pool) => [pool.ruleset.id, pool.size]));
  fill(root, dealForm(player, rulesets, poolSize), gamesList(player));
}

// ---------------------------------------------------------------- a name, once

function mountWelcome(root) {
  const input = h("input", { id: "player-name", name: "name", required: true, maxlength: 40, autocomplete: "nickname",
    spellcheck: "false" });
  const message = h("p", { class: "status-line", role: "status", "aria-live": "polite" });
  const form = h("form", { class: "card-panel register", onsubmit: async (event) => {
    event.preventDefault();
    const name = input.value.trim();
    if (!name) return say(message, "Type a name first.", "error");
    form.querySelector("button").disabled = true;
    try {
      await register(name); // the page redraws for the new player
    } catch (error) {
      say(message, error.message, "error");
      form.querySelector("button").disabled = false;
    }
  } },
  h("label", { for: "player-name" }, "Your name at the table"),
  h("div", { class: "row" }, input, h("button", { type: "submit", class: "primary", "data-action": "register" }, "Start playing")),
  h("p", { class: "small" }, "The server gives this browser a key for your games; it stays here, in this browser only."),
  message);
  fill(root, h("section", { class: "welcome", "aria-labelledby": "welcome-title" },
    h("h1", { id: "welcome-title" }, "Canfield Solitaire"),
    h("p", {}, "Foundations start on a dealt rank instead of an ace. Work through a thirteen-card reserve, "
      + "build four alternating-colour columns and cycle the stock. Pick a name to deal your first game."),
    form));
  input.focus();
}

// ---------------------------------------------------------------- dealing

const SOURCES = [
  { id: "random", label: "A random deal", describe: (ruleset, pool) => ruleset.defaultDeal === "pool" && pool
    ? "a deal from the solver-verified pool" : "a fresh shuffle, not checked for solvability" },
  { id: "seed", label: "A seed", input: { name: "seed", min: 0, max: 9007199254740991, placeholder: "e.g. 123" },
    describe: () => "the same cards on every server, for sharing" },
  { id: "pool", label: "A pool deal", input: { name: "pool", min: 1, placeholder: "number" }, needsPool: true,
    describe: (ruleset, pool) => pool ? `1 to ${pool}, each proved winnable by the solver` : "no verified pool for these rules" },
];

function dealForm(player, rulesets, poolSize) {
  const message = h("p", { class: "status-line", role: "status", "aria-live": "polite" });
  const sourceChoices = h("div", { class: "sources" });
  const form = h("form", { class: "card-panel deal", "aria-labelledby": "deal-title", onsubmit: submit },
    h("h1", { id: "deal-title" }, `Deal a game, ${player.name}`),
    rulesetFieldset(rulesets),
    h("fieldset", {}, h("legend", {}, "Cards"), sourceChoices),
    h("div", { class: "row" },
      h("button", { type: "submit", class: "primary", "data-action": "deal" }, "Deal"),
      h("a", { class: "button", href: "#/daily", "data-action": "daily" }, "Today's daily deal"),
      h("a", { class: "button", href: "#/lessons", "data-action": "lessons" }, "Lessons")),
    message);

  function chosenRuleset() {
    const id = form.elements.ruleset.value;
    return rulesets.find((ruleset) => ruleset.id === id) || rulesets[0];
  }

  function drawSources() {
    const ruleset = chosenRuleset();
    const pool = poolSize[ruleset.id];
    const previous = form.elements.source?.value || "random";
    const usable = (source) => !(source.needsPool && !pool);
    const choice = SOURCES.find((source) => source.id === previous && usable(source))?.id || "random";
    fill(sourceChoices, SOURCES.map((source) => h("div", { class: "choice" },
      h("label", {},
        h("input", { type: "radio", name: "source", value: source.id, disabled: !usable(source),
          checked: source.id === choice }),
        h("span", {}, h("strong", {}, source.label), " ", h("span", { class: "small" }, source.describe(ruleset, pool)))),
      source.input ? h("input", { name: source.input.name, type: "text", inputmode: "numeric",
        pattern: "[0-9]+", placeholder: source.input.placeholder, disabled: !usable(source),
        "aria-label": `${source.label.replace(/^An? /, "")} number`,
        oninput: () => { form.elements.source.value = source.id; } }) : null)));
  }

  async function submit(event) {
    event.preventDefault();
    const ruleset = chosenRuleset();
    const source = form.elements.source.value || "random";
    let deal = null;
    if (source !== "random") {
      const text = form.elements[source].value.trim();
      if (!/^[0-9]+$/.test(text)) {
        form.elements[source].focus();
        return say(message, `Type the ${source} as a whole number.`, "error");
      }
      deal = { source, [source]: Number(text) };
    }
    await startGame(ruleset.id, deal, message, form.querySelector("[data-action=deal]"));
  }

  form.addEventListener("change", (event) => { if (event.target.name === "ruleset") drawSources(); });
  drawSources();
  return form;
}

// ---------------------------------------------------------------- the player's games

function gamesList(player) {
  const list = h("ul", { class: "games", "data-games": "" });
  const more = h("button", { type: "button", hidden: true, onclick: () => load(cursor) }, "Older games");
  const message = h("p", { class: "status-line", role: "status", "aria-live": "polite" });
  let cursor = null;

  async function load(from) {
    more.disabled = true;
    try {
      const { data } = await api.games(player.id, { cursor: from });
      for (const game of data.items) list.append(gameRow(game));
      cursor = data.next;
      more.hidden = !cursor;
      if (!from && data.items.length === 0) say(message, "No games yet: deal one above.");
    } catch (error) {
      say(message, error.message, "error");
    } finally {
      more.disabled = false;
    }
  }

  load(null);
  return h("section", { class: "card-panel my-games", "aria-labelledby": "games-title" },
    h("h2", { id: "games-title" }, "Your games"), message, list, more);
}

function gameRow(game) {
  const rulesetId = game.ruleset.id;
  const playing = game.status === "playing";
  return h("li", { "data-game": game.id, "data-status": game.status },
    h("span", { class: "what" }, h("strong", {}, `${rulesetTitle(rulesetId)} · ${dealTitle(game.deal)}`),
      " ", h("span", { class: `state ${game.status}` }, playing ? "in play" : game.status),
      " ", h("span", { class: "small" }, `${plural(game.moveCount, "move")} · ${when(game.startedAt)}`)),
    h("span", { class: "links" },
      h("a", { class: "button", href: `#/game/${game.id}` }, playing ? "Resume" : "Open"),
      game.deal?.source === "race" ? h("a", { class: "button", href: `#/race/${game.deal.race}` }, "Race") : null,
      h("a", { class: "button", href: `#/replay/${game.id}` }, "Replay")));
}
