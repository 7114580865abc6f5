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

/** Mount the view of the current fragment into `root`, taking the previous one down first. */
export async function show(root = document.getElementById("view"), onError = () => {}) {
  document.title = "Canfield Solitaire";
  const hash = location.hash.replace(/^#/, "") || "/";
  const found = routes.map((r) => ({ r, match: r.pattern.exec(hash) })).find(({ match }) => match);
  const mine = ++generation;
  current?.cleanup?.();
  current = null;
  for (const link of document.querySelectorAll("[data-nav]")) {
    link.toggleAttribute("aria-current", false);
    if (found && link.dataset.nav === found.r.nav) link.setAttribute("aria-current", "page");
  }
  if (!found) {
    root.replaceChildren(Object.assign(document.createElement("p"), { className: "problem", textContent: "No such page." }));
    return;
  }
  root.setAttribute("aria-busy", "true");
  try {
    const cleanup = await found.r.mount(root, found.match.groups || {});
    if (mine !== generation) cleanup?.(); // another view was asked for meanwhile
    else current = { cleanup };
    if (mine === generation && document.activeElement === document.body) {
      root.focus({ preventScroll: true }); // a screen reader starts at the new view, not at the top of the page
    }
  } catch (error) {
    if (mine === generation) onError(root, error);
  } finally {
    if (mine === generation) root.removeAttribute("aria-busy");
  }
}
