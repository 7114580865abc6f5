// A client written against the types openapi-typescript generates from the newest version's
// document (openapi/2026-12-05.json, into ./generated/newest.ts by tests/clients/test_typescript_client.py),
// checked by tsc --strict. Run with `node out/newest-client.js <base url> <version>` it registers a
// player, deals by a tagged seed request, plays moves taken from the legal moves (If-Match: the ETag
// of the list) and resigns the game if it is still in progress, pages the event log by cursor and next, and reads its race in the lobby and the
// race's view with player references; it prints what it saw as one JSON line.
import type { components, paths } from "./generated/newest";

type Schemas = components["schemas"];
type Json<P extends keyof paths, M extends "get" | "post"> = paths[P][M] extends {
  responses: { 200: { content: { "application/json": infer T } } };
}
  ? T
  : never;
type NewGame = paths["/games"]["post"]["requestBody"]["content"]["application/json"];
type NewRace = paths["/races"]["post"]["requestBody"]["content"]["application/json"];
type MoveBody = paths["/games/{game_id}/moves"]["post"]["requestBody"]["content"]["application/json"];
type Created = Schemas["PlayerCreated"];
type Game = Schemas["GameView"];
type LegalMoves = Json<"/games/{game_id}/legal-moves", "get">;
type MoveReply = Json<"/games/{game_id}/moves", "post">;
type EventPage = Json<"/games/{game_id}/events", "get">;
type Lobby = Json<"/races/open", "get">;
type Race = Schemas["RaceView"];

// Deal requests are tagged as the deals' views are.
export const bySeed: NewGame = { ruleset: "classic", deal: { source: "seed", seed: 7 } };
export const today: NewGame = { deal: { source: "daily", date: "today" } };
export const byPool: NewGame = { deal: { source: "pool", pool: 3 } };
export const aLesson: NewGame = { deal: { source: "lesson", lesson: "wrapping" } };
export const secretRace: NewRace = { maxEntrants: 2, deal: { source: "secret" } };
// @ts-expect-error an untagged deal request is the first version's
export const untagged: NewGame = { deal: { seed: 7 } };
// @ts-expect-error a race takes no lesson deal
export const lessonRace: NewRace = { maxEntrants: 2, deal: { source: "lesson", lesson: "wrapping" } };

// A player is one shape everywhere.
export function who(player: Schemas["PlayerRef"]): string {
  return player.bot ? `${player.name} (bot)` : player.name;
}
export function standings(race: Race): string[] {
  return race.entrants.map((entrant) => `${entrant.place ?? "-"} ${who(entrant.player)}: ${entrant.status ?? "not dealt"}`);
}
export function raceOver(race: Race): boolean {
  switch (race.status) {
    case "open":
    case "running":
      return false;
    case "finished":
    case "cancelled":
      return true;
  }
}
export function board(leaderboard: Json<"/deals/daily/{day}/leaderboard", "get">): string[] {
  const ruleset = leaderboard.ruleset ? `${leaderboard.ruleset.id} v${leaderboard.ruleset.version}` : "no deal";
  return leaderboard.items.map((entry) => `${ruleset}: ${who(entry.player)} ${entry.moveCount} moves`);
}

declare const process: { argv: string[]; exitCode?: number };

// The API version is set once, for every request this client makes (as Stripe's libraries do).
function client(base: string, version: string, token?: string): (path: string, init?: RequestInit) => Promise<Response> {
  const fixed: Record<string, string> = { "Api-Version": version };
  if (token !== undefined) fixed.Authorization = `Bearer ${token}`;
  return (path, init = {}) => fetch(`${base}${path}`, { ...init, headers: { ...fixed, ...init.headers } });
}

async function json<T>(response: Promise<Response>, seen: Set<string>): Promise<[T, Response]> {
  const answer = await response;
  seen.add(answer.headers.get("Api-Version") ?? "none");
  if (!answer.ok) throw new Error(`${answer.url}: ${answer.status} ${await answer.text()}`);
  return [(await answer.json()) as T, answer];
}

const post = (body: unknown, headers: Record<string, string> = {}): RequestInit => ({
  method: "POST", headers: { "Content-Type": "application/json", ...headers }, body: JSON.stringify(body),
});

async function main(base: string, version: string): Promise<void> {
  const versions = new Set<string>();
  const [player] = await json<Created>(client(base, version)("/players", post({ name: "Typed Newest" })), versions);
  const api = client(base, version, player.token);
  let [game] = await json<Game>(api("/games", post(bySeed)), versions);
  const dealt = game.deal;
  for (let moves = 0; moves < 12 && game.status === "playing"; moves++) {
    const [legal, listed] = await json<LegalMoves>(api(`/games/${game.id}/legal-moves`), versions);
    const move: MoveBody | undefined = legal.moves.find((m) => m.type === "move") ?? legal.moves.find((m) => m.type !== "undo" && m.type !== "resign");
    if (move === undefined) break;
    const [reply] = await json<MoveReply>(api(`/games/${game.id}/moves`, post(move, { "If-Match": listed.headers.get("ETag") ?? "" })), versions);
    game = reply.game;
  }
  const resign: MoveBody = { type: "resign" };
  if (game.status === "playing") [{ game }] = await json<MoveReply>(api(`/games/${game.id}/moves`, post(resign)), versions);
  const events: EventPage["items"] = [];
  const links: (string | null)[] = [];
  let cursor: string | null = null;
  do {
    const query: string = cursor === null ? "limit=5" : `limit=5&cursor=${encodeURIComponent(cursor)}`;
    const [page, answer]: [EventPage, Response] = await json<EventPage>(api(`/games/${game.id}/events?${query}`), versions);
    events.push(...page.items);
    links.push(answer.headers.get("Link"));
    cursor = page.next;
  } while (cursor !== null);
  const [race] = await json<Race>(api("/races", post(secretRace)), versions);
  const [lobby] = await json<Lobby>(api("/races/open?limit=10"), versions);
  const [read] = await json<Race>(api(`/races/${race.id}`), versions);
  console.log(JSON.stringify({
    versions: [...versions], player: player.id, game: game.id, dealt, gameVersion: game.version, gamePlayer: game.player,
    gameStatus: game.status, finishedAt: game.finishedAt, moveCount: game.moveCount,
    events: events.map((event) => event.version), links, lobby: lobby.items.map((open) => who(open.creator)), lobbyNext: lobby.next,
    race: { id: read.id, creator: read.creator, standings: standings(read), over: raceOver(read), deal: read.deal },
  }));
}

const [base, version] = process.argv.slice(2);
if (base !== undefined && version !== undefined) {
  main(base, version).catch((error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  });
}
