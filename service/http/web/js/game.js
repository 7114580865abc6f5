// Playing one game: the table, selection and moves, hints, undo, resign, the clock, and the
// live stream that keeps every open page of the game in step.

import { api, ApiError } from "./api.js";
import { cardName, moveText, pileName, suitName } from "./cards.js";
import { dealTitle } from "./dealing.js";
import { ask, duration, fill, h, plural, say } from "./dom.js";
import { enableDrag } from "./drag.js";
import { lessonPanel } from "./lessons.js";
import { follow } from "./live.js";
import { botMark, currentPlayer } from "./player.js";
import { raceStrip } from "./races.js";
import { rulesetOf, rulesetTitle } from "./rulesets.js";
import { go, highlight } from "./router.js";
import { renderTable } from "./table.js";
import { tournamentStrip } from "./tournaments.js";

const MENU_OF_SOURCE = { daily: "daily", lesson: "lessons", race: "races", tournament: "tournaments" };

const ENDINGS = {
  won: "Won: all 52 cards are on the foundations.",
  stalled: "Stalled: a whole pass through the stock without a move, so this deal ends here.",
  resigned: "Resigned.",
};

export function endingText(view) {
  if (view.abandoned) {
    return `Abandoned: no move for ${plural(view.abandoned.idleDays, "day")}, so the service ended the game (played, not won).`;
  }
  return ENDINGS[view.status] || "";
}

