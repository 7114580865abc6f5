// Views by URL fragment (#/game/<id>, #/replay/<id>, #/daily/<date>, ...): the page is one HTML
// address, so any view can be bookmarked or shared and the server serves only static files.

const routes = [];
let current = null; // { cleanup } of the mounted view
let generation = 0;

/** Register `mount(root, params)` for fragments matching `pattern` (named groups become params). */
export function route(pattern, mount, nav) {
  routes.push({ pattern, mount, nav });
}

/** Show the view for `hash` (e.g. "#/daily"); the same as following a link. */
export function go(hash) {
  if (location.hash === hash) show();
  else location.hash = hash;
}

/** Mark the main menu's entry `nav` as the current page (a view may say where it belongs). */
export function highlight(nav) {
  for (const link of document.querySelectorAll("[data-nav]")) {
    link.toggleAttribute("aria-current", false);
    if (link.dataset.nav === nav) link.setAttribute("aria-current", "page");
  }
}

/** Mount the view of the current fragment into `root`, taking the previous one down first. */
export async function show(root = document.getElementById("view"), onError = () => {}) {
  document.title = "Canfield Solitaire";
  const hash = location.hash.replace(/^#/, "") || "/";
  const found = routes.map((r) => ({ r, match: r.pattern.exec(hash) })).find(({ match }) => match);
  const mine = ++generation;
  current?.cleanup?.();
  current = null;
  highlight(found?.r.nav);
  if (!found) {
    root.replaceChildren(Object.assign(document.createElement("p"), { className: "problem", textContent: "No such page." }));
    return;
  }
  root.setAttribute("aria-busy", "true");
  // Each view draws into an element of its own: one that was asked for earlier but finishes
  // loading later draws into its detached element, never over the view shown now.
  const slot = Object.assign(document.createElement("div"), { className: "view" });
  root.replaceChildren(slot);
  try {
    const cleanup = await found.r.mount(slot, found.match.groups || {});
    if (mine !== generation) cleanup?.(); // another view was asked for meanwhile
    else current = { cleanup };
    if (mine === generation && document.activeElement === document.body) {
      root.focus({ preventScroll: true }); // a screen reader starts at the new view, not at the top of the page
    }
  } catch (error) {
    if (mine === generation) onError(slot, error);
  } finally {
    if (mine === generation) root.removeAttribute("aria-busy");
  }
}
