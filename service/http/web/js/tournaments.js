// Tournaments of duplicate play: every entrant plays the same secret deals in the same order. The
// Tournaments page makes one and lists them (GET /tournaments, by status); a tournament's page
// (#/tournament/<id>) enters it, deals the player's next deal and shows the standings live from
// GET /tournaments/{id}/stream. While a tournament runs its games are private to their players:
// the pages show figures only, and link the games for replay once it has finished. A tournament
// game's table carries a strip with the deal's number, the time left and the next deal.

import { api, ApiError } from "./api.js";
import { duration, fill, h, plural, say, when } from "./dom.js";
import { followTournament } from "./live.js";
import { botMark, currentPlayer, playerLink } from "./player.js";
import { ordinal } from "./races.js";
import { allRulesets, rulesetFieldset, rulesetTitle } from "./rulesets.js";
import { go } from "./router.js";

const LOBBY_REFRESH_MS = 30000;
const STATUS_WORDS = { preparing: "Preparing", upcoming: "Upcoming", running: "Running", finished: "Finished" };
const FILTERS = [["", "All"], ["upcoming", "Upcoming"], ["running", "Running"], ["finished", "Finished"]];
const STARTS = [[0, "Now"], [5, "In 5 minutes"], [15, "In 15 minutes"], [30, "In 30 minutes"],
  [60, "In an hour"], [180, "In 3 hours"], [1440, "Tomorrow, this time"]];
const LENGTHS = [[10, "10 minutes"], [15, "15 minutes"], [30, "30 minutes"], [60, "1 hour"], [120, "2 hours"],
  [240, "4 hours"], [1440, "1 day"]];

/** "30 minutes", "1 hour", "1 h 30 min", "1 day" */
function lasting(minutes) {
  if (minutes === 1440) return "1 day";
  if (minutes < 60) return plural(minutes, "minute");
  return minutes % 60 ? `${Math.floor(minutes / 60)} h ${minutes % 60} min` : plural(minutes / 60, "hour");
}

const standingOf = (view, player) => (player ? view.standings.find((s) => s.player.id === player.id) : undefined);
const stateBadge = (status) => h("span", { class: `state ${status}`, "data-tournament-status": status }, STATUS_WORDS[status]);

/** Seconds until the tournament starts (before it) or ends (while it runs); null once finished. */
function secondsTo(view) {
  if (view.status === "finished") return null;
  const moment = view.status === "running" ? view.endsAt : view.startsAt;
  return Math.max(0, (Date.parse(moment) - Date.now()) / 1000);
}

function clockWords(view) {
  const seconds = secondsTo(view);
  if (seconds === null) return "";
  return view.status === "running" ? `${duration(seconds)} left` : `starts in ${duration(seconds)}`;
}

/** The player's game of the tournament in play, if any (their own games list names its deal source). */
async function gameInPlay(player, tournamentId) {
  const { data } = await api.games(player.id, { limit: 50, status: "playing" });
  return data.items.find((g) => g.deal?.source === "tournament" && g.deal.tournament === tournamentId)?.id ?? null;
}

/** Deal the player their next deal and open it; their game still in play (`playing`) opens instead. */
async function playNext(player, tournamentId, message, button, playing = false) {
  button.disabled = true;
  say(message, playing ? "Opening your game…" : "Dealing your next deal…");
  try {
    const game = playing ? await gameInPlay(player, tournamentId) : null;
    if (game) return go(`#/game/${game}`);
    const { data } = await api.nextTournamentGame(tournamentId, player.token);
    go(`#/game/${data.id}`);
  } catch (error) {
    const game = error instanceof ApiError && error.code === "tournament_game_in_play"
      ? await gameInPlay(player, tournamentId).catch(() => null) : null;
    if (game) return go(`#/game/${game}`);
    say(message, error.message, "error");
    button.disabled = false;
  }
}

// ---------------------------------------------------------------- the Tournaments page

/** The Tournaments page: make one, or pick one from the list. */
export async function mountTournaments(root) {
  const player = currentPlayer();
  const rulesets = await allRulesets();
  const list = tournamentList();
  fill(root, createForm(player, rulesets), list.element);
  await list.load();
  return list.stop;
}

