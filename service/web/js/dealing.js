// Dealing a game from any page (Play, Daily deal, Lessons): POST /games, then open the new table.

import { api, ApiError } from "./api.js";
import { say } from "./dom.js";
import { currentPlayer } from "./player.js";
import { go } from "./router.js";

/** Deal and open the new game; the server's reason shows in `message` if it refuses. */
export async function startGame(rulesetId, deal, message, button) {
  const player = currentPlayer();
  if (!player) return go("#/");
  if (button) button.disabled = true;
  say(message, "Dealing…");
  try {
    const { data } = await api.deal(player.token, rulesetId, deal);
    go(`#/game/${data.id}`);
  } catch (error) {
    say(message, error instanceof ApiError && error.status === 401
      ? "The server does not know this browser's player any more: use Switch player to pick a name again."
      : error.message, "error");
    if (button) button.disabled = false;
  }
}
