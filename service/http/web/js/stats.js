// The player's record per ruleset: played, won, streaks, best win.

import { api } from "./api.js";
import { duration, fill, h } from "./dom.js";
import { currentPlayer } from "./player.js";
import { rulesetTitle } from "./rulesets.js";

const percent = (rate) => (rate == null ? "–" : `${Math.round(rate * 1000) / 10} %`);

/** The stats page of this browser's player in `root`. */
export async function mountStats(root) {
  const player = currentPlayer();
  if (!player) {
    fill(root, h("section", { class: "card-panel" }, h("h1", {}, "Stats"),
      h("p", {}, h("a", { href: "#/" }, "Pick a name"), " and finish a game to see your record here.")));
    return;
  }
  const { data } = await api.stats(player.id);
  const columns = data.rulesets || [];
  const rows = [
    ["played", "Played", (r) => String(r.played)],
    ["won", "Won", (r) => String(r.won)],
    ["win-rate", "Win rate", (r) => percent(r.winRate)],
    ["streak", "Current streak", (r) => String(r.currentStreak)],
    ["best-streak", "Best streak", (r) => String(r.bestStreak)],
    ["fewest-moves", "Fewest moves", (r) => (r.fewestMoves == null ? "–" : String(r.fewestMoves))],
    ["fastest", "Fastest win", (r) => (r.fastestSeconds == null ? "–" : duration(r.fastestSeconds))],
    ["undos", "Undos", (r) => String(r.undos ?? 0)],
  ];
  fill(root, h("section", { class: "card-panel stats", "aria-labelledby": "stats-title" },
    h("h1", { id: "stats-title" }, `${player.name}'s record`),
    h("p", { class: "small" }, "Finished games only (won, stalled or resigned). Fewest moves and fastest win count unassisted wins."),
    data.races ? h("p", { "data-races": "" }, `Races: ${data.races.played} finished, ${data.races.won} won.`) : null,
    h("div", { class: "scroll" }, h("table", { class: "stats-table" },
      h("thead", {}, h("tr", {}, h("td", {}), columns.map((r) => h("th", { scope: "col" }, rulesetTitle(r.ruleset))))),
      h("tbody", {}, rows.map(([key, title, shown]) => h("tr", {},
        h("th", { scope: "row" }, title),
        columns.map((r) => h("td", { "data-ruleset": r.ruleset, "data-stat": key }, shown(r))))))))));
}
