// Races: players racing on one deal. The Races page creates one and lists the open ones; a race's
// page (#/race/<id>, the link to share) joins, starts and shows the standings live from
// GET /races/{id}/stream (figures only, never a card); a race game's table carries a compact strip
// of the same standings.

import { api, ApiError } from "./api.js";
import { dealTitle } from "./dealing.js";
import { duration, fill, h, plural, say, when } from "./dom.js";
import { followRace } from "./live.js";
import { botMark, currentPlayer, playerLink } from "./player.js";
import { allRulesets, rulesetFieldset, rulesetTitle } from "./rulesets.js";
import { go } from "./router.js";

const LOBBY_REFRESH_MS = 15000;
export const TIME_LIMITS = [[0, "No time limit"], [180, "3 minutes"], [300, "5 minutes"], [600, "10 minutes"],
  [900, "15 minutes"], [1800, "30 minutes"], [3600, "1 hour"]];
const STATUS_WORDS = { open: "Open", running: "Running", finished: "Finished", cancelled: "Cancelled" };
/** A race that will not change again: finished, or cancelled before its start. */
const over = (race) => race.status === "finished" || race.status === "cancelled";

/** "1st", "2nd", "3rd", "4th" ... */
export function ordinal(n) {
  const tens = n % 100;
  const suffix = tens >= 11 && tens <= 13 ? "th" : { 1: "st", 2: "nd", 3: "rd" }[n % 10] || "th";
  return `${n}${suffix}`;
}

const entrantOf = (race, player) => (player ? race.entrants.find((e) => e.player.id === player.id) : undefined);

/** Seconds of the race left (null without a time limit or before the start). */
function secondsLeft(race) {
  if (race.status !== "running" || !race.endsAt) return null;
  return Math.max(0, (Date.parse(race.endsAt) - Date.now()) / 1000);
}

function raceDeal(race) {
  if (race.deal.seed !== undefined || race.deal.pool !== undefined) return dealTitle(race.deal);
  if (race.deal.source === "secret") return "A secret deal, picked at random and never named";
  return race.deal.source === "pool" ? "A pool deal, named once the race is over" : "A deal named once the race is over";
}

/** One line on how the race stands now, for the player `me`. */
function summary(race, me) {
  const mine = entrantOf(race, me);
  if (race.status === "open") {
    const seats = race.maxEntrants - race.entrants.length;
    if (mine && race.creator.id === me.id) {
      return seats > 0 ? `Start the race now, or wait for more players (${plural(seats, "seat")} left).`
        : "Every seat is taken: start the race when you are ready.";
    }
    if (mine) return `You are in. Waiting for ${race.creator.name} to start the race.`;
    return seats > 0 ? `${plural(seats, "seat")} left: join to race.` : "Every seat is taken.";
  }
  if (race.status === "running") {
    return mine ? "The race is on: play your game; the standings follow every move." : "The race is on.";
  }
  if (race.status === "cancelled") return `Cancelled before it started${race.cancelledReason ? `: ${race.cancelledReason}` : ""}.`;
  const winners = race.entrants.filter((e) => e.place === 1).map((e) => e.player.name);
  const result = mine?.place ? `You placed ${ordinal(mine.place)} of ${race.entrants.length}.` : "";
  return `Finished. ${winners.length ? `First: ${winners.join(" and ")}.` : ""} ${result}`.trim();
}

