// The daily deal: the same deal for everyone on a UTC date, and its leaderboard.

import { api } from "./api.js";
import { startGame } from "./dealing.js";
import { duration, fill, h, when } from "./dom.js";
import { botMark, currentPlayer, playerLink } from "./player.js";
import { rulesetTitle } from "./rulesets.js";
import { go } from "./router.js";

const DAY_MS = 24 * 3600 * 1000;

function shiftDay(date, days) {
  return new Date(Date.parse(`${date}T00:00:00Z`) + days * DAY_MS).toISOString().slice(0, 10);
}

/**
 * The player's game of the daily deal of `date`, dealt during that date (their one game of it), or
 * null: their games are listed newest first, so the walk stops at the first one started before it.
 */
async function dailyGameOf(player, date) {
  const dayStart = `${date}T00:00:00`;
  let cursor;
  for (;;) {
    const { data } = await api.games(player.id, { limit: 100, cursor });
    for (const game of data.items) {
      if (game.startedAt < dayStart) return null;
      if (game.deal.source === "daily" && game.deal.date === date && !game.deal.practice) return game.id;
    }
    if (!data.next) return null;
    cursor = data.next;
  }
}

/** The daily page for `date` (today when left out) in `root`. */
export async function mountDaily(root, { date }) {
  const [{ data: daily }, { data: today }] = await Promise.all([
    api.daily(date || "today"),
    date ? api.daily("today") : Promise.resolve({ data: null }),
  ]);
  const todays = today ? today.date : daily.date;
  const isToday = daily.date === todays;
  const player = currentPlayer();
  const message = h("p", { class: "status-line", role: "status", "aria-live": "polite" });
  const board = h("div", { class: "board" }, h("p", {}, "Loading the leaderboard…"));
  // One game per player while the date is on: the button opens the player's game once they have one.
  const mine = player && isToday ? dailyGameOf(player, daily.date).catch(() => null) : Promise.resolve(null);
  const playButton = player ? h("button", { type: "button", class: "primary", "data-action": "play-daily",
    onclick: async () => {
      const game = await mine;
      if (game) return go(`#/game/${game}`);
      return startGame(daily.ruleset.id, { source: "daily", date: daily.date }, message, playButton);
    } },
  isToday ? "Play today's deal" : `Play the deal of ${daily.date}`) : null;
  mine.then((game) => { if (game && playButton) playButton.textContent = "Continue your game of today's deal"; });

  fill(root, h("section", { class: "card-panel daily", "aria-labelledby": "daily-title", "data-date": daily.date },
    h("h1", { id: "daily-title" }, isToday ? "Today's daily deal" : "Daily deal", " ",
      h("span", { class: "date" }, daily.date)),
    h("p", {}, `${rulesetTitle(daily.ruleset.id)} rules (v${daily.ruleset.version}). One deal for everyone on this UTC date`,
      daily.verified === false ? "." : ", proved winnable by the solver before it was served.",
      ` ${daily.plays ?? 0} games started, ${daily.wins ?? 0} won.`),
    h("p", { class: "small" }, "One game per player while the date is on: it is the one that is ranked, and playing "
      + "again opens it. Once the date is over the deal may be played as practice. Every move counts, an undo and the "
      + "move it took back too; a game that used the solver hint is never ranked."),
    h("div", { class: "row" },
      playButton || h("a", { class: "button primary", href: "#/" }, "Pick a name to play"),
      h("a", { class: "button", href: `#/daily/${shiftDay(daily.date, -1)}`, "data-action": "previous-day" }, "← Previous day"),
      isToday ? null : h("a", { class: "button", href: `#/daily/${shiftDay(daily.date, 1)}`, "data-action": "next-day" }, "Next day →")),
    message,
    h("h2", {}, "Leaderboard"),
    board));

  try {
    const { data } = await api.leaderboard(daily.date);
    fill(board, leaderboard(data.items, player, data.closed));
  } catch (error) {
    fill(board, h("p", { class: "problem" }, error.message));
  }
}

/** The board; others' games can be replayed once the date is over (until then they answer only to their players). */
function leaderboard(entries, player, closed) {
  if (entries.length === 0) return h("p", { "data-empty": "" }, "Nobody is on this board yet.");
  return h("table", { class: "leaderboard" },
    h("thead", {}, h("tr", {}, ["Place", "Player", "Result", "Moves", "Time", ""].map((title) => h("th", { scope: "col" }, title)))),
    h("tbody", {}, entries.map((entry) => {
      const me = player && entry.player.id === player.id;
      const result = entry.status || (entry.finishedAt ? "won" : "in play");
      return h("tr", { "data-player": entry.player.id, "data-me": me ? "" : undefined },
        h("td", {}, entry.rank ?? "–"),
        h("th", { scope: "row" }, playerLink(entry.player), me ? " (you)" : "", botMark(entry.player)),
        h("td", {}, result + (entry.practice ? " (practice)" : "") + (entry.assisted ? " (assisted)" : "")),
        h("td", {}, String(entry.moveCount ?? "")),
        h("td", { title: when(entry.finishedAt) }, entry.seconds != null ? duration(entry.seconds) : ""),
        h("td", {}, entry.game && (closed || me) ? h("a", { href: `#/replay/${entry.game}` }, "Replay") : ""));
    })));
}
