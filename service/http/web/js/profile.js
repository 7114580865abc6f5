// A player's page (#/player/<id>): who they are, their rating in each ruleset with a chart of its
// history, a challenge to a race of two (for a signed-in visitor), and on your own page whom you
// accept challenges from.

import { api } from "./api.js";
import { ratingChart } from "./chart.js";
import { challengeMade } from "./challenges.js";
import { fill, h, plural, say, when } from "./dom.js";
import { botMark, currentPlayer } from "./player.js";
import { ordinal, TIME_LIMITS } from "./races.js";
import { allRulesets, rulesetTitle } from "./rulesets.js";

const POLICIES = [["everyone", "Everyone"], ["humans", "People only (no bots)"], ["nobody", "Nobody"]];

/** The page of player `id` in `root`. */
export async function mountPlayer(root, { id }) {
  const me = currentPlayer();
  const [{ data: player }, { data: rated }] = await Promise.all([api.player(id), api.ratings(id)]);
  const mine = Boolean(me && me.id === player.id);
  document.title = `${player.name} · Canfield`;
  const ratings = rated.ratings || [];
  fill(root,
    h("section", { class: "card-panel profile", "aria-labelledby": "player-title", "data-player": player.id },
      h("h1", { id: "player-title" }, player.name, botMark(player), mine ? h("span", { class: "small" }, " (you)") : null),
      h("p", { class: "small" }, `Playing here since ${day(player.createdAt)}.`),
      me && !mine ? await challengeForm(me, player) : null,
      mine ? challengePolicy(me) : null,
      !me ? h("p", {}, h("a", { href: "#/" }, "Pick a name"), ` to challenge ${player.name} to a race.`) : null),
    h("section", { class: "card-panel ratings", "aria-labelledby": "ratings-title" },
      h("h2", { id: "ratings-title" }, "Ratings"),
      ratings.length ? ratingsTable(ratings) : h("p", { "data-no-ratings": "" },
        `${mine ? "You have" : `${player.name} has`} no rating yet: ratings come from rated races, rated challenges `
        + "and rated tournaments."),
      ratings.map((rating) => historyPanel(player, rating))));
}

function ratingsTable(ratings) {
  return h("div", { class: "scroll" }, h("table", { class: "ratings-table" },
    h("thead", {}, h("tr", {}, ["Rules", "Rating", "Rated races"].map((title, index) =>
      h("th", { scope: "col", class: index ? "number" : undefined }, title)))),
    h("tbody", {}, ratings.map((r) => h("tr", { "data-ruleset": r.ruleset, "data-rating": r.rating },
      h("th", { scope: "row" }, rulesetTitle(r.ruleset)),
      h("td", { class: "number" }, h("strong", {}, String(r.rating)), ` ± ${r.deviation}`, r.provisional
        ? h("span", { class: "badge", title: "still uncertain: a deviation above 400" }, "provisional") : null),
      h("td", { class: "number" }, String(r.races)))))));
}

/** "Dec 5, 2026" for an ISO timestamp, in the reader's words. */
const day = (iso) => new Date(iso).toLocaleDateString(undefined, { dateStyle: "medium" });

/** One ruleset's history: a chart, and the races behind it as a table for whoever prefers one. */
function historyPanel(player, rating) {
  const body = h("div", { class: "history-body" }, h("p", { class: "small" }, "Loading the history…"));
  const panel = h("section", { class: "history", "data-history": rating.ruleset, "aria-label": `${rulesetTitle(rating.ruleset)} rating history` },
    h("h3", {}, `${rulesetTitle(rating.ruleset)}: ${rating.rating}`, h("span", { class: "small" }, ` ± ${rating.deviation}`)),
    body);
  api.ratingHistory(player.id, rating.ruleset).then(({ data }) => {
    fill(body, historyChart(player, rating, data));
  }).catch((error) => fill(body, h("p", { class: "problem" }, error.message)));
  return panel;
}

function historyChart(player, rating, page) {
  const items = [...page.items].reverse(); // oldest first
  if (items.length === 0) return h("p", { class: "small" }, "No rated race yet.");
  const first = Math.max(1, rating.races - items.length + 1); // the number of the oldest race shown
  const points = [{ number: first - 1, rating: items[0].ratingBefore, deviation: null,
    label: `Before race ${first}: ${items[0].ratingBefore}` }];
  items.forEach((item, index) => points.push({
    number: first + index, rating: item.ratingAfter, deviation: item.deviationAfter, tournament: item.tournament,
    label: `${item.tournament ? "Tournament" : "Race"} ${first + index}, ${when(item.ratedAt)}: `
      + `${ordinal(item.place)} of ${item.entrants}, ${item.ratingBefore} → ${item.ratingAfter} ± ${item.deviationAfter}`,
  }));
  const last = items[items.length - 1];
  const summary = `${player.name}'s ${rulesetTitle(rating.ruleset)} rating over ${plural(items.length, "rated race")}: `
    + `from ${items[0].ratingBefore} to ${last.ratingAfter}, now ± ${last.deviationAfter}.`;
  return [
    h("p", { class: "legend small" }, h("span", { class: "swatch line" }), " rating after each rated race  ",
      h("span", { class: "swatch band" }), " ± its deviation (how uncertain it is)"),
    ratingChart(points, summary),
    h("p", { class: "small axis-note" }, `Rated races, oldest to newest${page.next ? ` (the last ${items.length})` : ""}, `
      + (day(items[0].ratedAt) === day(last.ratedAt) ? `on ${day(last.ratedAt)}.` : `${day(items[0].ratedAt)} to ${day(last.ratedAt)}.`)),
    h("details", {}, h("summary", {}, "The races behind it"), historyTable(items, first)),
  ];
}