/** The standings as a table; `compact` for the strip beside a game. */
export function standingsTable(race, me, { compact = false } = {}) {
  const started = race.status !== "open";
  const seconds = (entrant) => (entrant.finishedAt && race.startedAt
    ? duration((Date.parse(entrant.finishedAt) - Date.parse(race.startedAt)) / 1000) : "");
  const columns = [ // [heading, cell, class]
    ["Place", (e) => (e.place ? ordinal(e.place) : "–")],
    ["Player", (e) => playerCell(e, me, compact)],
    ["Game", (e) => (started ? gameCell(race, e, compact) : "joined")],
    ["Cards", (e) => `${e.cardsOnFoundations}/52`, "number"],
    ["Moves", (e) => String(e.moveCount), "number"],
    ...(compact ? [] : [["Time", seconds, "number wide"]]),
  ];
  return h("table", { class: `standings${compact ? " compact" : ""}`, "data-status": race.status },
    h("thead", {}, h("tr", {}, columns.map(([title, , kind]) => h("th", { scope: "col", class: kind }, title)))),
    h("tbody", {}, race.entrants.map((entrant) => h("tr", {
      "data-player": entrant.player.id, "data-place": entrant.place ?? "", "data-game-status": entrant.status ?? "",
      "data-moves": entrant.moveCount, "data-me": me && entrant.player.id === me.id ? "" : undefined,
    }, columns.map(([, cell, kind], index) => h(index === 1 ? "th" : "td", { scope: index === 1 ? "row" : undefined, class: kind },
      cell(entrant)))))));
}

function gameWords(entrant) {
  const words = { playing: "playing", won: "won", stalled: "stalled", resigned: "resigned" }[entrant.status] || "–";
  const notes = [];
  if (entrant.assisted) notes.push("assisted");
  if (entrant.verified === false) notes.push("log failed its check: no place");
  return notes.length ? `${words} (${notes.join(", ")})` : words;
}

/** The entrant's name, a link to their page (beside a game: the name only). */
function playerCell(entrant, me, compact) {
  return [compact ? entrant.player.name : playerLink(entrant.player), me && entrant.player.id === me.id ? " (you)" : "",
    botMark(entrant.player)];
}

/** How the entrant's game stands: a link to its replay once the race is over (its games are public then). */
function gameCell(race, entrant, compact) {
  const words = gameWords(entrant);
  if (compact || !entrant.game || !over(race)) return words;
  return h("a", { href: `#/replay/${entrant.game}`, title: `Replay ${entrant.player.name}'s game` }, words);
}

// ---------------------------------------------------------------- the Races page

/** The Races page: create a race, or pick an open one. */
export async function mountRaces(root) {
  const player = currentPlayer();
  const rulesets = await allRulesets();
  const message = h("p", { class: "status-line", role: "status", "aria-live": "polite" });
  const list = h("ul", { class: "games open-races", "data-open-races": "" });
  const listMessage = h("p", { class: "status-line", role: "status", "aria-live": "polite" });

  const form = h("form", { class: "card-panel new-race", "aria-labelledby": "new-race-title", onsubmit: create },
    h("h1", { id: "new-race-title" }, "Race on one deal"),
    h("p", {}, "Everyone who joins is dealt the same cards at the same moment. Wins rank by time, the rest by cards "
      + "on the foundations, then by fewer moves. The deal is picked at random when the race is created, so nobody knows it in advance."),
    rulesetFieldset(rulesets),
    h("div", { class: "row fields" },
      h("label", {}, "Players ", h("select", { name: "maxEntrants", "data-field": "max-entrants" },
        [2, 3, 4, 5, 6, 7, 8].map((n) => h("option", { value: n, selected: n === 2 }, `up to ${n}`)))),
      h("label", {}, "Time ", h("select", { name: "timeLimit", "data-field": "time-limit" },
        TIME_LIMITS.map(([seconds, words]) => h("option", { value: seconds, selected: seconds === 600 }, words))))),
    h("div", { class: "row" }, player
      ? h("button", { type: "submit", class: "primary", "data-action": "create-race" }, "Create the race")
      : h("a", { class: "button primary", href: "#/" }, "Pick a name to race")),
    message);

  async function create(event) {
    event.preventDefault();
    const button = form.querySelector("[data-action=create-race]");
    const seconds = Number(form.elements.timeLimit.value);
    const body = { ruleset: form.elements.ruleset.value, maxEntrants: Number(form.elements.maxEntrants.value) };
    if (seconds > 0) body.timeLimitSeconds = seconds;
    button.disabled = true;
    say(message, "Creating the race…");
    try {
      const { data } = await api.createRace(player.token, body);
      go(`#/race/${data.id}`);
    } catch (error) {
      say(message, error.message, "error");
      button.disabled = false;
    }
  }

  async function refresh() {
    try {
      const { data } = await api.openRaces();
      fill(list, data.items.map((race) => openRaceRow(race, player)));
      say(listMessage, data.items.length ? "" : "No open race right now: create one above and share its link.");
    } catch (error) {
      say(listMessage, error.message, "error");
    }
  }

  fill(root, form, h("section", { class: "card-panel", "aria-labelledby": "open-races-title" },
    h("h2", { id: "open-races-title" }, "Open races"),
    h("p", { class: "small" }, "Races waiting for players, newest first."),
    listMessage, list,
    h("button", { type: "button", "data-action": "refresh-races", onclick: refresh }, "Refresh")));
  await refresh();
  const timer = setInterval(refresh, LOBBY_REFRESH_MS);
  return () => clearInterval(timer);
}