/** Show game `id` in `root`; returns the function that takes it down again. */
export async function mountGame(root, { id }) {
  const me = currentPlayer();
  let view = await readOrExplain(root, id);
  if (!view) return;
  highlight(MENU_OF_SOURCE[view.deal?.source] || "play");
  const ruleset = await rulesetOf(view.ruleset);
  const drawCount = ruleset.drawCount || 3;
  const mine = Boolean(me && me.id === view.player.id);
  let legal = { version: 0, moves: [] };
  let legalLoading = 0;
  let selected = null; // a card code
  let hint = null; // { card, to }
  let queue = Promise.resolve(); // moves go out one after another, each at the version it saw
  let pending = 0;
  let stopped = false;

  // ------------------------------------------------------------ the frame around the table
  const title = h("h1", { id: "game-title" });
  const moves = h("dd", { "data-moves": "" });
  const clock = h("dd", { role: "timer", "aria-live": "off", "data-clock": "" });
  const badges = h("p", { class: "badges" });
  const ended = h("div", { class: "ended", role: "status", hidden: true });
  const status = h("p", { class: "status-line", role: "status", "aria-live": "polite", "aria-atomic": "true" });
  const frame = h("div", { class: "table-frame" });
  const tools = h("div", { class: "tools", role: "group", "aria-label": "Game actions" });
  const buttons = {
    undo: h("button", { type: "button", "data-action": "undo", onclick: () => play({ type: "undo" }), "aria-keyshortcuts": "U" }, "Undo"),
    hint: h("button", { type: "button", "data-action": "hint", onclick: showHint, "aria-keyshortcuts": "H" }, "Hint"),
    solver: h("button", { type: "button", "data-action": "solver", onclick: solverHint }, "Solver hint…"),
    resign: h("button", { type: "button", "data-action": "resign", onclick: resign }, "Resign…"),
  };
  // once the game has ended: ask for its analysis, then show it (analysis.js)
  const analyse = h("button", { type: "button", class: "primary", "data-action": "analyse", hidden: true, onclick: askAnalysis },
    "Analyse");
  const replayLink = h("a", { class: "button", href: `#/replay/${id}`, "data-action": "replay" }, "Replay");
  const newLink = h("a", { class: "button", href: "#/", "data-action": "new" }, "New deal");
  if (mine) fill(tools, buttons.undo, buttons.hint, buttons.solver, buttons.resign, analyse, replayLink, newLink);
  else fill(tools, replayLink, newLink);

  const lesson = view.lesson ? lessonPanel(view.lesson.id) : null;
  const race = view.deal?.source === "race" ? raceStrip(view.deal.race) : null;
  const tournament = view.deal?.source === "tournament" && mine ? tournamentStrip(view.deal) : null;
  fill(root, h("section", { class: "game", "aria-labelledby": "game-title", "data-game": id },
    h("header", { class: "game-head" },
      title,
      h("dl", { class: "facts" },
        h("div", {}, h("dt", {}, "Rules"), h("dd", { "data-ruleset": view.ruleset.id },
          `${rulesetTitle(view.ruleset.id)} (v${view.ruleset.version}) · ${drawCount === 1 ? "draw one" : "draw three"}`)),
        h("div", {}, h("dt", {}, "Moves"), moves),
        h("div", {}, h("dt", {}, "Time"), clock)),
      badges),
    lesson?.element, race?.element, tournament?.element, ended, tools, status, frame));

  if (!mine) {
    say(status, me ? "You are watching someone else's game: it updates as they play."
      : "Pick a name on the Play page to deal your own games. This game updates as its player plays.");
    badges.prepend(h("span", { class: "badge" }, `${view.player.name}'s game`, botMark(view.player)));
  }

  // ------------------------------------------------------------ showing a view

  function targetsOf(card) {
    if (!card || legal.version !== view.version) return new Set();
    return new Set(legal.moves.filter((m) => m.type === "move" && m.card === card).map((m) => m.to));
  }

  function draw() {
    const focusedKey = document.activeElement?.closest?.("[data-key]")?.dataset.key;
    title.textContent = `${rulesetTitle(view.ruleset.id)} · ${dealTitle(view.deal)}`;
    document.title = `${view.status === "playing" ? "" : `${capitalise(view.status)}: `}${title.textContent} · Canfield`;
    moves.textContent = String(view.moveCount);
    tick();
    fill(badges, ...badges.querySelectorAll(".badge:not([data-dynamic])"),
      view.assisted ? h("span", { class: "badge warn", "data-dynamic": "", "data-assisted": "" }, "Assisted: solver hint used") : null);
    lesson?.update(view);
    tournament?.update(view);
    const playing = view.status === "playing";
    for (const button of Object.values(buttons)) button.disabled = !playing;
    analyse.hidden = playing;
    ended.hidden = playing;
    ended.dataset.status = view.status;
    if (!playing) {
      fill(ended, h("strong", {}, endingText(view)), " ",
        `${plural(view.moveCount, "move")} in ${duration(elapsedSeconds())}.`,
        view.assisted ? " (Assisted: not ranked.)" : "");
    }
    const table = renderTable(view, {
      drawCount, interactive: mine && playing, selected, targets: targetsOf(selected), hint,
      onCard: clickCard, onPile: clickPile,
    });
    table.setAttribute("aria-busy", String(pending > 0));
    fill(frame, table);
    if (focusedKey) keepFocus(focusedKey);
  }

  /** Focus what had it before the redraw; a card gone to its foundation leaves focus there. */
  function keepFocus(key) {
    const card = key.startsWith("card:") ? key.slice(5) : null;
    const found = frame.querySelector(`[data-key="${CSS.escape(key)}"]`)
      || (card && frame.querySelector(`button.foundation[data-top="${CSS.escape(card)}"]`))
      || frame.querySelector("[data-key=\"pile:stock\"]");
    found?.focus({ preventScroll: true });
  }

  function accept(next) {
    if (next.version < view.version) return;
    const changed = next.version !== view.version;
    view = next;
    if (changed) {
      selected = null;
      hint = null;
    }
    draw();
    if (changed && view.status === "playing") loadLegalMoves();
    if (changed && view.status !== "playing") stopFollowing();
  }

  async function loadLegalMoves() {
    const version = view.version;
    if (legal.version === version || legalLoading === version) return;
    legalLoading = version;
    try {
      const { data } = await api.legalMoves(id);
      if (data.version >= legal.version) legal = data;
      if (data.version === view.version && selected) draw();
    } catch {
      // highlights are a help only: the server still judges every move
    } finally {
      if (legalLoading === version) legalLoading = 0;
    }
  }

  // ------------------------------------------------------------ the player's clicks

  function select(card) {
    selected = card;
    hint = null;
    draw();
    if (!card) return;
    const targets = [...targetsOf(card)];
    if (legal.version !== view.version) say(status, `${cardName(card)} selected: choose a column or a foundation.`);
    else if (targets.length === 0) say(status, `${cardName(card)} selected: it has no legal destination now.`);
    else say(status, `${cardName(card)} selected: it can go to ${targets.map(pileName).join(" or ")}.`);
  }

  function clickCard(card, from) {
    if (selected === card) return select(null);
    if (selected && from.startsWith("tableau-") && targetsOf(selected).has(from)) {
      return play({ type: "move", card: selected, to: from }); // a click on a legal column's card
    }
    select(card);
  }

  function clickPile(pile, suit) {
    if (pile === "draw" || pile === "recycle") return turnStock();
    if (pile === "foundation") {
      const cards = view.table.foundations[suit] || [];
      const top = cards[cards.length - 1];
      if (selected && selected === top) return select(null);
      if (selected) return play({ type: "move", card: selected, to: "foundation" });
      if (!top) return say(status, `Select a card first, then the ${suitName(suit)} foundation.`);
      if (!ruleset.foundationReturns) {
        return say(status, `Foundation cards stay there under ${rulesetTitle(view.ruleset.id)} rules.`);
      }
      return select(top);
    }
    if (!selected) return say(status, `Select a face-up card first, then ${pileName(pile)}.`);
    play({ type: "move", card: selected, to: pile });
  }

  /** Draw, or recycle once the stock is empty (asking first where a recycle can end the game). */
  async function turnStock() {
    if (view.table.stock.count > 0) return play({ type: "draw" });
    if (ruleset.recycle === "after-progress") {
      const sure = await ask({
        title: "Recycle the waste?",
        text: `Under ${rulesetTitle(view.ruleset.id)} rules the waste turns over only if a card was played since the last `
          + "recycle (or since the deal). If none was, recycling ends the game as stalled.",
        buttons: [{ label: "Not now", value: "" }, { label: "Recycle", value: "yes", primary: true }],
      });
      if (sure !== "yes") return;
    }
    return play({ type: "recycle" });
  }

  /** Send one move; the server's reply (or its own reason for refusing) is what shows. */
  function play(move) {
    if (!mine || view.status !== "playing") return;
    pending += 1;
    frame.firstElementChild?.setAttribute("aria-busy", "true");
    const sent = queue.then(async () => {
      try {
        const { data } = await api.move(id, me.token, move, view.version);
        accept(data.game);
        say(status, move.type === "undo" ? "Took back the last move." : `${capitalise(moveText(move, drawCount))}.`);
      } catch (error) {
        await refused(error);
      } finally {
        pending -= 1;
        frame.firstElementChild?.setAttribute("aria-busy", String(pending > 0));
      }
    });
    queue = sent.catch(() => {}); // a failure (reported by `sent`) never blocks the moves after it
    return sent;
  }

  async function refused(error) {
    if (!(error instanceof ApiError)) throw error;
    if (error.code === "version_conflict") {
      accept((await api.game(id)).data);
      say(status, "The game changed in another window; this is the table now. Try the move again.", "error");
      return;
    }
    if (error.code === "game_over") accept((await api.game(id)).data);
    if (error.status === 401) {
      say(status, "This browser's player is not known to the server any more: pick a name again on the Play page.", "error");
      return;
    }
    say(status, error.message, "error"); // the server's own reason, e.g. for an illegal move; the card stays selected
  }

  // ------------------------------------------------------------ help and the end of a game

  async function showHint() {
    try {
      const { data } = await api.hints(id);
      if (data.version !== view.version) return;
      const first = data.hints[0];
      if (!first) return say(status, "No legal move is left: resign, or undo and try another way.");
      hint = first.move.type === "move" ? { card: first.move.card, to: first.move.to } : null;
      selected = null;
      draw();
      say(status, `Hint: ${moveText(first.move, drawCount)}. ${capitalise(first.reason)}.`, "hint");
      if (first.move.type === "draw" || first.move.type === "recycle") frame.querySelector("[data-pile=stock]")?.classList.add("hinted");
    } catch (error) {
      say(status, error.message, "error");
    }
  }

  async function solverHint() {
    const sure = view.assisted || await ask({
      title: "Ask the solver?",
      text: "The solver looks at every card, including the face-down ones, to find a winning line. "
        + "Using it marks this game as assisted for good: an assisted game is never ranked on a leaderboard.",
      buttons: [{ label: "Cancel", value: "" }, { label: "Ask the solver", value: "yes", primary: true }],
    }) === "yes";
    if (!sure) return;
    say(status, "The solver is thinking…");
    try {
      const { data } = await api.solverHint(id, me.token);
      const answer = data.solver;
      if (answer?.move) {
        hint = answer.move.type === "move" ? { card: answer.move.card, to: answer.move.to } : null;
        selected = null;
        draw();
        say(status, `Solver: ${moveText(answer.move, drawCount)} (a winning line goes on from there).`, "hint");
      } else if (answer?.result === "lost") {
        say(status, "Solver: no winning line is left from here. Undo may open another way.", "hint");
      } else {
        say(status, "Solver: no answer within its time budget; try a plain hint.", "hint");
      }
      const { data: fresh } = await api.game(id); // the hint was recorded: the game is assisted now
      accept(fresh);
    } catch (error) {
      say(status, error.message, "error");
    }
  }

  async function resign() {
    const sure = await ask({
      title: "Resign this game?",
      text: "The game ends as resigned and counts as played, not won. You can still replay it.",
      buttons: [{ label: "Keep playing", value: "" }, { label: "Resign", value: "yes", primary: true }],
    });
    if (sure === "yes") play({ type: "resign" });
  }

  async function askAnalysis() {
    analyse.disabled = true;
    try {
      await api.requestAnalysis(id, me.token);
      go(`#/analysis/${id}`);
    } catch (error) {
      // 409: a daily game during its date, a race game while its race runs (the server's words)
      say(status, error.status === 409 ? `This game cannot be analysed yet: ${error.message}.` : error.message, "error");
    } finally {
      analyse.disabled = false;
    }
  }

  // ------------------------------------------------------------ time, keys, live updates

  function elapsedSeconds() {
    const start = Date.parse(view.startedAt);
    const end = view.finishedAt ? Date.parse(view.finishedAt) : Date.now();
    return (end - start) / 1000;
  }

  function tick() {
    clock.textContent = duration(elapsedSeconds());
  }

  function onKey(event) {
    if (event.defaultPrevented || event.altKey || event.ctrlKey || event.metaKey) return;
    if (event.target.closest?.("input, select, textarea, dialog")) return;
    if (event.key === "Escape" && selected) {
      select(null);
      say(status, "Nothing selected.");
    } else if (!mine || view.status !== "playing") {
      return;
    } else if (event.key === "u" || event.key === "U") {
      play({ type: "undo" });
    } else if (event.key === "h" || event.key === "H") {
      showHint();
    } else if (event.key === "d" || event.key === "D") {
      turnStock();
    } else {
      return;
    }
    event.preventDefault();
  }

  let unfollow = view.status === "playing" ? follow(id, {
    current: () => view,
    onView: accept,
    onRefused: (error) => say(status, `Live updates stopped: ${error.message}`, "error"),
  }) : null;
  function stopFollowing() {
    unfollow?.();
    unfollow = null;
  }

  const stopDragging = mine ? enableDrag(frame, { onDrop: (card, to) => play({ type: "move", card, to }) }) : null;
  const timer = setInterval(() => { if (view.status === "playing") tick(); }, 1000);
  document.addEventListener("keydown", onKey);
  draw();
  if (view.status === "playing") loadLegalMoves();
  if (mine && view.status === "playing" && !status.textContent) {
    say(status, "Select a face-up card, then a column or a foundation. Keys: D draw, U undo, H hint, Esc deselect.");
  }

  return () => {
    stopped = true;
    stopFollowing();
    race?.stop();
    tournament?.stop();
    stopDragging?.();
    clearInterval(timer);
    document.removeEventListener("keydown", onKey);
  };
}

/**
 * The view of game `id`, or null after saying in `root` why it cannot be shown: the server shows a
 * daily game during its date and a race game while its race runs only to their player.
 */
export async function readOrExplain(root, id) {
  try {
    return (await api.game(id)).data;
  } catch (error) {
    if (!(error instanceof ApiError) || (error.status !== 401 && error.status !== 403)) throw error;
    fill(root, h("section", { class: "card-panel", "data-private": "" },
      h("h1", {}, "This game is private for now"),
      h("p", { class: "problem" }, error.message),
      h("p", {}, h("a", { href: "#/" }, "Back to the Play page"))));
    return null;
  }
}

const capitalise = (text) => text.charAt(0).toUpperCase() + text.slice(1);