function createForm(player, rulesets) {
  const message = h("p", { class: "status-line", role: "status", "aria-live": "polite" });
  const choose = (name, field, options, chosen) => h("select", { name, "data-field": field },
    options.map(([value, words]) => h("option", { value, selected: value === chosen }, words)));
  const form = h("form", { class: "card-panel new-tournament", "aria-labelledby": "new-tournament-title", onsubmit: create },
    h("h1", { id: "new-tournament-title" }, "Tournaments: the same deals for everyone"),
    h("p", {}, "Every entrant plays the same secret deals in the same order, each in a game of their own, within the "
      + "tournament's time. Most deals won ranks first, then less time on the won deals, then fewer moves. Its deals "
      + "are proven winnable before it starts, which takes a moment."),
    rulesetFieldset(rulesets),
    h("div", { class: "row fields" },
      h("label", {}, "Deals ", choose("deals", "deals", [2, 3, 4, 5, 6, 8, 10, 12].map((n) => [n, String(n)]), 3)),
      h("label", {}, "Starts ", choose("starts", "starts", STARTS, 0)),
      h("label", {}, "Lasts ", choose("minutes", "minutes", LENGTHS, 30)),
      h("label", { class: "check" }, h("input", { type: "checkbox", name: "rated", "data-field": "rated" }), " Rated")),
    h("div", { class: "row" }, player
      ? h("button", { type: "submit", class: "primary", "data-action": "create-tournament" }, "Create the tournament")
      : h("a", { class: "button primary", href: "#/" }, "Pick a name to make a tournament")),
    message);

  async function create(event) {
    event.preventDefault();
    const button = form.querySelector("[data-action=create-tournament]");
    const startsAt = new Date(Date.now() + Number(form.elements.starts.value) * 60000).toISOString();
    const body = { ruleset: form.elements.ruleset.value, deals: Number(form.elements.deals.value), startsAt,
      minutes: Number(form.elements.minutes.value), rated: form.elements.rated.checked };
    button.disabled = true;
    say(message, "Creating the tournament…");
    try {
      const { data } = await api.createTournament(player.token, body);
      go(`#/tournament/${data.id}`);
    } catch (error) {
      say(message, error.message, "error");
      button.disabled = false;
    }
  }
  return form;
}

function tournamentList() {
  const list = h("ul", { class: "games tournament-list", "data-tournaments": "" });
  const message = h("p", { class: "status-line", role: "status", "aria-live": "polite" });
  const more = h("button", { type: "button", hidden: true, "data-action": "more-tournaments", onclick: () => load(cursor) },
    "Older tournaments");
  const filter = h("fieldset", { class: "filter", onchange: () => load(null) }, h("legend", {}, "Show"),
    FILTERS.map(([value, words]) => h("label", {}, h("input", { type: "radio", name: "status", value, checked: !value }), words)));
  let cursor = null;
  let pages = 0;

  async function load(from) {
    const status = filter.querySelector("input:checked")?.value || undefined;
    more.disabled = true;
    try {
      const { data } = await api.tournaments({ status, cursor: from });
      if (!from) fill(list);
      pages = from ? pages + 1 : 1;
      for (const tournament of data.items) list.append(tournamentRow(tournament));
      cursor = data.next;
      more.hidden = !cursor;
      say(message, !from && data.items.length === 0 ? "No tournament here yet: make one above." : "");
    } catch (error) {
      say(message, error.message, "error");
    } finally {
      more.disabled = false;
    }
  }

  // the first page again now and then, unless the player has asked for older ones
  const timer = setInterval(() => { if (pages <= 1) load(null); }, LOBBY_REFRESH_MS);
  return {
    element: h("section", { class: "card-panel", "aria-labelledby": "tournaments-title" },
      h("h2", { id: "tournaments-title" }, "Tournaments"), filter, message, list, more),
    load: () => load(null),
    stop: () => clearInterval(timer),
  };
}

function tournamentRow(tournament) {
  const moment = { finished: `ended ${when(tournament.finishedAt || tournament.endsAt)}`, running: `started ${when(tournament.startsAt)}` }[
    tournament.status] || `starts ${when(tournament.startsAt)}`;
  return h("li", { "data-tournament": tournament.id, "data-status": tournament.status },
    h("span", { class: "what" },
      h("strong", {}, `${tournament.creator.name}'s tournament · ${rulesetTitle(tournament.ruleset.id)}`), botMark(tournament.creator),
      " ", stateBadge(tournament.status), tournament.rated ? h("span", { class: "state" }, "rated") : null, " ",
      h("span", { class: "small" }, `${plural(tournament.deals, "deal")} in ${lasting(tournament.minutes)} · ${moment} · `
        + `${plural(tournament.entrants, "entrant")}`)),
    h("span", { class: "links" }, h("a", { class: "button", href: `#/tournament/${tournament.id}` }, "Open")));
}

// ---------------------------------------------------------------- one tournament

