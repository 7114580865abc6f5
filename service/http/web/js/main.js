// The page's start: the routes, the player bar, the notice that says when the page waits for the
// server (a 429's or 503's Retry-After) and the one of the player's challenges.

import { mountAnalysis } from "./analysis.js";
import { API_VERSION, authenticateReads, onWait } from "./api.js";
import { watchChallenges } from "./challenges.js";
import { mountDaily } from "./daily.js";
import { ask, fill, h } from "./dom.js";
import { mountGame } from "./game.js";
import { mountLessons } from "./lessons.js";
import { mountLobby } from "./lobby.js";
import { currentPlayer, forget, onPlayerChange } from "./player.js";
import { mountPlayer } from "./profile.js";
import { mountRace, mountRaces } from "./races.js";
import { mountReplay } from "./replay.js";
import { route, show } from "./router.js";
import { mountStats } from "./stats.js";
import { mountTournament, mountTournaments } from "./tournaments.js";

const ID = "(?<id>[0-9a-fA-F-]{36})";
route(/^\/$/, mountLobby, "play");
route(new RegExp(`^/game/${ID}$`), mountGame, "play");
route(new RegExp(`^/replay/${ID}$`), mountReplay, "play");
route(new RegExp(`^/analysis/${ID}$`), mountAnalysis, "play");
route(/^\/daily(?:\/(?<date>\d{4}-\d{2}-\d{2}))?$/, mountDaily, "daily");
route(/^\/lessons$/, mountLessons, "lessons");
route(/^\/races$/, mountRaces, "races");
route(new RegExp(`^/race/${ID}$`), mountRace, "races");
route(/^\/stats$/, mountStats, "stats");
route(/^\/tournaments$/, mountTournaments, "tournaments");
route(new RegExp(`^/tournament/${ID}$`), mountTournament, "tournaments");
route(new RegExp(`^/player/${ID}$`), mountPlayer);

function showError(root, error) {
  const text = error?.status === 404 ? "Not found: " + error.message : error?.message || String(error);
  fill(root, h("section", { class: "card-panel" },
    h("h1", {}, "This page could not be shown"),
    h("p", { class: "problem", role: "alert" }, text),
    h("p", {}, h("a", { href: "#/" }, "Back to the Play page"))));
}

function drawWho(player) {
  const who = document.getElementById("who");
  if (!player) return fill(who);
  fill(who, h("a", { class: "name", "data-player": player.id, href: `#/player/${player.id}`, title: "Your page: ratings and challenges" },
    player.name),
    h("button", { type: "button", class: "link", "data-action": "switch-player", onclick: async () => {
      const answer = await ask({
        title: `Forget ${player.name} in this browser?`,
        text: "The key to this player's games is kept only in this browser. Without it, those games "
          + "can still be watched and replayed, but not played.",
        buttons: [{ label: "Keep", value: "" }, { label: `Forget ${player.name}`, value: "yes", primary: true }],
      });
      if (answer === "yes") {
        forget();
        location.hash = "#/";
      }
    } }, "Switch player"));
}

function drawNotice(seconds, reason) {
  const notice = document.getElementById("notice");
  notice.hidden = seconds === 0;
  if (seconds > 0) notice.textContent = `Waiting ${Math.ceil(seconds)} s: ${reason}.`;
}

// the footer's link: the document of the version this page speaks
document.getElementById("schema-link").href = `/schema/openapi.json?version=${API_VERSION}`;
authenticateReads(() => currentPlayer()?.token ?? null);
onWait(drawNotice);
onPlayerChange((player) => {
  drawWho(player);
  watchChallenges(player);
  show(undefined, showError);
});
drawWho(currentPlayer());
watchChallenges(currentPlayer());
window.addEventListener("hashchange", () => show(undefined, showError));
show(undefined, showError);
