// Games, races and tournaments kept current from their Server-Sent Events streams, read with the player's token
// (sse.js): a game stream sends the view first, then the events of each change followed by the
// new view, then the end; a race stream sends the race view, then each change of standings, then
// the end; a tournament stream likewise. A dropped game stream is resumed with Last-Event-ID, so
// nothing is missed.

import { currentReaderToken } from "./api.js";
import { readEvents } from "./sse.js";

/**
 * Follow game `id`: `onView(view)` for every view newer than `current()`; `onRefused(error)` if
 * the server will not stream it to this reader. Returns a function that stops following.
 */
export function follow(id, { current, onView, onRefused }) {
  return readEvents(`/games/${id}/stream`, {
    token: currentReaderToken,
    onRefused,
    onMessage({ event, data }) {
      if (event !== "view" && event !== "end") return; // game-event: the view after it tells all
      const view = JSON.parse(data);
      if (!current() || view.version > current().version) onView(view);
    },
  });
}

/** Follow a race's or a tournament's stream: `onView(view)` for each message named in `names`. */
function followViews(path, names, onView, onRefused) {
  return readEvents(path, {
    token: currentReaderToken,
    resume: false, // these streams start again with the current view
    onRefused,
    onMessage({ event, data }) {
      if (names.includes(event)) onView(JSON.parse(data));
    },
  });
}

/** Follow race `id`: `onRace(view)` for each race view (the last one when it has finished). */
export const followRace = (id, { onRace, onRefused }) => followViews(`/races/${id}/stream`, ["race", "end"], onRace, onRefused);

/** Follow tournament `id`: `onTournament(view)` for each view (the last one once it has finished). */
export const followTournament = (id, { onTournament, onRefused }) =>
  followViews(`/tournaments/${id}/stream`, ["tournament", "end"], onTournament, onRefused);
