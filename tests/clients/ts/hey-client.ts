// The same checks against the types @hey-api/openapi-ts generates (into ./hey/types.gen.ts).
import type {
  DealSource,
  EventView,
  GameView,
  Hints,
  LegalMoves,
  MakeMoveData,
  MoveRequest,
  NewGame,
  NewRace,
  RaceDeal,
} from "./hey/types.gen";

type MoveBody = MakeMoveData["body"];

export const everyMove: MoveRequest[] = [
  { type: "draw" },
  { type: "recycle" },
  { type: "undo" },
  { type: "resign" },
  { type: "move", card: "7H", to: "tableau-3" },
];
export function sendBack(listed: LegalMoves["moves"][number]): MoveBody {
  return listed;
}
export function hintsBack(hints: Hints): MoveBody[] {
  const found: MoveBody[] = hints.hints.map((hint) => hint.move);
  if (hints.solver?.move) found.push(hints.solver.move);
  return found;
}
export function describeEvent(event: EventView): string {
  switch (event.type) {
    case "StockDrawn":
      return event.data.cards.join(" ");
    case "MoveUndone":
      return event.data.reverted.map((reverted) => reverted.type).join(", ");
    default:
      return event.type;
  }
}
export function describeDeal(deal: DealSource): string {
  return deal.source === "daily" ? deal.daily : deal.source;
}
export function foundationCards(game: GameView): number {
  return Object.values(game.table.foundations).reduce((count, cards) => count + cards.length, 0);
}
export const newGame: NewGame = { ruleset: "draw-one", deal: { pool: 3 } };
export const lesson: NewGame = { deal: { lesson: "reserve-refill" } };
export const race: NewRace = { maxEntrants: 3, deal: { seed: 12 } };
export function describeRaceDeal(deal: RaceDeal): string {
  return deal.source === "pool" ? `pool ${deal.pool ?? "(hidden)"}` : deal.source;
}
// @ts-expect-error a race takes no daily deal
export const dailyRace: NewRace = { maxEntrants: 2, deal: { daily: "today" } };
// @ts-expect-error a card move needs its target
export const incomplete: MoveBody = { type: "move", card: "7H" };
