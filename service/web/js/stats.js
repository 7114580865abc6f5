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
  const rows = data.rulesets || [];
  fill(root, h("section", { class: "card-panel stats", "aria-labelledby": "stats-title" },
    h("h1", { id: "stats-title" }, `${player.name}'s record`),
    h("p", { class: "small" }, "Finished games only (won, stalled or resigned). Fewest moves and fastest time count unassisted wins."),
    h("div", { class: "scroll" }, h("table", { class: "stats-table" },
      h("thead", {}, h("tr", {}, ["Rules", "Played", "Won", "Win rate", "Streak", "Best streak", "Fewest moves", "Fastest", "Undos"]
        .map((title) => h("th", { scope: "col" }, title)))),
      h("tbody", {}, rows.map((row) => h("tr", { "data-ruleset": row.ruleset },
        h("th", { scope: "row" }, rulesetTitle(row.ruleset)),
        h("td", { "data-played": "" }, String(row.played)),
        h("td", { "data-won": "" }, String(row.won)),
        h("td", {}, percent(row.winRate)),
        h("td", {}, String(row.currentStreak)),
        h("td", {}, String(row.bestStreak)),
        h("td", {}, row.fewestMoves ?? "–"),
        h("td", {}, row.fastestSeconds != null ? duration(row.fastestSeconds) : "–"),
        h("td", {}, String(row.undos ?? 0)))))))));
}
