// The rulesets the server hosts, read once per page; a game's own version when it is older.

import { api } from "./api.js";
import { h } from "./dom.js";

let listing = null;
const versions = new Map(); // "classic@1" -> ruleset

/** Every hosted ruleset (newest versions), as GET /rulesets lists them. */
export async function allRulesets() {
  if (!listing) {
    listing = api.rulesets().then(({ data }) => {
      for (const ruleset of data.rulesets) versions.set(`${ruleset.id}@${ruleset.version}`, ruleset);
      return data.rulesets;
    });
    listing.catch(() => { listing = null; });
  }
  return listing;
}

/** The rules a game was dealt under: `{ id, version }` of its view -> the full ruleset. */
export async function rulesetOf({ id, version }) {
  const key = `${id}@${version}`;
  await allRulesets();
  if (!versions.has(key)) versions.set(key, (await api.rulesetVersion(id, version)).data); // an older version
  return versions.get(key);
}

/** "Classic", "Draw one", "Open runs" */
export function rulesetTitle(id) {
  return { classic: "Classic", "draw-one": "Draw one", "open-runs": "Open runs" }[id]
    || id.replace(/-/g, " ").replace(/^./, (c) => c.toUpperCase());
}

/** A form's choice of rules: a radio button per ruleset (name "ruleset"), the first one chosen. */
export function rulesetFieldset(rulesets) {
  return h("fieldset", {}, h("legend", {}, "Rules"), rulesets.map((ruleset, index) => h("label", { class: "choice" },
    h("input", { type: "radio", name: "ruleset", value: ruleset.id, checked: index === 0 }),
    h("span", {}, h("strong", {}, rulesetTitle(ruleset.id)), " ", h("span", { class: "small" }, ruleset.description)))));
}
