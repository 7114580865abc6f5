// A game's analysis (docs/analysis.md): asked for with POST /games/{id}/analysis, followed on the
// game's stream (`analysis` messages), then read with GET: the move list with each position's
// verdict and the turning point, the table of any position (GET /games/{id}/states/{v}), and the
// winning line from before the turning point, a move at a time over that position's table.
//
// The page has no rules engine: it cannot work out the table after a move of the winning line,
// and no endpoint applies a line to a past state. So each move of the line is told in words over
// the table before the turning point, its card and destination highlighted where they are in sight
// there. Only what the API sent is shown: face-down cards stay face down.

import { api, ApiError, currentReaderToken } from "./api.js";
import { cardName, moveText } from "./cards.js";
import { dealTitle } from "./dealing.js";
import { fill, h, plural, say } from "./dom.js";
import { endingText, readOrExplain } from "./game.js";
import { currentPlayer } from "./player.js";
import { allEvents, eventText } from "./replay.js";
import { rulesetOf, rulesetTitle } from "./rulesets.js";
import { readEvents } from "./sse.js";
import { renderTable } from "./table.js";

const POLL_MS = 2000; // when the stream is refused: GET the analysis this often until it ends
const FINISHED = new Set(["done", "failed"]);

/** "won in 14 moves", "lost", "unknown": a verdict in words (never in colour alone). */
export function verdictText(position) {
  if (position.verdict === "won") return `won in ${plural(position.movesToWin, "move")}`;
  return position.verdict;
}