function openRaceRow(race, player) {
  const seats = `${race.entrants}/${race.maxEntrants} players`;
  const limit = race.timeLimitSeconds ? `${duration(race.timeLimitSeconds)} limit` : "no time limit";
  return h("li", { "data-race": race.id },
    h("span", { class: "what" }, h("strong", {}, `${race.creator.name}'s race · ${rulesetTitle(race.ruleset.id)}`), botMark(race.creator), " ",
      h("span", { class: "small" }, `${seats} · ${limit} · ${when(race.createdAt)}`)),
    h("span", { class: "links" }, h("a", { class: "button", href: `#/race/${race.id}` },
      player && race.creator.id === player.id ? "Open" : "See and join")));
}

// ---------------------------------------------------------------- one race

/** The page of race `id`: share, join, start, the standings live, the places at the end. */
export async function mountRace(root, { id }) {
  let race = (await api.race(id)).data;
  const me = currentPlayer();
  const link = `${location.origin}${location.pathname}#/race/${id}`;
  const title = h("h1", { id: "race-title" });
  const facts = h("dl", { class: "facts" });
  const line = h("p", { class: "race-summary", role: "status", "aria-live": "polite", "data-summary": "" });
  const actions = h("div", { class: "row" });
  const message = h("p", { class: "status-line", role: "status", "aria-live": "polite" });
  const board = h("div", { class: "scroll" });
  const linkBox = h("input", { type: "text", readonly: true, value: link, id: "race-link", "data-share-link": "",
    onfocus: (event) => event.target.select() });
  const share = h("div", { class: "share" },
    h("label", { for: "race-link" }, "Share this link to invite players"),
    h("div", { class: "row" }, linkBox, h("button", { type: "button", "data-action": "copy-link", onclick: copy }, "Copy link")));

  fill(root, h("section", { class: "card-panel race", "aria-labelledby": "race-title", "data-race": id },
    title, facts, line, share, actions, message, h("h2", {}, "Standings"), board));

  async function copy() {
    try {
      await navigator.clipboard.writeText(link);
      say(message, "The link is copied: send it to the players you want to race.");
    } catch {
      linkBox.select();
      say(message, "Select the link and copy it (Ctrl+C), then send it to the players you want to race.");
    }
  }

  function fact(term, value, attrs = {}) {
    return h("div", {}, h("dt", {}, term), h("dd", attrs, value));
  }

  function drawClock() {
    const left = secondsLeft(race);
    const clock = facts.querySelector("[data-time-left]");
    if (clock && left !== null) clock.textContent = duration(left);
  }

  function draw() {
    const mine = entrantOf(race, me);
    document.title = `Race · ${STATUS_WORDS[race.status]} · Canfield`;
    fill(title, `Race · ${rulesetTitle(race.ruleset.id)} `, h("span", { class: `state ${race.status}`, "data-race-status": race.status },
      STATUS_WORDS[race.status]));
    fill(facts,
      fact("Deal", raceDeal(race)),
      fact("Players", `${race.entrants.length} of ${race.maxEntrants}`),
      fact("Time limit", race.timeLimitSeconds ? duration(race.timeLimitSeconds) : "none"),
      secondsLeft(race) !== null ? fact("Left", "", { "data-time-left": "" }) : null,
      race.startedAt ? fact("Started", when(race.startedAt)) : null);
    drawClock();
    say(line, summary(race, me));
    share.hidden = race.status !== "open";
    const buttons = [];
    if (race.status === "open" && me && !mine && race.entrants.length < race.maxEntrants) {
      buttons.push(h("button", { type: "button", class: "primary", "data-action": "join-race", onclick: join }, "Join the race"));
    }
    if (race.status === "open" && me && race.creator.id === me.id) {
      buttons.push(h("button", { type: "button", class: "primary", "data-action": "start-race", onclick: start },
        race.entrants.length > 1 ? `Start the race (${race.entrants.length} players)` : "Start alone (a time trial)"));
    }
    if (race.status !== "open" && mine?.game) {
      buttons.push(h("a", { class: "button primary", href: `#/game/${mine.game}`, "data-action": "my-game" },
        race.status === "running" ? "Play your game" : "Your game"));
    }
    if (!me) buttons.push(h("a", { class: "button primary", href: "#/" }, "Pick a name to race"));
    buttons.push(h("a", { class: "button", href: "#/races" }, "All races"));
    fill(actions, buttons);
    fill(board, standingsTable(race, me));
  }

  async function act(button, call) {
    button.disabled = true;
    try {
      const { data } = await call();
      accept(data);
      return data;
    } catch (error) {
      say(message, error.message, "error");
      if (error instanceof ApiError && error.status === 409) accept((await api.race(id)).data);
      button.disabled = false;
      return null;
    }
  }

  async function join(event) {
    if (await act(event.currentTarget, () => api.joinRace(id, me.token))) say(message, "You are in the race.");
  }

  function start(event) {
    return act(event.currentTarget, () => api.startRace(id, me.token)); // accept() opens the game
  }

  /** A newer race view (from a reply or the stream); the start of a race takes its entrants to their games. */
  function accept(next) {
    const justStarted = race.status === "open" && next.status !== "open";
    race = next;
    draw();
    const mine = entrantOf(race, me);
    if (justStarted && race.status === "running" && mine?.game) go(`#/game/${mine.game}`);
  }

  draw();
  const stop = over(race) ? null : followRace(id, {
    onRace: accept,
    onRefused: (error) => say(message, `Live standings stopped: ${error.message}`, "error"),
  });
  const timer = setInterval(drawClock, 1000);
  return () => {
    stop?.();
    clearInterval(timer);
  };
}

