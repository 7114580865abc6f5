// A client written against the types openapi-typescript generates from openapi/openapi.json
// (into ./generated/openapi.ts by tests/clients/test_typescript_client.py), checked by tsc --strict.
// Run with `node out/client.js <base url> <token> <game id>` it sends a listed legal move back.
import type { components, paths } from "./generated/openapi";

type Schemas = components["schemas"];
type MoveBody = paths["/games/{game_id}/moves"]["post"]["requestBody"]["content"]["application/json"];
type MoveReply = paths["/games/{game_id}/moves"]["post"]["responses"][200]["content"]["application/json"];
type LegalMoves = paths["/games/{game_id}/legal-moves"]["get"]["responses"][200]["content"]["application/json"];
type Hints = paths["/games/{game_id}/hints"]["get"]["responses"][200]["content"]["application/json"];
type ListedMove = LegalMoves["moves"][number];

// Every move type, built from the generated types alone.
export const everyMove: MoveBody[] = [
  { type: "draw" },
  { type: "recycle" },
  { type: "undo" },
  { type: "resign" },
  { type: "move", card: "7H", to: "tableau-3" },
  { type: "move", card: "KS", to: "foundation" },
];

// A listed legal move, a hint's move and the solver's move are move requests as they are.
export function sendBack(listed: ListedMove): MoveBody {
  return listed;
}
export function hintsBack(hints: Hints): MoveBody[] {
  const found: MoveBody[] = hints.hints.map((hint) => hint.move);
  if (hints.solver?.move) found.push(hints.solver.move);
  return found;
}

// The unions narrow on their discriminators.
export function describeMove(move: Schemas["MoveRequest"]): string {
  switch (move.type) {
    case "move":
      return `${move.card} to ${move.to}`;
    default:
      return move.type;
  }
}
export function describeEvent(event: Schemas["EventView"]): string {
  switch (event.type) {
    case "GameDealt":
      return `${event.data.ruleset.id}: ${event.data.tableau.join(" ")} (${event.data.deck?.length ?? 0} shown)`;
    case "StockDrawn":
      return event.data.cards.join(" ");
    case "CardsMoved":
      return `${event.data.cards.join(" ")} ${event.data.from} > ${event.data.to}`;
    case "ReserveRefilled":
      return `${event.data.card} > ${event.data.to}`;
    case "MoveUndone":
      return event.data.reverted.map((reverted) => reverted.type).join(", ");
    case "LessonCompleted":
      return `lesson ${event.data.lesson} done`;
    default:
      return event.type;
  }
}
export function describeDeal(deal: Schemas["DealSource"]): string {
  switch (deal.source) {
    case "seed":
      return `seed ${deal.seed}`;
    case "pool":
      return `pool deal ${deal.pool}`;
    case "daily":
      return `daily ${deal.daily}${deal.practice ? " (practice)" : ""}`;
    case "deck":
      return "an explicit deck";
    case "lesson":
      return `lesson ${deal.lesson}`;
    case "race":
      return `race ${deal.race}`;
  }
}
export function lessonDone(game: Schemas["GameView"]): boolean | undefined {
  return game.lesson?.done; // absent in other games
}
// A race's deal: while the race runs only its source, its seed or pool number once it is over.
export function describeRaceDeal(deal: Schemas["RaceDeal"]): string {
  switch (deal.source) {
    case "seed":
      return deal.seed === undefined ? "a seed (hidden)" : `seed ${deal.seed}`;
    case "pool":
      return deal.pool === undefined ? "a pool deal (hidden)" : `pool deal ${deal.pool}`;
    case "deck":
      return "an explicit deck";
    case "secret":
      return "a secret deal, proven winnable";
  }
}
// A game stream's message, by its event: every event the stream sends is in the enum.
export function describeStreamMessage(message: Schemas["StreamMessage"]): string {
  switch (message.event) {
    case "view":
    case "end":
      return `${message.event} at version ${message.id ?? "?"}`;
    case "game-event":
      return `event ${message.id ?? "?"}`;
    case "analysis":
      return `analysis: ${message.data}`;
    case "shutdown":
      return `shutdown: reconnect in ${message.retry ?? "?"} ms`;
  }
}
export function standings(race: Schemas["RaceView"]): string[] {
  return race.entrants.map((entrant) => `${entrant.place ?? "-"} ${entrant.name}: ${entrant.gameStatus ?? "not dealt"}`);
}
export function foundationCards(game: Schemas["GameView"]): number {
  return Object.values(game.table.foundations).reduce((count, cards) => count + cards.length, 0);
}
export function describeGames(list: Schemas["GameList"]): string[] {
  return list.games.map((game) => `${game.id}: ${describeDeal(game.deal)}, ${game.status}`);
}
type GamesQuery = NonNullable<paths["/players/{player_id}/games"]["get"]["parameters"]["query"]>;
export const inProgress: GamesQuery = { status: "playing", limit: 10 };
export const newGame: Schemas["NewGame"] = { ruleset: "classic", deal: { seed: 7 } };
export const daily: Schemas["NewGame"] = { deal: { daily: "today" } };
export const lesson: Schemas["NewGame"] = { deal: { lesson: "wrapping" } };
type RaceBody = paths["/races"]["post"]["requestBody"]["content"]["application/json"];
export const race: RaceBody = { maxEntrants: 4, ruleset: "classic", deal: { pool: 25 }, timeLimitSeconds: 900 };
export const fairRace: RaceBody = { maxEntrants: 2 }; // a deal nobody knows in advance