/** One line on how the tournament stands for the player `me`. */
function summary(view, me) {
  const mine = standingOf(view, me);
  const left = view.deals - (mine?.dealsPlayed ?? 0);
  switch (view.status) {
    case "preparing":
      return `Its deals are being proven winnable. ${mine ? "You are in." : "Entries are open."}`;
    case "upcoming":
      return mine ? `You are in: dealing starts at ${when(view.startsAt)}.` : `Enter now: dealing starts at ${when(view.startsAt)}.`;
    case "running":
      if (!mine) return `Running: enter to play its ${plural(view.deals, "deal")} before the end.`;
      if (mine.playing) return `Your game of deal ${mine.dealsPlayed} is in play.`;
      return left > 0 ? `You have played ${mine.dealsPlayed} of ${view.deals} deals: ${plural(left, "deal")} to go.`
        : `You have played every deal. The places are final when the tournament ends.`;
    default: {
      const winners = view.standings.filter((s) => s.place === 1).map((s) => s.player.name);
      const placed = mine?.place ? ` You placed ${ordinal(mine.place)} of ${view.entrants}.` : "";
      return `Finished.${winners.length ? ` First: ${winners.join(" and ")}.` : ""}${placed}`;
    }
  }
}

/** An entrant's games, for replay (public once the tournament has finished). */
function replays(standing) {
  return h("span", { class: "replays small" }, "Replay deal ", standing.games.map((game, index) => [index ? ", " : "",
    h("a", { href: `#/replay/${game}`, title: `Replay ${standing.player.name}'s game of deal ${index + 1}` }, String(index + 1))]));
}

/** The standings: figures only, and each entrant's games (for replay) once the tournament has finished. */
export function tournamentStandings(view, me) {
  const done = view.status === "finished";
  const columns = [ // [heading, cell, class]
    ["Place", (s) => (s.place ? ordinal(s.place) : "–")],
    ["Player", (s) => [playerLink(s.player), me && s.player.id === me.id ? " (you)" : "", botMark(s.player),
      done && s.games?.length ? replays(s) : null]],
    ["Won", (s) => String(s.dealsWon), "number"],
    ["Played", (s) => [`${s.dealsPlayed}/${view.deals}`, s.playing ? h("span", { class: "playing" }, "playing") : null], "number"],
    ["Time", (s) => (s.dealsWon ? duration(s.wonSeconds) : "–"), "number wide"],
    ["Moves", (s) => String(s.moveCount), "number"],
  ];
  if (view.standings.length === 0) return h("p", { "data-empty": "" }, "Nobody has entered yet.");
  return h("table", { class: "standings tournament-standings", "data-status": view.status },
    h("thead", {}, h("tr", {}, columns.map(([title, , kind]) => h("th", { scope: "col", class: kind }, title)))),
    h("tbody", {}, view.standings.map((s) => h("tr", {
      "data-player": s.player.id, "data-place": s.place ?? "", "data-won": s.dealsWon, "data-played": s.dealsPlayed,
      "data-me": me && s.player.id === me.id ? "" : undefined, "data-verified": s.verified === false ? "no" : undefined,
    }, columns.map(([, cell, kind], index) => h(index === 1 ? "th" : "td", { scope: index === 1 ? "row" : undefined, class: kind },
      cell(s)))))));
}

