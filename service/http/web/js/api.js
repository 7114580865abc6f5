// The public HTTP API, as any client sees it: JSON in and out, problem+json errors, and the
// server's Retry-After honoured on 429 (rate limited) and 503 (unavailable). Every request names
// the API version whose shapes this page is written for (API_VERSION).

import { randomKey, sleep } from "./dom.js";

/**
 * The API version this page reads and writes (docs/versions.md): sent as `Api-Version` on every
 * request and stream, because the page's code knows this version's shapes and no other. A newer
 * version may rename what the page reads, so the page moves to it only with its code; a test
 * (tests/api/test_web_version.py) fails once the server's newest version is not this one.
 */
export const API_VERSION = "2026-12-05";

const MAX_WAITS = 6; // how many times one request waits for Retry-After before giving up
const LONGEST_WAIT_SECONDS = 60;

/** An error reply of the API (or no reply at all: status 0), with the server's own words. */
export class ApiError extends Error {
  constructor(status, problem) {
    super(problem?.detail || problem?.title || `the server answered ${status}`);
    this.status = status;
    this.code = problem?.code || (status === 0 ? "unreachable" : "error");
    this.problem = problem;
  }
}

const waitListeners = new Set();
let readerToken = () => null;

/**
 * Where game reads get their bearer token: a daily game during its date and a race game while its
 * race runs answer only to their player, so the page sends its player's token on every game read
 * (other games ignore it). `source()` returns the token or null.
 */
export function authenticateReads(source) {
  readerToken = source;
}

/** The token game reads and streams send now (null without a player). */
export const currentReaderToken = () => readerToken();

/** `listener(seconds, reason)` is told whenever a request waits before retrying (0: done waiting). */
export function onWait(listener) {
  waitListeners.add(listener);
  return () => waitListeners.delete(listener);
}

function tell(seconds, reason) {
  for (const listener of waitListeners) listener(seconds, reason);
}

/** Seconds from a Retry-After header (seconds or an HTTP date); 1 when missing or unreadable. */
export function retryAfterSeconds(header) {
  if (!header) return 1;
  const seconds = Number(header);
  if (Number.isFinite(seconds)) return Math.min(LONGEST_WAIT_SECONDS, Math.max(0, seconds));
  const date = Date.parse(header);
  if (Number.isFinite(date)) return Math.min(LONGEST_WAIT_SECONDS, Math.max(0, (date - Date.now()) / 1000));
  return 1;
}

/**
 * One API call. `retry` says what may be sent again: "safe" (reads, and writes with an
 * Idempotency-Key: 429, 503 and lost connections are retried) or "once" (a write that must not
 * be applied twice: only a 429, which the server answers before doing anything, is retried).
 * Resolves to `{ data, status, etag }`; rejects with ApiError.
 */
export async function request(path, { method = "GET", body, token, headers = {}, retry, signal } = {}) {
  const mode = retry || (method === "GET" ? "safe" : "once");
  const sent = { Accept: "application/json", "Api-Version": API_VERSION, ...headers };
  if (body !== undefined) sent["Content-Type"] = "application/json";
  if (token) sent.Authorization = `Bearer ${token}`;
  for (let waits = 0; ; waits++) {
    let response;
    try {
      response = await fetch(path, { method, headers: sent, signal, cache: "no-store",
        body: body === undefined ? undefined : JSON.stringify(body) });
    } catch (error) {
      if (signal?.aborted) throw error;
      if (mode === "safe" && waits < MAX_WAITS) {
        tell(2, "the server cannot be reached");
        await sleep(2000, signal);
        continue;
      }
      tell(0);
      throw new ApiError(0, { detail: "The server cannot be reached: check the connection and try again." });
    }
    const again = response.status === 429 || (response.status === 503 && mode === "safe");
    if (again && waits < MAX_WAITS) {
      const seconds = retryAfterSeconds(response.headers.get("Retry-After"));
      tell(seconds, response.status === 429 ? "the server asked us to slow down" : "the server is busy");
      await response.body?.cancel();
      await sleep(seconds * 1000, signal);
      continue;
    }
    if (waits > 0) tell(0);
    const data = await readBody(response);
    if (!response.ok) throw new ApiError(response.status, data);
    return { data, status: response.status, etag: response.headers.get("ETag") };
  }
}

async function readBody(response) {
  const text = await response.text();
  if (!text) return null;
  try {
    return JSON.parse(text);
  } catch {
    return { detail: text.slice(0, 200) };
  }
}

// ------------------------------------------------------------------ the calls the page makes

/**
 * The ETag of a game at `version` in this page's API version: a later version's tags carry its
 * name, `"12;2026-12-05"` (docs/versions.md), so a tag of one version never matches in another.
 * The page knows a game's version from views and stream messages alike, which carry no ETag.
 */
const gameTag = (version) => `"${version};${API_VERSION}"`;

/** A read of a game's data, with the player's token (private games answer only to it). */
const readGame = (path) => request(path, { token: readerToken() });