// What the types refuse.
// @ts-expect-error a card move needs its target
export const incomplete: MoveBody = { type: "move", card: "7H" };
// @ts-expect-error no such target
export const nowhere: MoveBody = { type: "move", card: "7H", to: "tableau-5" };
// @ts-expect-error no such move
export const flying: MoveBody = { type: "fly" };
// @ts-expect-error a ruleset id is one of the hosted ones
export const klondike: Schemas["NewGame"] = { ruleset: "klondike" };
// @ts-expect-error no such lesson
export const knitting: Schemas["NewGame"] = { deal: { lesson: "knitting" } };
// @ts-expect-error a race takes no lesson deal
export const lessonRace: RaceBody = { maxEntrants: 2, deal: { lesson: "wrapping" } };
// @ts-expect-error a race needs maxEntrants
export const noSeats: RaceBody = { ruleset: "classic" };

declare const process: { argv: string[]; exitCode?: number };

// The API version is set once, for every request this client makes (as Stripe's libraries do).
function client(base: string, version: string): (path: string, init?: RequestInit) => Promise<Response> {
  return (path, init = {}) => fetch(`${base}${path}`, { ...init, headers: { ...init.headers, "Api-Version": version } });
}

// Plays on from the first move (a card move where one is listed, else a draw or recycle, never an
// undo) until the game ends or `most` moves are made, then resigns a game still in progress.
async function playToTheEnd(api: ReturnType<typeof client>, token: string, game: string, reply: MoveReply, most: number): Promise<MoveReply> {
  const auth = { "Content-Type": "application/json", Authorization: `Bearer ${token}` };
  let last = reply;
  for (let moves = 1; moves < most && last.game.status === "playing"; moves++) {
    const listed = (await (await api(`/games/${game}/legal-moves`)).json()) as LegalMoves;
    const move = listed.moves.find((m) => m.type === "move") ?? listed.moves.find((m) => m.type === "draw" || m.type === "recycle");
    if (move === undefined) break;
    const answer = await api(`/games/${game}/moves`, { method: "POST", headers: auth, body: JSON.stringify(sendBack(move)) });
    if (!answer.ok) throw new Error(`a listed move: ${answer.status} ${await answer.text()}`);
    last = (await answer.json()) as MoveReply;
  }
  if (last.game.status === "playing") {
    const resign: MoveBody = { type: "resign" };
    const answer = await api(`/games/${game}/moves`, { method: "POST", headers: auth, body: JSON.stringify(resign) });
    if (!answer.ok) throw new Error(`resign: ${answer.status} ${await answer.text()}`);
    last = (await answer.json()) as MoveReply;
  }
  return last;
}

async function main(base: string, token: string, game: string, version: string): Promise<void> {
  const api = client(base, version);
  const read = await api(`/games/${game}/legal-moves`);
  const listed = (await read.json()) as LegalMoves;
  const move = listed.moves[0];
  if (move === undefined) throw new Error("no legal move");
  const response = await api(`/games/${game}/moves`, {
    method: "POST",
    headers: { "Content-Type": "application/json", Authorization: `Bearer ${token}`, "If-Match": `"${listed.version}"` },
    body: JSON.stringify(sendBack(move)),
  });
  const reply = (await response.json()) as MoveReply;
  const versions = [read.headers.get("Api-Version"), response.headers.get("Api-Version")];
  const final = await playToTheEnd(api, token, game, reply, 40);
  console.log(JSON.stringify({
    status: response.status, sent: move, version: reply.game.version, events: reply.events.map(describeEvent), versions,
    final: { status: final.game.status, version: final.game.version, finishedAt: final.game.finishedAt, moveCount: final.game.moveCount },
  }));
}

const [base, token, game, version] = process.argv.slice(2);
if (base !== undefined && token !== undefined && game !== undefined && version !== undefined) {
  main(base, token, game, version).catch((error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  });
}
