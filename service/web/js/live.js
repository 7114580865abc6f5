// A game kept current from GET /games/{id}/stream (Server-Sent Events): the view first, then the
// events of each change followed by the new view, then the end. EventSource reconnects by itself
// after a dropped connection (sending Last-Event-ID, so the server sends what was missed and the
// view after it); a refused stream (429: too many open streams) is tried again later.

const RECONNECT_MS = [1000, 2000, 5000, 10000, 30000];

/**
 * Follow game `id`: `onView(view)` for every view newer than `current()`.
 * Returns a function that stops following.
 */
export function follow(id, { current, onView }) {
  let source = null;
  let stopped = false;
  let failures = 0;
  let reconnectTimer = null;

  function accept(message) {
    failures = 0;
    const view = JSON.parse(message.data);
    if (!current() || view.version > current().version) onView(view);
  }

  function open() {
    source = new EventSource(`/games/${id}/stream`);
    source.addEventListener("view", accept);
    source.addEventListener("end", (message) => {
      accept(message);
      stop(); // the game is over: nothing more will come
    });
    source.addEventListener("error", () => {
      if (stopped || source.readyState !== EventSource.CLOSED) return;
      const delay = RECONNECT_MS[Math.min(failures, RECONNECT_MS.length - 1)];
      failures += 1;
      reconnectTimer = setTimeout(() => { if (!stopped) open(); }, delay);
    });
  }

  function stop() {
    stopped = true;
    clearTimeout(reconnectTimer);
    source?.close();
  }

  open();
  return stop;
}
