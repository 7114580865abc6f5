// Lessons: seed 000's four prepared deals (GET /lessons), each arranged so that its point comes up
// in the first moves; a lesson game's view says its goal and whether it is reached (`view.lesson`).

import { api } from "./api.js";
import { startGame } from "./dealing.js";
import { fill, h } from "./dom.js";
import { currentPlayer } from "./player.js";

let listing = null;

/** Every lesson, in the server's order (read once per page). */
export function allLessons() {
  if (!listing) {
    listing = api.lessons().then(({ data }) => data.lessons);
    listing.catch(() => { listing = null; });
  }
  return listing;
}

/** The Lessons page in `root`. */
export async function mountLessons(root) {
  const lessons = await allLessons();
  const player = currentPlayer();
  fill(root, h("section", { class: "lessons", "aria-labelledby": "lessons-title" },
    h("h1", { id: "lessons-title" }, "Lessons"),
    h("p", {}, "Four short deals, each arranged so that one rule of Canfield comes up in the first moves. "
      + "Reach the goal and the lesson is done; the game goes on as long as you like. Lesson games never count in your stats."),
    player ? null : h("p", {}, h("a", { class: "button primary", href: "#/" }, "Pick a name to start a lesson")),
    h("ol", { class: "lesson-list" }, lessons.map((lesson) => lessonCard(lesson, player)))));
}

function lessonCard(lesson, player) {
  const message = h("p", { class: "status-line", role: "status", "aria-live": "polite" });
  const start = player ? h("button", { type: "button", class: "primary", "data-action": "start-lesson", "data-lesson": lesson.id,
    onclick: () => startGame(lesson.ruleset.id, { source: "lesson", lesson: lesson.id }, message, start) }, "Start this lesson") : null;
  return h("li", { class: "card-panel lesson", "data-lesson": lesson.id },
    h("h2", {}, lesson.title),
    h("p", {}, lesson.teaches),
    h("p", { class: "goal" }, h("strong", {}, "Goal: "), lesson.goal),
    start, message);
}

/**
 * The lesson box above a lesson game's table: its title, goal and whether it is done, with the
 * next lesson offered once it is. Returns `{ element, update(view) }`.
 */
export function lessonPanel(lessonId) {
  const title = h("h2", {}, "Lesson");
  const goal = h("p", { class: "goal" });
  const done = h("p", { class: "done-line", role: "status", "aria-live": "polite" });
  const element = h("section", { class: "lesson-panel", "data-lesson": lessonId, "aria-label": "Lesson" }, title, goal, done);
  let wasDone = null;
  let lessons = [];
  allLessons().then((found) => {
    lessons = found;
    const lesson = found.find((one) => one.id === lessonId);
    if (lesson) title.textContent = `Lesson: ${lesson.title}`;
    drawDone();
  }).catch(() => {});

  function drawDone() {
    if (!wasDone) return;
    const next = lessons[lessons.findIndex((one) => one.id === lessonId) + 1];
    const message = h("span", { class: "status-line" });
    const button = next ? h("button", { type: "button", "data-action": "next-lesson",
      onclick: () => startGame(next.ruleset.id, { source: "lesson", lesson: next.id }, message, button) }, `Next lesson: ${next.title}`) : null;
    fill(done, h("strong", {}, "✓ Lesson done."), " You can play this deal on, or ",
      next ? "go on to the next one. " : h("a", { href: "#/lessons" }, "pick another lesson."), button, message);
  }

  return {
    element,
    /** Show `view.lesson` (its goal, and the news once it is reached). */
    update(view) {
      const lesson = view.lesson;
      if (!lesson) return;
      fill(goal, h("strong", {}, "Goal: "), lesson.goal);
      element.dataset.done = String(lesson.done);
      if (wasDone !== lesson.done) {
        wasDone = lesson.done;
        drawDone();
      }
    },
  };
}
