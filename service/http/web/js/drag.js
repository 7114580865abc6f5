// Drag and drop with a mouse, beside select-then-destination (which stays the way on touch screens
// and keyboards): drag a face-up card (with the cards below it) onto a column or a foundation.

import { h } from "./dom.js";

const THRESHOLD_PX = 6; // a press that moves less than this is a click, not a drag

/** Let cards in `frame` be dragged; `onDrop(card, pile)` gets "tableau-N" or "foundation". */
export function enableDrag(frame, { onDrop }) {
  let drag = null; // { card, from, x, y, dx, dy, source, ghost }
  let swallowClick = false;

  frame.addEventListener("pointerdown", (event) => {
    if (event.pointerType !== "mouse" || event.button !== 0) return;
    const source = event.target.closest("button.card[data-card], button.foundation[data-card]");
    if (!source) return;
    const box = source.getBoundingClientRect();
    drag = { card: source.dataset.card, from: source.dataset.from || source.dataset.pile, source,
      x: event.clientX, y: event.clientY, dx: event.clientX - box.left, dy: event.clientY - box.top, ghost: null };
  });

  function move(event) {
    if (!drag) return;
    if (!drag.ghost) {
      if (Math.hypot(event.clientX - drag.x, event.clientY - drag.y) < THRESHOLD_PX) return;
      drag.ghost = ghostOf(drag.source);
      document.body.append(drag.ghost);
    }
    drag.ghost.style.left = `${event.clientX - drag.dx}px`;
    drag.ghost.style.top = `${event.clientY - drag.dy}px`;
    for (const marked of frame.querySelectorAll(".drop-here")) marked.classList.remove("drop-here");
    targetAt(event.clientX, event.clientY)?.element.classList.add("drop-here");
  }

  function end(event) {
    if (!drag) return;
    const { card, from, ghost } = drag;
    drag = null;
    if (!ghost) return; // a click: the click handlers deal with it
    ghost.remove();
    for (const marked of frame.querySelectorAll(".drop-here")) marked.classList.remove("drop-here");
    swallowClick = true;
    setTimeout(() => { swallowClick = false; }, 0);
    const target = event.type === "pointerup" ? targetAt(event.clientX, event.clientY) : null;
    if (target && target.pile !== from) onDrop(card, target.pile);
  }

  document.addEventListener("pointermove", move);
  document.addEventListener("pointerup", end);
  document.addEventListener("pointercancel", end);
  frame.addEventListener("click", (event) => {
    if (swallowClick) {
      event.stopPropagation();
      event.preventDefault();
    }
  }, true);
  return () => {
    document.removeEventListener("pointermove", move);
    document.removeEventListener("pointerup", end);
    document.removeEventListener("pointercancel", end);
  };
}

/** The column or foundation under a point: `{ pile, element }`, or null. */
function targetAt(x, y) {
  const element = document.elementFromPoint(x, y)?.closest(".column[data-pile], .foundation[data-pile]");
  return element ? { pile: element.dataset.pile, element } : null;
}

/** A picture of what is dragged: the card, and in a column every card below it too. */
function ghostOf(source) {
  const item = source.closest("li");
  const cards = item ? [item, ...siblingsAfter(item)].map((li) => li.firstElementChild) : [source];
  return h("div", { class: "drag-ghost", "aria-hidden": "true" },
    cards.map((card) => {
      const copy = card.cloneNode(true);
      copy.removeAttribute("data-key");
      copy.removeAttribute("id");
      return copy;
    }));
}

function siblingsAfter(item) {
  const found = [];
  for (let next = item.nextElementSibling; next; next = next.nextElementSibling) found.push(next);
  return found;
}
