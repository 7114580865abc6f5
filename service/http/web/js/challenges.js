// Challenges as they concern this browser's player: a notice under the menu lists the pending
// challenges made to them (Accept, Decline) and by them (Cancel). The account stream
// (GET /players/me/stream) keeps it current: a `challenge` event for each one made to the player,
// accepted, declined, cancelled or expired (the page also drops one past its expiresAt itself);
// GET /challenges is read again whenever the stream (re)connects. Live notices must never take a
// stream from a game: refused (429: the player's streams are all in use), the notice reads
// GET /challenges every 30 s instead. Accepting answers with the race, and
// the page goes to the player's game in it; the challenger's page follows there when the
// acceptance comes in (on a game page it offers a link instead of leaving the game).

import { api, ApiError } from "./api.js";
import { duration, fill, h, say } from "./dom.js";
import { botMark } from "./player.js";
import { rulesetTitle } from "./rulesets.js";
import { go } from "./router.js";
import { readEvents } from "./sse.js";

const POLL_MS = 30000;
const TICK_MS = 15000;

const pending = new Map(); // challenge id -> { id, from, to, ruleset, rated, timeLimitSeconds, expiresAt }
const started = new Map(); // race id -> the player's game in it (raceStarted events)
const begun = new Map(); // race id of an accepted challenge of the player's -> { game, name }
let me = null;
let stopStream = null;
let timers = [];
let saidAt = 0;

const element = () => document.getElementById("challenges");
const list = h("ul", { class: "challenge-list" });
const message = h("p", { class: "challenge-message", role: "status", "aria-live": "polite" });

/** A challenge as the list (ChallengeView) or an account event (`challenge` event data) has it. */
function normal(challenge) {
  const { from, to, ruleset, rated, timeLimitSeconds, expiresAt } = challenge;
  return { id: challenge.id ?? challenge.challenge, from, to, ruleset, rated, timeLimitSeconds, expiresAt };
}

/** Watch `player`'s challenges (null: nobody signed in); replaces what was watched before. */
export function watchChallenges(player) {
  stopStream?.();
  stopStream = null;
  for (const timer of timers) clearInterval(timer);
  timers = [];
  pending.clear();
  started.clear();
  begun.clear();
  me = player;
  say(message, "");
  draw();
  if (!player) return;
  stopStream = readEvents("/players/me/stream", {
    token: () => me?.token,
    onOpen: refresh,
    onMessage: heard,
    onRefused: poll,
    onBusy: (status) => status === 429 && (poll(), true), // every stream of the player's is in use
  });
  timers.push(setInterval(() => {
    if (Date.now() - saidAt > TICK_MS) say(message, "");
    draw();
  }, TICK_MS));
}

/** A challenge the player has just made (the stream tells only its recipient of a new one). */
export function challengeMade(challenge) {
  if (!me) return;
  pending.set(challenge.id, normal(challenge));
  draw();
}

function poll() {
  stopStream?.();
  stopStream = null;
  refresh();
  timers.push(setInterval(refresh, POLL_MS));
}

async function refresh() {
  const asked = me;
  try {
    const { data } = await api.challenges(asked.token);
    if (asked !== me) return;
    const before = new Set(pending.keys());
    pending.clear();
    for (const challenge of data.items) pending.set(challenge.id, normal(challenge));
    draw();
    for (const id of before) if (!pending.has(id)) ended(id); // answered while nobody was listening
  } catch (error) {
    if (asked === me) tell(`Challenges could not be read: ${error.message}`);
  }
}

/** One account event: challenges come and go; a race of the player's starts. */
function heard({ event, data }) {
  const { data: fields } = JSON.parse(data);
  if (event === "raceStarted") started.set(fields.race, fields.game);
  if (event === "eventsDropped") refresh();
  if (event !== "challenge") return;
  if (fields.action === "created") pending.set(fields.challenge, normal(fields));
  else pending.delete(fields.challenge);
  if (fields.action === "declined" && fields.from.id === me.id) tell(`${fields.to.name} declined your challenge.`, "info");
  if (fields.action === "cancelled" && fields.to.id === me.id) tell(`${fields.from.name} withdrew their challenge.`, "info");
  if (fields.action === "expired" && fields.from.id === me.id) tell(`${fields.to.name} did not answer your challenge in time.`, "info");
  draw();
  if (fields.action === "accepted" && fields.from.id === me.id) raceBegan(fields.race, fields.to.name);
}

/** A challenge of the player's left the pending list without an event: see whether its race started. */
async function ended(id) {
  try { // the race of an accepted challenge has the challenge's id; its game is in the player's games
    const { data } = await api.games(me.id, { limit: 20, status: "playing" });
    const game = data.items.find((g) => g.deal?.source === "race" && g.deal.race === id);
    if (game) raceBegan(id, null, game.id);
  } catch {
    // the notice is a help only: the race still shows on the Races page and in the player's games
  }
}