/** The page of tournament `id`: enter, play each next deal, the standings live, the places at the end. */
export async function mountTournament(root, { id }) {
  let view = (await api.tournament(id)).data;
  const me = currentPlayer();
  const title = h("h1", { id: "tournament-title" });
  const facts = h("dl", { class: "facts" });
  const line = h("p", { class: "race-summary", role: "status", "aria-live": "polite", "data-summary": "" });
  const actions = h("div", { class: "row" });
  const message = h("p", { class: "status-line", role: "status", "aria-live": "polite" });
  const board = h("div", { class: "scroll" });
  const clock = h("dd", { "data-clock": "" });
  fill(root, h("section", { class: "card-panel tournament", "aria-labelledby": "tournament-title", "data-tournament": id },
    title, facts, line, actions, message, h("h2", {}, "Standings"), board,
    h("p", { class: "small" }, "Figures only: while the tournament runs, its games are private to their players "
      + "(the others may not have played those deals yet). Once it has finished, every game can be replayed.")));

  const fact = (term, value, attrs = {}) => h("div", {}, h("dt", {}, term), h("dd", attrs, value));

  function draw() {
    const mine = standingOf(view, me);
    document.title = `Tournament · ${STATUS_WORDS[view.status]} · Canfield`;
    fill(title, `Tournament · ${rulesetTitle(view.ruleset.id)} `, stateBadge(view.status));
    fill(facts,
      fact("By", [playerLink(view.creator), botMark(view.creator)]),
      fact("Deals", String(view.deals)),
      fact({ finished: "Played", running: "Started" }[view.status] || "Starts", when(view.startsAt)),
      fact("Length", lasting(view.minutes)),
      view.status === "finished" ? null : h("div", {}, h("dt", {}, view.status === "running" ? "Left" : "Starts in"), clock),
      fact("Rated", view.rated ? "yes" : "no"),
      fact("Entrants", String(view.entrants)));
    tick();
    say(line, summary(view, me));
    const buttons = [];
    if (!me && view.status !== "finished") buttons.push(h("a", { class: "button primary", href: "#/" }, "Pick a name to enter"));
    else if (me && !mine && view.status !== "finished") {
      buttons.push(h("button", { type: "button", class: "primary", "data-action": "enter-tournament", onclick: enter }, "Enter"));
    }
    if (mine && view.status === "running" && (mine.playing || mine.dealsPlayed < view.deals)) {
      buttons.push(h("button", { type: "button", class: "primary", "data-action": "next-deal",
        onclick: (event) => playNext(me, id, message, event.currentTarget, mine.playing) },
      mine.playing ? "Continue your game" : mine.dealsPlayed ? `Play your next deal (${mine.dealsPlayed + 1} of ${view.deals})`
        : "Play your first deal"));
    }
    buttons.push(h("a", { class: "button", href: "#/tournaments" }, "All tournaments"));
    fill(actions, buttons);
    fill(board, tournamentStandings(view, me));
  }

  function tick() {
    const seconds = secondsTo(view);
    if (seconds !== null) clock.textContent = duration(seconds);
  }

  async function enter(event) {
    event.currentTarget.disabled = true;
    try {
      view = (await api.enterTournament(id, me.token)).data;
      say(message, view.status === "running" ? "You are in: play your first deal." : "You are in.");
    } catch (error) {
      say(message, error.message, "error");
      if (error instanceof ApiError && error.status === 409) view = (await api.tournament(id)).data;
    }
    draw();
  }

  draw();
  const stop = view.status === "finished" ? null : followTournament(id, {
    onTournament: (next) => {
      view = next;
      draw();
    },
    onRefused: (error) => say(message, `Live standings stopped: ${error.message}`, "error"),
  });
  const timer = setInterval(tick, 1000);
  return () => {
    stop?.();
    clearInterval(timer);
  };
}

// ---------------------------------------------------------------- the strip beside a tournament game

/**
 * The tournament of a tournament game, above its table: the deal's number, the time left, the
 * player's figures and, once the game has ended, their next deal. `{ element, update(game), stop }`.
 */
export function tournamentStrip(deal) {
  const me = currentPlayer();
  const heading = h("p", { class: "race-head" });
  const figures = h("p", { class: "small", "data-figures": "" });
  const next = h("div", { class: "row next-deal" });
  const message = h("p", { class: "status-line", role: "status", "aria-live": "polite" });
  const element = h("section", { class: "tournament-strip", "aria-label": "Tournament", "data-tournament": deal.tournament },
    heading, figures, next, message);
  const clock = h("span", { "data-time-left": "" });
  let view = null;
  let game = null;

  function tick() {
    clock.textContent = view?.status === "running" ? ` · ${clockWords(view)}` : "";
  }

  function draw() {
    if (!view) return;
    element.dataset.status = view.status;
    fill(heading, h("strong", {}, "Tournament"), ` · deal ${deal.deal} of ${view.deals} · `, stateBadge(view.status),
      clock, " ", h("a", { href: `#/tournament/${deal.tournament}`, "data-action": "tournament-page" }, "Tournament page"));
    tick();
    const mine = standingOf(view, me);
    fill(figures, mine ? `You: ${mine.dealsWon} won of ${mine.dealsPlayed} played`
      + `${mine.place ? ` · ${ordinal(mine.place)} of ${view.entrants}${view.status === "finished" ? "" : " so far"}` : ""}.` : "");
    const ended = game && game.status !== "playing";
    const more = mine && deal.deal < view.deals && mine.dealsPlayed === deal.deal;
    fill(next, ended && view.status === "running" && more
      ? h("button", { type: "button", class: "primary", "data-action": "next-deal",
        onclick: (event) => playNext(me, deal.tournament, message, event.currentTarget) }, `Play your next deal (${deal.deal + 1} of ${view.deals})`)
      : ended && deal.deal === view.deals ? "That was the last deal of the tournament." : null);
  }

  const stop = followTournament(deal.tournament, {
    onTournament: (next) => {
      view = next;
      draw();
    },
    onRefused: (error) => fill(heading, h("span", { class: "problem" }, `Tournament unavailable: ${error.message}`)),
  });
  const timer = setInterval(tick, 1000);
  return {
    element,
    update(next) {
      game = next;
      draw();
    },
    stop() {
      stop();
      clearInterval(timer);
    },
  };
}