export const api = {
  // the page keeps a token of its own, named so the player can tell it apart and revoke it alone
  register: (name) => request("/players", { method: "POST", body: { name, tokenName: "web table" } }),
  player: (id) => request(`/players/${id}`),
  stats: (playerId) => request(`/players/${playerId}/stats`),
  /** A page of a player's games, newest first: `{ items, next }`; `cursor` is the `next` of the page before. */
  games: (playerId, { limit = 20, cursor, status } = {}) => {
    const query = new URLSearchParams({ limit: String(limit) });
    if (cursor) query.set("cursor", cursor);
    if (status) query.set("status", status);
    return request(`/players/${playerId}/games?${query}`);
  },
  rulesets: () => request("/rulesets"),
  rulesetVersion: (id, version) => request(`/rulesets/${encodeURIComponent(id)}/versions/${version}`),
  pools: () => request("/deals/pool"),
  daily: (day = "today") => request(day === "today" ? "/deals/daily" : `/deals/daily/${day}`),
  /** A page of a daily leaderboard: `{ items, next, closed, ... }`. */
  leaderboard: (day, limit = 200) => request(`/deals/daily/${day}/leaderboard?limit=${limit}`),
  deal: (token, ruleset, deal) => request("/games", { method: "POST", token,
    body: deal ? { ruleset, deal } : { ruleset } }),
  game: (id) => readGame(`/games/${id}`),
  legalMoves: (id) => readGame(`/games/${id}/legal-moves`),
  hints: (id) => readGame(`/games/${id}/hints`),
  solverHint: (id, token) => request(`/games/${id}/hints?solver=true`, { token }),
  /** A page of a game's event log: `{ items, next }`; `cursor` is the `next` of the page before. */
  events: (id, cursor = null, limit = 200) => readGame(`/games/${id}/events?limit=${limit}`
    + (cursor ? `&cursor=${encodeURIComponent(cursor)}` : "")),
  stateAt: (id, version) => readGame(`/games/${id}/states/${version}`),
  analysis: (id) => readGame(`/games/${id}/analysis`),
  /** Ask for a game's analysis: asking again answers the same job, so it is safe to resend. */
  requestAnalysis: (id, token) => request(`/games/${id}/analysis`, { method: "POST", token, retry: "safe" }),
  lessons: () => request("/lessons"),
  lesson: (id) => request(`/lessons/${encodeURIComponent(id)}`),
  /** A page of the open races, newest first: `{ items, next }`. */
  openRaces: (limit = 20) => request(`/races/open?limit=${limit}`),
  race: (id) => request(`/races/${id}`),
  createRace: (token, body) => request("/races", { method: "POST", token, body }),
  joinRace: (id, token) => request(`/races/${id}/entries`, { method: "POST", token }),
  startRace: (id, token) => request(`/races/${id}/start`, { method: "POST", token }),
  /** The player behind `token`, with its settings (`acceptChallengesFrom`). */
  me: (token) => request("/players/me", { token }),
  /** Whom the player accepts challenges from: "everyone", "humans" or "nobody". */
  setChallengePolicy: (token, policy) => request("/players/me", { method: "PATCH", token,
    body: { acceptChallengesFrom: policy }, retry: "safe" }),
  ratings: (playerId) => request(`/players/${playerId}/ratings`),
  /** A page of a player's rating history in `ruleset`, newest first: `{ items, next }`. */
  ratingHistory: (playerId, ruleset, limit = 200) =>
    request(`/players/${playerId}/ratings/${encodeURIComponent(ruleset)}/history?limit=${limit}`),
  challenge: (token, body) => request("/challenges", { method: "POST", token, body,
    retry: "safe", headers: { "Idempotency-Key": randomKey() } }),
  /** The caller's pending challenges, made and received, newest first: `{ items, next }`. */
  challenges: (token, limit = 50) => request(`/challenges?limit=${limit}`, { token }),
  /** Accept a challenge: the race view (it has started); accepting again answers the same race. */
  acceptChallenge: (id, token) => request(`/challenges/${id}/accept`, { method: "POST", token, retry: "safe" }),
  declineChallenge: (id, token) => request(`/challenges/${id}/decline`, { method: "POST", token }),
  cancelChallenge: (id, token) => request(`/challenges/${id}/cancel`, { method: "POST", token }),
  /** A page of the tournaments, newest first (`status`: only those of one status): `{ items, next }`. */
  tournaments: ({ status, cursor, limit = 20 } = {}) => {
    const query = new URLSearchParams({ limit: String(limit) });
    if (status) query.set("status", status);
    if (cursor) query.set("cursor", cursor);
    return request(`/tournaments?${query}`);
  },
  tournament: (id) => request(`/tournaments/${id}`),
  createTournament: (token, body) => request("/tournaments", { method: "POST", token, body,
    retry: "safe", headers: { "Idempotency-Key": randomKey() } }),
  enterTournament: (id, token) => request(`/tournaments/${id}/entries`, { method: "POST", token }),
  /** Be dealt your next deal of a tournament: its game's view. */
  nextTournamentGame: (id, token) => request(`/tournaments/${id}/games`, { method: "POST", token }),
  /** A move at the version the player saw (If-Match), safe to resend (Idempotency-Key). */
  move: (id, token, move, version) => request(`/games/${id}/moves`, {
    method: "POST", token, body: move, retry: "safe",
    headers: { "If-Match": gameTag(version), "Idempotency-Key": randomKey() },
  }),
};
