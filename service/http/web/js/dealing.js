// Dealing a game from any page (Play, Daily deal, Lessons): POST /games, then open the new table;
// and a deal named in words.

import { api, ApiError } from "./api.js";
import { say } from "./dom.js";
import { currentPlayer } from "./player.js";
import { go } from "./router.js";

/**
 * Deal and open the new game; the server's reason shows in `message` if it refuses. A daily deal
 * is one game per player while its date is on: asked again, the server names the player's game of
 * it (409 daily_already_played, its id in `game`), and that game opens instead.
 */
export async function startGame(rulesetId, deal, message, button) {
  const player = currentPlayer();
  if (!player) return go("#/");
  if (button) button.disabled = true;
  say(message, "Dealing…");
  try {
    const { data } = await api.deal(player.token, rulesetId, deal);
    go(`#/game/${data.id}`);
  } catch (error) {
    if (error instanceof ApiError && error.code === "daily_already_played" && error.problem?.game) {
      return go(`#/game/${error.problem.game}`);
    }
    say(message, error instanceof ApiError && error.status === 401
      ? "The server does not know this browser's player any more: use Switch player to pick a name again."
      : error.message, "error");
    if (button) button.disabled = false;
  }
}

/** "Seed 123", "Pool deal 25", "Daily deal of 2026-12-01", "Lesson: wrapping", "Race", "Tournament deal 2" ... */
export function dealTitle(deal) {
  switch (deal?.source) {
    case "seed": return `Seed ${deal.seed}`;
    case "pool": return `Pool deal ${deal.pool}`;
    case "daily": return `Daily deal of ${deal.date}${deal.practice ? " (practice)" : ""}`;
    case "deck": return "A dealt deck";
    case "lesson": return `Lesson: ${deal.lesson.replace(/-/g, " ")}`;
    case "race": return "Race";
    case "tournament": return `Tournament deal ${deal.deal}`;
    default: return deal?.source ? `${deal.source} deal` : "Deal";
  }
}
