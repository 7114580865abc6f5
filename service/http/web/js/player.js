// Who plays in this browser: the player registered once, kept (with the token) in localStorage.

import { api } from "./api.js";
import { h } from "./dom.js";

const KEY = "canfield.player";
const listeners = new Set();

/** `{ id, name, token }`, or null before a name is picked. */
export function currentPlayer() {
  try {
    const stored = JSON.parse(localStorage.getItem(KEY) || "null");
    return stored && stored.id && stored.token ? stored : null;
  } catch {
    return null;
  }
}

/** " bot" beside a player reference `{ id, name, bot }` of a bot account; null for a person. */
export function botMark(reference) {
  return reference?.bot ? h("span", { class: "small bot", title: "a bot account" }, " bot") : null;
}

/** A player's name as a link to their page (#/player/<id>): their ratings, and a challenge to a race. */
export function playerLink(reference) {
  return h("a", { href: `#/player/${reference.id}`, "data-player-link": reference.id }, reference.name);
}

/** Register `name` with the server and keep the token (the server shows it only once). */
export async function register(name) {
  const { data } = await api.register(name);
  const player = { id: data.id, name: data.name, token: data.token };
  localStorage.setItem(KEY, JSON.stringify(player));
  changed();
  return player;
}

/** Forget this browser's player (the server keeps the games; without the token they are read-only). */
export function forget() {
  localStorage.removeItem(KEY);
  changed();
}

/** `listener(player)` is called when the player changes (here or in another tab). */
export function onPlayerChange(listener) {
  listeners.add(listener);
}

function changed() {
  const player = currentPlayer();
  for (const listener of listeners) listener(player);
}

window.addEventListener("storage", (event) => {
  if (event.key === KEY || event.key === null) changed();
});
