// Small DOM helpers: build elements declaratively and speak to screen readers.

/**
 * Create an element. `attrs` keys: `class`, `text`, `on<event>` handlers, `data-*`, `aria-*`,
 * boolean attributes (true sets, false/null/undefined leaves out) and any other attribute.
 */
export function h(tag, attrs = {}, ...children) {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (name === "class") element.className = value;
    else if (name === "text") element.textContent = value;
    else if (name.startsWith("on") && typeof value === "function") element.addEventListener(name.slice(2), value);
    else if (value === true) element.setAttribute(name, "");
    else element.setAttribute(name, String(value));
  }
  append(element, children);
  return element;
}

function append(element, children) {
  for (const child of children.flat(Infinity)) {
    if (child === undefined || child === null || child === false) continue;
    element.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

/** Replace everything inside `element` with `children`. */
export function fill(element, ...children) {
  element.replaceChildren();
  append(element, children);
  return element;
}

/** Say `text` through the page's polite live region (the status line under the table, say). */
export function say(region, text, kind = "info") {
  region.textContent = text;
  region.dataset.kind = kind;
}

/** A promise resolved after `ms` milliseconds (rejected early if `signal` aborts). */
export function sleep(ms, signal) {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener("abort", () => {
      clearTimeout(timer);
      reject(signal.reason);
    }, { once: true });
  });
}

/** `m:ss` (or `h:mm:ss`) for a number of seconds. */
export function duration(seconds) {
  const total = Math.max(0, Math.floor(seconds));
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = String(total % 60).padStart(2, "0");
  return h > 0 ? `${h}:${String(m).padStart(2, "0")}:${s}` : `${m}:${s}`;
}

/** "1 move", "2 moves" */
export const plural = (count, word) => `${count} ${word}${count === 1 ? "" : "s"}`;

/** A short local date and time for an ISO timestamp. */
export function when(iso) {
  if (!iso) return "";
  return new Date(iso).toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short" });
}

/** A random id for Idempotency-Key (crypto.randomUUID needs a secure context; this does not). */
export function randomKey() {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

/** A modal question with the given buttons; resolves to the chosen button's value (or null on Escape). */
export function ask({ title, text, buttons }) {
  return new Promise((resolve) => {
    const dialog = h("dialog", { class: "ask", "aria-labelledby": "ask-title" },
      h("h2", { id: "ask-title", text: title }),
      h("p", { text }),
      h("form", { method: "dialog", class: "actions" },
        buttons.map(({ label, value, primary }) =>
          h("button", { value, class: primary ? "primary" : undefined, text: label }))));
    dialog.addEventListener("close", () => {
      dialog.remove();
      resolve(dialog.returnValue || null);
    });
    document.body.append(dialog);
    dialog.showModal();
  });
}
