// A game kept current from GET /games/{id}/stream (Server-Sent Events): the view first, then
// each change. A server that sends only the events of a change (no new view) is followed too:
// the view is read once the events have come in.

import { api } from "./api.js";

const VIEW_AFTER_EVENTS_MS = 300; // wait this long for a `view` message before reading the view
const RECONNECT_MS = [1000, 2000, 5000, 10000, 30000];

/**
 * Follow game `id`: `onView(view)` for every newer view (never an older one than `current()`).
 * Returns a function that stops following.
 */
export function follow(id, { current, onView }) {
  let source = null;
  let stopped = false;
  let failures = 0;
  let reconnectTimer = null;
  let refreshTimer = null;
  let wanted = 0; // the highest version an event announced

  const newer = (view) => !current() || view.version > current().version;

  function accept(view) {
    failures = 0;
    if (newer(view)) onView(view);
  }

  function refreshSoon(version) {
    wanted = Math.max(wanted, version);
    if (refreshTimer) return;
    refreshTimer = setTimeout(async () => {
      refreshTimer = null;
      if (stopped || (current() && current().version >= wanted)) return;
      try {
        const { data } = await api.game(id);
        if (!stopped) accept(data);
      } catch {
        // the next message or reconnect tries again
      }
    }, VIEW_AFTER_EVENTS_MS);
  }

  function open() {
    source = new EventSource(`/games/${id}/stream`);
    source.addEventListener("view", (message) => accept(JSON.parse(message.data)));
    source.addEventListener("game-event", (message) => {
      failures = 0;
      const event = JSON.parse(message.data);
      if (!current() || event.version > current().version) refreshSoon(event.version);
    });
    source.addEventListener("end", (message) => {
      accept(JSON.parse(message.data));
      stop(); // the game is over: nothing more will come
    });
    source.addEventListener("error", () => {
      // EventSource reconnects by itself after a dropped connection (sending Last-Event-ID);
      // a refused one (429: too many streams, 503) is closed for good, so try again later.
      if (stopped || source.readyState !== EventSource.CLOSED) return;
      const delay = RECONNECT_MS[Math.min(failures, RECONNECT_MS.length - 1)];
      failures += 1;
      reconnectTimer = setTimeout(() => { if (!stopped) open(); }, delay);
    });
  }

  function stop() {
    stopped = true;
    clearTimeout(reconnectTimer);
    clearTimeout(refreshTimer);
    source?.close();
  }

  open();
  return stop;
}
