// A tournament: `#/tournament/<id>`. Its state (`GET /api/poker/tournaments/<id>/state/`,
// the same body as the snapshot of `ws/poker/tournaments/<id>/`): level and
// blinds with the clock to the next level, players left, the prize pool and the
// payouts by place, the open tables, and the player's own entry with the table
// they sit at (opened when the tournament seats or moves them).
import "../i18n/poker.js";
import { api } from "../api.js";
import { openFeed } from "../feed.js";
import { language, t } from "../i18n.js";
import { clear, h, money, notify, refusal } from "../ui.js";

const TICK_MS = 1000;

/** A number of chips as the player's language writes numbers (1,500 / 1 500). */
function count(n) {
  return Number(n).toLocaleString(language() === "fr" ? "fr-FR" : "en-GB");
}

function clock(seconds) {
  if (seconds === null || seconds === undefined) return "–";
  const s = Math.max(0, Math.round(seconds));
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, "0")}`;
}

export async function mount(root, { tournamentId }) {
  let state = null;
  let info = null; // GET /api/poker/tournaments/<id>/ (levels, payouts, own registration)
  let standings = []; // GET /api/poker/tournaments/<id>/standings/
  let me = null;
  let receivedAt = Date.now();
  let version = null;
  let seenTable = null; // the table the page last saw the player seated at
  let sawRegistering = false; // the page was open before the start
  const status = h("p", { class: "feed-status", id: "feed-status", role: "status" }, t("feed.connecting"));
  const body = h("div", { class: "tournament", id: "tournament" });
  root.append(status, body);

  let standingsTimer = null;
  function loadStandings() {
    // Stacks change every hand and are not pushed on this channel: read them again after each event (debounced).
    clearTimeout(standingsTimer);
    standingsTimer = setTimeout(async () => {
      try {
        standings = await api(`poker/tournaments/${tournamentId}/standings/`);
        render();
      } catch {
        /* the next event tries again */
      }
    }, 300);
  }

  async function loadInfo() {
    try {
      info = await api(`poker/tournaments/${tournamentId}/`);
    } catch (error) {
      notify(refusal(error), "error");
    }
  }

  function adopt(next, { withMe }) {
    state = next;
    receivedAt = Date.now();
    if (withMe || next.me) me = next.me || null;
    // Seated or moved: open the table the tournament put the player at.
    // Seated at the start (the page was open while it registered) or moved since: open that table.
    // (Frames of one batch carry the same latest state: the start's may follow a "running" one without `me`.)
    if (next.state === "registering") sawRegistering = true;
    const startedHere = sawRegistering && seenTable === null;
    if (me && me.state === "playing" && me.table_id && me.table_id !== seenTable) {
      const opened = seenTable !== null || startedHere;
      seenTable = me.table_id;
      if (opened) {
        const number = (next.tables.find((x) => x.id === me.table_id) || { number: me.table_id }).number;
        notify(t(startedHere ? "tournament.seated_at" : "tournament.moved_to", { table: number, seat: me.seat }));
        location.hash = `#/poker/${me.table_id}`;
        return;
      }
    }
    render();
  }

  async function command(action) {
    try {
      await api(`poker/tournaments/${tournamentId}/${action}/`, { method: "POST", command: true });
      notify(t(action === "register" ? "tournament.registered_notice" : "tournament.unregistered_notice", { name: state.name }));
      window.dispatchEvent(new Event("casino:balance"));
    } catch (error) {
      notify(refusal(error), "error");
    }
    await loadInfo();
    feed.send({ type: "snapshot" });
    render();
  }

  function render() {
    if (!state) return;
    const currency = state.currency;
    const level = state.level;
    const left = state.next_level_in === null ? null : state.next_level_in - (Date.now() - receivedAt) / 1000;
    const registration = info && info.registration;
    const registeredState = (me && me.state) || (registration && registration.state);
    const actions = h("div", { class: "t-actions" });
    if (state.state === "registering") {
      if (registeredState === "registered") {
        actions.append(h("span", { class: "badge", id: "t-registered" }, t("tournament.you_are_registered")), " ",
          h("button", { id: "t-unregister", onclick: () => command("unregister") }, t("tournament.unregister")));
      } else if (info && info.registration_open) {
        actions.append(h("button", { class: "primary", id: "t-register", onclick: () => command("register") },
          t("tournament.register_for", { amount: money(info.buy_in, currency), fee: money(info.fee, currency) })));
      }
    }
    const mine = [];
    if (me) {
      mine.push(h("li", {}, t("tournament.your_entry", { state: t(`tournament.entry.${me.state}`) })));
      if (me.table_id) {
        mine.push(h("li", {}, h("a", { class: "button primary", id: "t-my-table", href: `#/poker/${me.table_id}` },
          t("tournament.go_to_table", { table: (state.tables.find((x) => x.id === me.table_id) || { number: me.table_id }).number, seat: me.seat }))));
      }
      if (me.stack !== null && me.stack !== undefined) mine.push(h("li", {}, t("tournament.your_stack", { chips: count(me.stack) })));
      if (me.place) {
        mine.push(h("li", { id: "t-my-place" }, t(me.tied ? "tournament.place_tied" : "tournament.place", { place: me.place }),
          me.prize ? ` · ${t("tournament.prize", { amount: money(me.prize, currency) })}` : ""));
      }
    }
    clear(body).append(
      h("h1", {}, state.name),
      h("p", { class: "t-summary" },
        h("span", { id: "t-state", class: `t-state ${state.state}` }, t(`tournament.state.${state.state}`)),
        ` · ${t(`tournament.kind.${state.kind}`)}`,
        state.hand_for_hand ? ` · ${t("tournament.hand_for_hand")}` : ""),
      actions,
      h("div", { class: "t-grid" },
        h("section", { "aria-labelledby": "t-level-title", class: "t-box" },
          h("h2", { id: "t-level-title" }, t("tournament.level")),
          level
            ? h("p", { id: "t-level" }, t("tournament.level_n", { n: level.number }), " · ",
              t("tournament.blinds_are", { sb: count(level.small_blind), bb: count(level.big_blind) }),
              level.ante ? ` · ${t("tournament.ante", { ante: count(level.ante) })}` : "")
            : h("p", { id: "t-level" }, t("tournament.not_started")),
          level && state.next_level_in !== null
            ? h("p", {}, t("tournament.next_level_in"), " ", h("strong", { id: "t-clock", class: "t-clock" }, clock(left)))
            : null),
        h("section", { "aria-labelledby": "t-players-title", class: "t-box" },
          h("h2", { id: "t-players-title" }, t("lobby.players")),
          h("p", { id: "t-players" }, state.state === "registering"
            ? t("tournament.registered_of", { n: state.entrants, max: info ? info.max_players : "?" })
            : t("tournament.players_left", { left: state.players_left, entrants: state.entrants })),
          state.average_stack !== null && state.state !== "registering"
            ? h("p", {}, t("tournament.average_stack", { chips: count(state.average_stack) })) : null,
          h("p", {}, t("tournament.starting_chips", { chips: count(state.starting_chips) }))),
        h("section", { "aria-labelledby": "t-prizes-title", class: "t-box" },
          h("h2", { id: "t-prizes-title" }, t("tournament.prizes")),
          h("p", {}, t("tournament.prize_pool", { amount: money(state.prize_pool.amount, currency) }),
            state.prize_pool.overlay ? ` (${t("tournament.overlay", { amount: money(state.prize_pool.overlay, currency) })})` : ""),
          h("ol", { id: "t-payouts", class: "payouts" }, state.payouts.map((p) => h("li", {},
            `${t("tournament.place", { place: p.place })}: ${money(p.amount, currency)}`)))),
        h("section", { "aria-labelledby": "t-me-title", class: "t-box" },
          h("h2", { id: "t-me-title" }, t("tournament.you")),
          mine.length ? h("ul", { id: "t-me" }, mine) : h("p", { class: "muted", id: "t-me" }, t("tournament.not_entered"))),
        h("section", { "aria-labelledby": "t-tables-title", class: "t-box" },
          h("h2", { id: "t-tables-title" }, t("tournament.tables")),
          state.tables.length
            ? h("ul", { id: "t-tables" }, state.tables.map((x) => h("li", {},
              h("a", { href: `#/poker/${x.id}` }, t("tournament.table_n", { n: x.number })),
              ` · ${t("tournament.table_players", { n: x.players })}`,
              state.final_table_id === x.id ? ` · ${t("tournament.final_table")}` : "")))
            : h("p", { class: "muted" }, t("tournament.no_tables")))),
      standingsTable(currency),
      info && info.levels ? levelsTable(info.levels, level && level.number) : null,
    );
  }

  function standingsTable(currency) {
    if (!standings.length) return null;
    return h("section", { "aria-labelledby": "t-standings-title", class: "t-standings" },
      h("h2", { id: "t-standings-title" }, t("tournament.standings")),
      h("table", { class: "lobby", id: "t-standings" },
        h("thead", {}, h("tr", {},
          h("th", { scope: "col" }, "#"),
          h("th", { scope: "col" }, t("tournament.player")),
          h("th", { scope: "col" }, t("tournament.chips")),
          h("th", { scope: "col" }, t("tournament.prize_col")))),
        h("tbody", {}, standings.map((row, index) => h("tr", { class: row.you ? "you" : "" },
          h("td", {}, row.place ? t(row.tied > 1 ? "tournament.place_tied" : "tournament.place", { place: row.place }) : index + 1),
          h("th", { scope: "row" }, row.username, row.you ? ` (${t("poker.you")})` : ""),
          h("td", {}, row.chips === null ? t(`tournament.entry.${row.state}`) : count(row.chips)),
          h("td", {}, row.prize ? money(row.prize, currency) : ""))))));
  }

  function levelsTable(levels, current) {
    return h("details", { class: "t-levels" },
      h("summary", {}, t("tournament.structure")),
      h("table", { class: "lobby" },
        h("thead", {}, h("tr", {},
          h("th", { scope: "col" }, t("tournament.level")),
          h("th", { scope: "col" }, t("poker.blinds")),
          h("th", { scope: "col" }, t("tournament.ante_col")),
          h("th", { scope: "col" }, t("tournament.minutes")))),
        h("tbody", {}, levels.map((l, i) => h("tr", { class: current === i + 1 ? "current" : "" },
          h("td", {}, i + 1), h("td", {}, `${l.small_blind} / ${l.big_blind}`), h("td", {}, l.ante || 0),
          h("td", {}, Math.round(l.duration_seconds / 60)))))));
  }

  await loadInfo();
  try {
    adopt(await api(`poker/tournaments/${tournamentId}/state/`), { withMe: true });
    loadStandings();
  } catch (error) {
    notify(refusal(error), "error");
  }

  const feed = openFeed(`poker/tournaments/${tournamentId}`, {
    onSnapshot(message) {
      version = message.version;
      adopt(message.state, { withMe: true });
    },
    onMessage(message) {
      if (message.type !== "state") return;
      if (version !== null && message.version > version + 1) {
        feed.send({ type: "snapshot" }); // a gap: start again from a snapshot
        return;
      }
      version = message.version;
      const event = message.event || {};
      if (["registered", "unregistered", "started"].some((x) => event.type === `poker_tournament.${x}`)) loadInfo().then(render);
      adopt(message.state, { withMe: false });
      loadStandings();
    },
    onStatus(s) {
      status.className = `feed-status ${s.state}`;
      status.textContent = s.reason ? t(s.reason) : t(`feed.${s.state}`);
    },
  });

  const timer = setInterval(() => {
    const element = document.getElementById("t-clock");
    if (!element || !state || state.next_level_in === null) return;
    element.textContent = clock(state.next_level_in - (Date.now() - receivedAt) / 1000);
  }, TICK_MS);

  return () => {
    clearInterval(timer);
    clearTimeout(standingsTimer);
    feed.close();
  };
}