/** The analysis of game `id` in `root`: its progress, then its move list and positions. */
export async function mountAnalysis(root, { id }) {
  const latest = await readOrExplain(root, id);
  if (!latest) return;
  const me = currentPlayer();
  const mine = Boolean(me && me.id === latest.player.id);
  const ruleset = await rulesetOf(latest.ruleset);
  const drawCount = ruleset.drawCount || 3;
  const states = new Map([[latest.version, latest]]);
  let stopped = false;
  let stopStream = null;
  let poller = null;
  let result = null; // the analysis once done
  let rows = []; // [{ position, index, label, turning, button, item }]
  let step = 0; // the move of the winning line shown
  let loading = 0; // the latest table asked for

  const progressText = h("p", { class: "status-line progress-line", role: "status", "aria-live": "polite", "data-analysis-status": "" });
  const bar = h("progress", { max: 1, value: 0, "aria-label": "Positions settled" });
  const progress = h("div", { class: "analysis-progress" }, progressText, bar);
  const summary = h("div", { class: "analysis-summary", hidden: true });
  const caption = h("p", { class: "caption-line", "aria-live": "polite", "data-caption": "" });
  const frame = h("div", { class: "table-frame" });
  const finalButton = h("button", { type: "button", "data-action": "final", onclick: () => showFinal() }, "Final table");
  const lineButton = h("button", { type: "button", "data-action": "line", hidden: true, onclick: () => showLine(0) },
    "Winning line");
  const back = h("button", { type: "button", "data-action": "line-back", onclick: () => showLine(step - 1) }, "◀ Previous move");
  const forward = h("button", { type: "button", "data-action": "line-forward", onclick: () => showLine(step + 1) }, "Next move ▶");
  const stepOf = h("output", { class: "step", "data-line-step": "" });
  const lineTools = h("div", { hidden: true },
    h("div", { class: "tools", role: "group", "aria-label": "Winning line steps" }, back, stepOf, forward),
    h("p", { class: "small line-note" }, "Each move of the line is shown over the table before the turning point, "
      + "its card and destination highlighted where they are in sight there: the tables in between are not shown."));
  const list = h("ol", { class: "events positions", "aria-label": "Positions and their verdicts" });
  const listPanel = h("div", { class: "replay-events", hidden: true }, h("h2", {}, "Moves"), list);

  const title = `Analysis · ${rulesetTitle(latest.ruleset.id)} · ${dealTitle(latest.deal)}`;
  document.title = `${title} · Canfield`;
  fill(root, h("section", { class: "analysis", "aria-labelledby": "analysis-title", "data-game": id },
    h("header", { class: "game-head" },
      h("h1", { id: "analysis-title" }, title),
      h("p", { class: "small" }, latest.status === "playing" ? "Still in play. " : `${endingText(latest)} `,
        h("a", { href: `#/game/${id}` }, "The game"), " · ", h("a", { href: `#/replay/${id}` }, "Replay"))),
    progress, summary,
    h("div", { class: "replay-body" },
      h("div", { class: "replay-main" },
        h("div", { class: "tools", role: "group", "aria-label": "What the table shows" }, finalButton, lineButton),
        lineTools, caption, frame),
      listPanel)));
  showFinal();

  // ------------------------------------------------------------ asking and following

  async function start() {
    let job;
    try {
      // the player asks (again: the same job, or a failed one queued again); anyone else reads
      job = (mine ? await api.requestAnalysis(id, me.token) : await api.analysis(id)).data;
    } catch (error) {
      return refused(error);
    }
    showProgress(job);
    if (FINISHED.has(job.status)) return finish(job);
    stopStream = readEvents(`/games/${id}/stream`, {
      token: currentReaderToken,
      onMessage({ event, data }) {
        if (event === "analysis") {
          const news = JSON.parse(data);
          showProgress(news);
          if (FINISHED.has(news.status)) readResult();
        } else if (event === "end") {
          readResult();
        }
      },
      onRefused: () => { poller = setInterval(readResult, POLL_MS); },
    });
  }

  async function readResult() {
    if (stopped || result) return;
    try {
      const { data } = await api.analysis(id);
      showProgress(data);
      if (FINISHED.has(data.status)) finish(data);
    } catch (error) {
      say(progressText, error.message, "error");
    }
  }

  function refused(error) {
    if (!(error instanceof ApiError)) throw error;
    bar.hidden = true;
    if (error.status === 404) {
      return fill(progressText, "This game has not been analysed yet.", " ", me && latest.status !== "playing"
        ? h("button", { type: "button", class: "primary", "data-action": "analyse", onclick: askNow }, "Analyse")
        : "Its player, or any player once the game has ended, can ask for it.");
    }
    const text = error.status === 409 ? `This game cannot be analysed yet: ${error.message}.` : error.message;
    say(progressText, capitalise(text), "error");
  }

  async function askNow() {
    try {
      const { data } = await api.requestAnalysis(id, me.token);
      bar.hidden = false;
      showProgress(data);
      if (FINISHED.has(data.status)) finish(data);
      else poller = setInterval(readResult, POLL_MS);
    } catch (error) {
      refused(error);
    }
  }

  function showProgress({ status, progress: { done, total } }) {
    bar.max = Math.max(1, total);
    bar.value = done;
    progress.dataset.status = status;
    const settled = `${done} of ${plural(total, "position")} settled`;
    const words = {
      queued: `Queued: waiting for an analysis worker (${settled}).`,
      running: `Analysing: ${settled}.`,
      done: `Analysed: ${plural(total, "position")}.`,
      failed: "The analysis failed.",
    };
    say(progressText, words[status] || status, status === "failed" ? "error" : "info");
  }

  function stopFollowing() {
    stopStream?.();
    stopStream = null;
    clearInterval(poller);
    poller = null;
  }

  // ------------------------------------------------------------ the result

  async function finish(job) {
    if (result || stopped) return;
    stopFollowing();
    if (job.status === "failed") {
      result = job;
      if (mine) progressText.append(" ", h("button", { type: "button", "data-action": "analyse", onclick: retry }, "Ask again"));
      return;
    }
    result = job;
    progress.hidden = true;
    const events = await allEvents(id);
    if (stopped) return;
    rows = job.positions.map((position, index) => row(position, index, job.positions[index - 1], events));
    fill(list, rows.map((r) => r.item));
    listPanel.hidden = false;
    drawSummary(job);
    lineButton.hidden = !job.turningPoint;
    const turn = rows.find((r) => r.turning);
    if (turn) scrollToRow(list, rows, turn);
  }

  /** The list scrolled so the turning point sits about a third of the way down and in sight whole,
   * with a whole row at the top (a row cut in half there reads as a broken list). Near the end of
   * the list that may need a little room below the last row, which is added. */
  function scrollToRow(list, rows, turn) {
    list.style.paddingBottom = "";
    const base = list.getBoundingClientRect().top + list.clientTop - list.scrollTop;
    const turnTop = turn.item.getBoundingClientRect().top - base;
    const least = turnTop + turn.item.offsetHeight - list.clientHeight; // any higher cuts the turning row
    const end = list.scrollHeight - list.clientHeight; // as far as the list scrolls
    const wanted = Math.min(turnTop - list.clientHeight / 3, end);
    // the row starts that keep the turning row whole in sight (the turning row's own, at least)
    const fits = rows.map((r) => r.item.getBoundingClientRect().top - base).filter((at) => at >= least && at <= turnTop);
    const top = fits.filter((at) => at <= wanted).pop() ?? fits[0] ?? turnTop;
    if (top > end) {
      const padding = parseFloat(getComputedStyle(list).paddingBottom) || 0;
      list.style.paddingBottom = `${padding + top - end}px`;
    }
    list.scrollTop = top;
  }

  async function retry() {
    result = null;
    rows = [];
    await start();
  }

  /** One position of the move list: its move in words, its verdict, the turning point marked. */
  function row(position, index, previous, events) {
    const after = previous ? Math.max(previous.version, 1) : position.version;
    const moved = events.filter((e) => e.version > after && e.version <= position.version && e.type !== "SolverHintUsed");
    const label = index === 0 ? "The deal" : moved.map(eventText).join("; ") || "a move";
    const abandoned = moved.some((e) => e.type === "GameAbandoned"); // the service's end, not a move of the player's
    const turning = result.turningPoint?.after === position.version && index > 0;
    const button = h("button", { type: "button", "data-version": position.version, onclick: () => showPosition(index) },
      h("span", { class: "v" }, index === 0 ? "0" : String(index)), " ",
      h("span", { class: "what" }, label), " ",
      h("span", { class: "verdict", "data-verdict": position.verdict }, verdictText(position)),
      turning ? h("strong", { class: "turn" }, " Turning point") : null);
    const item = h("li", { "data-version": position.version, "data-verdict": position.verdict,
      "data-turning-point": turning || undefined }, button);
    return { position, index, label, abandoned, turning, button, item };
  }

  function drawSummary(job) {
    const count = (verdict) => job.positions.filter((p) => p.verdict === verdict).length;
    const counts = `${plural(job.positions.length, "position")}: ${count("won")} won, ${count("lost")} lost, `
      + `${count("unknown")} unknown.`;
    const point = job.turningPoint;
    const first = job.positions[0];
    let verdict;
    if (point) {
      const before = rows.find((r) => r.position.version === point.before);
      const turn = rows.find((r) => r.position.version === point.after);
      const ended = point.after === rows[rows.length - 1].position.version; // a resignation, a stall, an abandonment
      const head = point.move.type === "abandon" // the service ended the game: no move of the player's
        ? `Turning point: ${moveText(point.move, drawCount)}${latest.abandoned ? ` after ${plural(latest.abandoned.idleDays, "day")} without a move` : ""}. `
        : `Turning point: move ${turn?.index ?? "?"}, ${moveText(point.move, drawCount)}. `;
      verdict = [h("strong", {}, head),
        ended
          ? `The game ended there while it could still be won: from the position before, a winning line of ${plural(point.winningLineBefore.length, "move")} was left.`
          : `The position before it was won (a winning line of ${plural(point.winningLineBefore.length, "move")}), `
            + "and no line wins from the one it made.",
        before ? ` Step through the winning line from move ${before.index === 0 ? "0 (the deal)" : before.index} with “Winning line”.` : ""];
    } else if (latest.status === "won") {
      verdict = "Won: no turning point.";
    } else if (first?.verdict === "lost") {
      verdict = "Lost from the deal: no line of moves wins from any position of this game.";
    } else {
      verdict = "No turning point: the solver did not settle the position after the last won one within its time.";
    }
    fill(summary, h("p", {}, verdict), h("p", { class: "small" }, counts));
    summary.hidden = false;
    summary.dataset.turningPoint = point ? "yes" : "no";
  }

  // ------------------------------------------------------------ what the table shows

  async function tableAt(version) {
    const asked = version === 0 ? 1 : version; // the deal's table is the game's version 1
    if (!states.has(asked)) states.set(asked, (await api.stateAt(id, asked)).data);
    return states.get(asked);
  }

  function mark(version) {
    for (const r of rows) r.button.toggleAttribute("aria-current", r.position.version === version);
  }

  function showFinal() {
    loading += 1;
    mark(null);
    lineTools.hidden = true;
    finalButton.setAttribute("aria-pressed", "true");
    lineButton.setAttribute("aria-pressed", "false");
    caption.textContent = `The final table: ${endingText(latest) || "still in play."}`;
    fill(frame, renderTable(latest, { drawCount, interactive: false }));
  }

  async function showPosition(index) {
    const { position, label, abandoned, turning } = rows[index];
    const ticket = ++loading;
    mark(position.version);
    lineTools.hidden = true;
    finalButton.setAttribute("aria-pressed", "false");
    lineButton.setAttribute("aria-pressed", "false");
    try {
      const view = await tableAt(position.version);
      if (stopped || ticket !== loading) return;
      const where = index === 0 ? "The deal" : abandoned ? `The end (${label})` : `After move ${index} (${label})`;
      caption.textContent = `${where}: ${verdictText(position)}.`
        + (!turning ? "" : abandoned
          ? " The turning point: the game was abandoned while it could still be won."
          : " The turning point: the move that lost the game.");
      fill(frame, renderTable(view, { drawCount, interactive: false }));
      const top = caption.getBoundingClientRect().top;
      if (top < 0 || top > innerHeight) caption.scrollIntoView(); // a phone: the list lies below the table
    } catch (error) {
      if (ticket === loading) caption.textContent = error.message;
    }
  }

  /** Move `k` of the winning line, in words over the table before the turning point. */
  async function showLine(k) {
    const point = result.turningPoint;
    const line = point.winningLineBefore;
    step = Math.min(line.length - 1, Math.max(0, k));
    const ticket = ++loading;
    mark(null);
    lineTools.hidden = false;
    finalButton.setAttribute("aria-pressed", "false");
    lineButton.setAttribute("aria-pressed", "true");
    back.disabled = step === 0;
    forward.disabled = step === line.length - 1;
    stepOf.textContent = `Move ${step + 1} of ${line.length}`;
    try {
      const view = await tableAt(point.before);
      if (stopped || ticket !== loading) return;
      const move = line[step];
      const hint = move.type === "move" ? { card: move.card, to: move.to } : null;
      const table = renderTable(view, { drawCount, interactive: false, hint });
      if (move.type === "draw" || move.type === "recycle") table.querySelector("[data-pile=stock]")?.classList.add("hinted");
      fill(frame, table);
      const inSight = move.type !== "move" || table.querySelector(`[data-card="${move.card}"]`);
      caption.dataset.move = JSON.stringify(move);
      caption.textContent = `Winning line, move ${step + 1} of ${line.length}: ${moveText(move, drawCount)}.`
        + (inSight ? "" : ` The ${cardName(move.card)} is not in sight here: the line's earlier moves bring it out.`);
    } catch (error) {
      if (ticket === loading) caption.textContent = error.message;
    }
  }

  start();
  return () => {
    stopped = true;
    stopFollowing();
  };
}

const capitalise = (text) => text.charAt(0).toUpperCase() + text.slice(1);