/** The challenger's race began: go to its game, unless a game is on the screen (then offer a link). */
async function raceBegan(raceId, name, known) {
  let game = known || started.get(raceId);
  try {
    game ||= (await api.race(raceId)).data.entrants.find((e) => e.player.id === me.id)?.game;
  } catch (error) {
    tell(`Your challenge was accepted, but its race could not be read: ${error.message}`);
  }
  if (!game) return;
  if (location.hash.startsWith("#/game/")) {
    begun.set(raceId, { game, name });
    draw();
  } else {
    go(`#/game/${game}`);
  }
}

function tell(text, kind = "error") {
  say(message, text, kind);
  saidAt = Date.now();
}

function prune() {
  for (const [id, challenge] of pending) if (Date.parse(challenge.expiresAt) <= Date.now()) pending.delete(id);
  for (const [id, { game }] of begun) if (location.hash === `#/game/${game}`) begun.delete(id);
}

async function answer(challenge, button, call) {
  for (const other of button.parentElement.querySelectorAll("button")) other.disabled = true;
  try {
    const { data } = await call(challenge.id, me.token);
    pending.delete(challenge.id);
    draw();
    return data;
  } catch (error) {
    if (error instanceof ApiError && (error.status === 409 || error.status === 404)) pending.delete(challenge.id);
    tell(error.message);
    draw();
    return null;
  }
}

async function accept(challenge, event) {
  const race = await answer(challenge, event.currentTarget, api.acceptChallenge);
  if (!race) return;
  const mine = race.entrants.find((e) => e.player.id === me.id);
  go(mine?.game ? `#/game/${mine.game}` : `#/race/${race.id}`);
}

function terms(challenge) {
  const seconds = challenge.timeLimitSeconds;
  const limit = !seconds ? "no time limit" : seconds % 60 ? `${duration(seconds)} limit` : `${seconds / 60} min limit`;
  return `${rulesetTitle(challenge.ruleset)}, ${challenge.rated ? "rated" : "not rated"}, ${limit}`;
}

function minutesLeft(challenge) {
  const minutes = Math.max(1, Math.ceil((Date.parse(challenge.expiresAt) - Date.now()) / 60000));
  return minutes === 1 ? "1 minute" : `${minutes} minutes`;
}

function row(challenge) {
  const received = challenge.to.id === me.id;
  const other = received ? challenge.from : challenge.to;
  const who = h("a", { href: `#/player/${other.id}` }, other.name);
  return h("li", { "data-challenge": challenge.id, "data-direction": received ? "received" : "sent" },
    h("span", { class: "what" }, received
      ? [h("strong", {}, who), botMark(other), ` challenges you to a race (${terms(challenge)}). `,
        h("span", { class: "small" }, `${minutesLeft(challenge)} left to answer.`)]
      : ["You challenged ", h("strong", {}, who), ` (${terms(challenge)}). `,
        h("span", { class: "small" }, `Waiting for an answer: ${minutesLeft(challenge)} left.`)]),
    h("span", { class: "links" }, received
      ? [h("button", { type: "button", class: "primary", "data-action": "accept-challenge", onclick: (e) => accept(challenge, e) }, "Accept"),
        h("button", { type: "button", "data-action": "decline-challenge",
          onclick: (e) => answer(challenge, e.currentTarget, api.declineChallenge) }, "Decline")]
      : h("button", { type: "button", "data-action": "cancel-challenge",
        onclick: (e) => answer(challenge, e.currentTarget, api.cancelChallenge) }, "Cancel")));
}

function draw() {
  const box = element();
  if (!box) return;
  prune();
  const shown = me ? [...pending.values()].sort((a, b) => (a.to.id === me.id ? 0 : 1) - (b.to.id === me.id ? 0 : 1)) : [];
  fill(list, shown.map(row), [...begun].map(([raceId, { game, name }]) => h("li", { "data-race": raceId, "data-direction": "begun" },
    h("span", { class: "what" }, h("strong", {}, name || "Your challenge"), name ? " accepted your challenge: the race is on." : " was accepted: the race is on."),
    h("span", { class: "links" }, h("a", { class: "button primary", href: `#/game/${game}`, "data-action": "challenge-race",
      onclick: () => begun.delete(raceId) }, "Play the race")))));
  if (!box.contains(list)) fill(box, list, message);
  box.hidden = !me || (shown.length === 0 && begun.size === 0 && !message.textContent);
}

window.addEventListener("hashchange", draw);