/** The rated races behind a chart, newest first. */
function historyTable(items, first) {
  const rows = items.map((item, index) => h("tr", { "data-race": item.race },
    h("td", {}, String(first + index)),
    h("td", {}, when(item.ratedAt), item.tournament ? " (tournament)" : ""),
    h("td", {}, `${ordinal(item.place)} of ${item.entrants}`),
    h("td", {}, `${item.ratingAfter} ± ${item.deviationAfter}`),
    h("td", {}, signed(item.ratingAfter - item.ratingBefore))));
  return h("div", { class: "scroll" }, h("table", { class: "history-table" },
    h("thead", {}, h("tr", {}, ["#", "When", "Place", "Rating", "Change"].map((title) => h("th", { scope: "col" }, title)))),
    h("tbody", {}, rows.reverse())));
}

const signed = (n) => (n > 0 ? `+${n}` : n < 0 ? `−${-n}` : "±0");

// ---------------------------------------------------------------- challenging

async function challengeForm(me, player) {
  const rulesets = await allRulesets();
  const message = h("p", { class: "status-line", role: "status", "aria-live": "polite" });
  const form = h("form", { class: "challenge", "aria-labelledby": "challenge-title", onsubmit: send },
    h("h2", { id: "challenge-title" }, `Challenge ${player.name}`),
    h("p", { class: "small" }, `A race of two on a secret deal, starting the moment ${player.name} accepts `
      + "(they have 10 minutes to answer)."),
    h("div", { class: "row fields" },
      h("label", {}, "Rules ", h("select", { name: "ruleset", "data-field": "ruleset" },
        rulesets.map((ruleset, index) => h("option", { value: ruleset.id, selected: index === 0 }, rulesetTitle(ruleset.id))))),
      h("label", {}, "Time ", h("select", { name: "timeLimit", "data-field": "time-limit" },
        TIME_LIMITS.map(([seconds, words]) => h("option", { value: seconds, selected: seconds === 600 }, words)))),
      h("label", { class: "check" }, h("input", { type: "checkbox", name: "rated", "data-field": "rated" }), " Rated")),
    h("div", { class: "row" }, h("button", { type: "submit", class: "primary", "data-action": "challenge" },
      `Challenge ${player.name}`)),
    message);

  async function send(event) {
    event.preventDefault();
    const button = form.querySelector("[data-action=challenge]");
    const seconds = Number(form.elements.timeLimit.value);
    const body = { to: player.id, ruleset: form.elements.ruleset.value, rated: form.elements.rated.checked };
    if (seconds > 0) body.timeLimitSeconds = seconds;
    button.disabled = true;
    say(message, "Sending the challenge…");
    try {
      const { data } = await api.challenge(me.token, body);
      challengeMade(data);
      say(message, `Challenge sent: it waits for ${player.name} until ${new Date(data.expiresAt).toLocaleTimeString()}. `
        + "The race opens here once they accept.");
    } catch (error) {
      say(message, error.message, "error");
    } finally {
      button.disabled = false;
    }
  }
  return form;
}

/** Your own page: whom you accept challenges from (GET and PATCH /players/me). */
function challengePolicy(me) {
  const message = h("p", { class: "status-line", role: "status", "aria-live": "polite" });
  const select = h("select", { id: "challenge-policy", name: "policy", "data-field": "challenge-policy", disabled: true,
    onchange: async () => {
      select.disabled = true;
      try {
        await api.setChallengePolicy(me.token, select.value);
        say(message, "Saved.");
      } catch (error) {
        say(message, error.message, "error");
      } finally {
        select.disabled = false;
      }
    } }, POLICIES.map(([value, words]) => h("option", { value }, words)));
  api.me(me.token).then(({ data }) => {
    select.value = data.acceptChallengesFrom || "everyone";
    select.disabled = false;
  }).catch((error) => say(message, error.message, "error"));
  return h("div", { class: "policy" },
    h("div", { class: "row" }, h("label", { for: "challenge-policy" }, "Accept challenges from"), select), message);
}
