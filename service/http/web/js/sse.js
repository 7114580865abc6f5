// Server-Sent Events read with fetch. EventSource cannot send an Authorization header, and a daily
// game during its date or a race game while its race runs streams only to its player's token; so
// this reader fetches the stream with the token, parses the text/event-stream body itself, and
// reconnects as EventSource would (Last-Event-ID, backoff), honouring a 429's or 503's Retry-After.

import { API_VERSION, ApiError, retryAfterSeconds } from "./api.js";
import { sleep } from "./dom.js";

const BACKOFF_MS = [1000, 2000, 5000, 10000, 30000]; // after the 1st, 2nd, ... failure in a row

/**
 * Read the event stream at `path` until stopped, the `endEvent` arrives, or the server answers 204.
 * options:
 *   token()          the bearer token to send (or null), asked again at every connection
 *   resume           true: reconnect with Last-Event-ID, the id of the last message received
 *   onMessage(m)     each message: `{ event, data, id }` (`event` is "message" when unnamed)
 *   onRefused(err)   a refusal other than 429/503 (401, 403, 404 ...): an ApiError; reading stops
 *   endEvent         the message after which nothing more will come ("end")
 *   onOpen()         each time a connection is accepted (the first and every reconnection)
 *   onBusy(status)   a 429 or 503: true stops reading (else it waits Retry-After and tries again)
 * Returns `stop()`.
 */
export function readEvents(path, { token = () => null, resume = true, onMessage, onRefused = () => {}, endEvent = "end",
  onOpen = () => {}, onBusy = () => false }) {
  const controller = new AbortController();
  const { signal } = controller;
  let lastId = null;
  let failures = 0;
  let serverRetryMs = null; // a `retry:` field, if the server sends one

  function backoff() {
    const base = failures === 0 && serverRetryMs !== null ? serverRetryMs : BACKOFF_MS[Math.min(failures, BACKOFF_MS.length - 1)];
    failures += 1;
    return base * (0.8 + Math.random() * 0.4); // spread out the reconnections of many pages
  }

  /** One connection: resolves to `{ done: true }` or `{ waitMs }` before the next attempt. */
  async function connect() {
    const headers = { Accept: "text/event-stream", "Api-Version": API_VERSION };
    const bearer = token();
    if (bearer) headers.Authorization = `Bearer ${bearer}`;
    if (resume && lastId !== null) headers["Last-Event-ID"] = lastId;
    const response = await fetch(path, { headers, signal, cache: "no-store" });
    if (response.status === 204) return { done: true }; // resumed after the end: nothing more will come
    if (response.status === 429 || response.status === 503) {
      await response.body?.cancel();
      if (onBusy(response.status)) return { done: true };
      failures += 1;
      return { waitMs: retryAfterSeconds(response.headers.get("Retry-After")) * 1000 };
    }
    if (!response.ok) {
      onRefused(new ApiError(response.status, await problemOf(response)));
      return { done: true };
    }
    onOpen();
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    const parser = messageParser((message) => {
      failures = 0;
      onMessage(message);
    });
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return { waitMs: backoff() }; // the connection ended without the end: reconnect
      if (parser.push(value) === endEvent) {
        await reader.cancel();
        return { done: true };
      }
    }
  }

  /** The `text/event-stream` format: lines of `field: value`, a blank line ends a message. */
  function messageParser(dispatch) {
    let buffer = "";
    let event = "";
    let data = [];
    return {
      /** Feed decoded text; returns the name of the last message dispatched, if any. */
      push(text) {
        let chunk = buffer + text;
        let held = "";
        if (chunk.endsWith("\r")) { // maybe the first half of \r\n: wait for the next chunk
          held = "\r";
          chunk = chunk.slice(0, -1);
        }
        const lines = chunk.split(/\r\n|\r|\n/);
        buffer = lines.pop() + held;
        let dispatched = null;
        for (const line of lines) {
          if (line === "") {
            if (data.length > 0) {
              dispatched = event || "message";
              dispatch({ event: dispatched, data: data.join("\n"), id: lastId });
            }
            event = "";
            data = [];
            continue;
          }
          if (line.startsWith(":")) continue; // a comment: the server's keep-alive
          const colon = line.indexOf(":");
          const field = colon < 0 ? line : line.slice(0, colon);
          let value = colon < 0 ? "" : line.slice(colon + 1);
          if (value.startsWith(" ")) value = value.slice(1);
          if (field === "event") event = value;
          else if (field === "data") data.push(value);
          else if (field === "id" && !value.includes("\0")) lastId = value;
          else if (field === "retry" && /^[0-9]+$/.test(value)) serverRetryMs = Number(value);
        }
        return dispatched;
      },
    };
  }

  (async () => {
    while (!signal.aborted) {
      let waitMs;
      try {
        const outcome = await connect();
        if (outcome.done) return;
        waitMs = outcome.waitMs;
      } catch {
        if (signal.aborted) return;
        waitMs = backoff(); // the connection failed or broke off
      }
      try {
        await sleep(waitMs, signal);
      } catch {
        return; // stopped while waiting
      }
    }
  })();

  return () => controller.abort();
}

async function problemOf(response) {
  try {
    return await response.json();
  } catch {
    return null;
  }
}
