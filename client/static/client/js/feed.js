// One websocket feed (docs/websocket.md): a one-use ticket per connection, the
// snapshot first, deltas applied in seq order (a gap asks for a snapshot), and
// reconnection with `since` = the last seq applied. Close codes are explained to
// the player: 4408 "too slow" reconnects, 4409 "replaced by another window" stops.
import { api } from "./api.js";

export const CLOSE_REASONS = {
  4401: "feed.closed.unauthenticated",
  4404: "feed.closed.not_found",
  4408: "feed.closed.too_slow",
  4409: "feed.closed.replaced",
};

/**
 * Open the feed at `ws/<path>/` (`tables/7`, `poker/3`, `poker/tournaments/2`).
 * handlers: onSnapshot(msg), onDelta(msg), onPrivate(msg), onMessage(msg) (every other type),
 * onStatus({state: "open"|"reconnecting"|"closed", code, reason}).
 * `resume(msg)` returns the `since` to send on reconnect (house: the seq; poker: its token).
 */
export function openFeed(path, handlers = {}) {
  let socket = null;
  let stopped = false;
  let lastSeq = null;
  let attempts = 0;
  let timer = null;
  const status = (state, extra = {}) => handlers.onStatus && handlers.onStatus({ state, ...extra });

  async function connect() {
    if (stopped) return;
    let ticket;
    try {
      ticket = (await api("auth/ws-ticket/", { method: "POST" })).ticket;
    } catch (error) {
      status("closed", { code: error.code, reason: "feed.closed.unauthenticated" });
      return;
    }
    const scheme = location.protocol === "https:" ? "wss" : "ws";
    const params = new URLSearchParams({ ticket });
    const since = handlers.resume ? handlers.resume() : lastSeq;
    if (since !== null && since !== undefined && since !== "") params.set("since", since);
    socket = new WebSocket(`${scheme}://${location.host}/ws/${path}/?${params}`);
    socket.onopen = () => {
      attempts = 0;
      status("open");
    };
    socket.onmessage = (event) => {
      let message;
      try {
        message = JSON.parse(event.data);
      } catch {
        return;
      }
      if (message.type === "snapshot") {
        if (typeof message.seq === "number") lastSeq = message.seq;
        handlers.onSnapshot && handlers.onSnapshot(message);
      } else if (message.type === "delta") {
        if (typeof message.seq === "number" && lastSeq !== null) {
          if (message.seq <= lastSeq) return; // already applied
          if (message.seq !== lastSeq + 1) {
            send({ type: "snapshot" }); // a gap: start again from a snapshot
            return;
          }
        }
        if (typeof message.seq === "number") lastSeq = message.seq;
        handlers.onDelta && handlers.onDelta(message);
      } else if (message.type === "private") {
        handlers.onPrivate && handlers.onPrivate(message);
      } else if (message.type === "notice" && message.notice) {
        // A notice to the player (a reality check): shown by the shell whatever the view (main.js).
        window.dispatchEvent(new CustomEvent("casino:notice", { detail: message.notice }));
        handlers.onMessage && handlers.onMessage(message);
      } else if (handlers.onMessage) {
        handlers.onMessage(message);
      }
    };
    socket.onclose = (event) => {
      socket = null;
      if (stopped) return;
      const reason = CLOSE_REASONS[event.code];
      if (event.code === 4409 || event.code === 4404 || event.code === 4401) {
        status("closed", { code: event.code, reason });
        return;
      }
      attempts += 1;
      const delay = Math.min(10000, 500 * 2 ** Math.min(attempts, 5));
      status("reconnecting", { code: event.code, reason, delay });
      timer = setTimeout(connect, delay);
    };
  }

  function send(message) {
    if (socket && socket.readyState === WebSocket.OPEN) {
      socket.send(JSON.stringify(message));
      return true;
    }
    return false;
  }

  connect();
  return {
    send,
    get lastSeq() {
      return lastSeq;
    },
    close() {
      stopped = true;
      clearTimeout(timer);
      if (socket) socket.close(1000);
    },
  };
}