// ---------------------------------------------------------------- the strip beside a race game

/** The race of a race game, live above its table: `{ element, stop }`. */
export function raceStrip(raceId) {
  const me = currentPlayer();
  const heading = h("p", { class: "race-head" });
  const board = h("div", { class: "scroll" });
  const element = h("section", { class: "race-strip", "aria-label": "Race standings", "data-race": raceId }, heading, board);
  let race = null;

  function draw() {
    if (!race) return;
    const left = secondsLeft(race);
    fill(heading, h("strong", {}, "Race"), " · ",
      h("span", { "data-race-status": race.status }, STATUS_WORDS[race.status]),
      left !== null ? ` · ${duration(left)} left` : "",
      over(race) ? ` · ${summary(race, me)}` : "",
      " ", h("a", { href: `#/race/${raceId}`, "data-action": "race-page" }, "Race page"));
    element.dataset.status = race.status;
    fill(board, standingsTable(race, me, { compact: true }));
  }

  const stop = followRace(raceId, {
    onRace: (next) => {
      race = next;
      draw();
    },
    onRefused: (error) => fill(heading, h("span", { class: "problem" }, `Race standings unavailable: ${error.message}`)),
  });
  const timer = setInterval(() => { if (race?.endsAt && race.status === "running") draw(); }, 1000);
  return {
    element,
    stop() {
      stop();
      clearInterval(timer);
    },
  };
}
