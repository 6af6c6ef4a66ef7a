// The lobby's poker section: ring tables (stakes, seats taken, a link to the
// table) and tournaments (state, buy-in, players, register / unregister, a link).
import "../i18n/poker.js";
import { api } from "../api.js";
import { t } from "../i18n.js";
import { h, money, notify, refusal } from "../ui.js";

const REFRESH_MS = 5000;

function stakes(table) {
  const blinds = `${money(table.small_blind, table.currency)} / ${money(table.big_blind, table.currency)}`;
  return table.ante ? `${blinds} ${t("poker.ante_short", { ante: money(table.ante, table.currency) })}` : blinds;
}

/** A list table: a header row of `keys` (translated; "" for an unnamed column) over `body`. */
export function listTable(attrs, keys, body) {
  return h("table", { class: "lobby", ...attrs },
    h("thead", {}, h("tr", {}, keys.map((key) => h("th", { scope: "col" }, key ? t(key) : "")))),
    body);
}

function tableRow(table) {
  return h(
    "tr",
    { dataset: { table: table.code } },
    h("th", { scope: "row" }, `${table.name} (${table.code})`),
    h("td", {}, t(`poker.variant.${table.variant}`)),
    h("td", {}, stakes(table)),
    h("td", {}, `${money(table.buy_in_min, table.currency)} – ${money(table.buy_in_max, table.currency)}`),
    h("td", {}, t("poker.seats_taken", { seated: table.seated, max: table.max_seats })),
    h(
      "td",
      {},
      table.is_open
        ? h("a", { class: "button", href: `#/poker/${table.id}`, id: `open-poker-${table.code}` }, t("poker.open_table"))
        : t("lobby.closed"),
    ),
  );
}

function startText(tournament) {
  if (tournament.kind === "sit_and_go") return t("tournament.starts_when_full");
  return tournament.start_at ? new Date(tournament.start_at).toLocaleString() : "";
}

export async function mount(section) {
  const tablesBody = h("tbody", { id: "poker-tables" });
  const tournamentsBody = h("tbody", { id: "poker-tournaments" });
  const mine = new Map(); // tournament id -> the player's entry state there (the lobby's `your_entry`)
  section.append(
    h("h2", { id: "poker-title" }, t("lobby.poker")),
    listTable({ "aria-labelledby": "poker-title" },
      ["lobby.table", "lobby.game", "poker.blinds", "poker.buy_in", "lobby.players", ""], tablesBody),
    h("h2", { id: "tournaments-title" }, t("lobby.tournaments")),
    listTable({ "aria-labelledby": "tournaments-title" },
      ["tournament.name", "tournament.state", "tournament.buy_in", "lobby.players", "tournament.start", ""], tournamentsBody),
  );

  async function command(tournament, action) {
    try {
      await api(`poker/tournaments/${tournament.id}/${action}/`, { method: "POST", command: true });
      notify(t(action === "register" ? "tournament.registered_notice" : "tournament.unregistered_notice",
        { name: tournament.name }));
      window.dispatchEvent(new Event("casino:balance"));
    } catch (error) {
      notify(refusal(error), "error");
    }
    await refresh();
  }

  function tournamentRow(tournament) {
    const registered = mine.has(tournament.id);
    const fee = tournament.fee ? ` + ${money(tournament.fee, tournament.currency)}` : "";
    const buttons = [];
    if (registered && tournament.state === "registering") {
      buttons.push(h("button", { id: `unregister-${tournament.id}`, onclick: () => command(tournament, "unregister") },
        t("tournament.unregister")));
    } else if (!registered && tournament.registration_open) {
      buttons.push(h("button", { class: "primary", id: `register-${tournament.id}`,
        onclick: () => command(tournament, "register") }, t("tournament.register")));
    }
    return h(
      "tr",
      { dataset: { tournament: tournament.id } },
      h("th", { scope: "row" }, h("a", { href: `#/tournament/${tournament.id}` }, tournament.name)),
      h("td", { class: "t-state" }, t(`tournament.state.${tournament.state}`),
        registered ? h("span", { class: "badge", id: `registered-${tournament.id}` }, t(`tournament.entry.${mine.get(tournament.id)}`)) : null),
      h("td", {}, `${money(tournament.buy_in, tournament.currency)}${fee}`),
      h("td", { class: "t-players" }, `${tournament.registered} / ${tournament.max_players}`),
      h("td", {}, startText(tournament)),
      h("td", { class: "actions" }, ...buttons,
        h("a", { class: "button", href: `#/tournament/${tournament.id}` }, t("tournament.open"))),
    );
  }

  async function refresh() {
    try {
      const [tables, tournaments] = await Promise.all([api("poker/tables/"), api("poker/tournaments/")]);
      tablesBody.replaceChildren(...tables.map(tableRow));
      if (!tables.length) tablesBody.append(h("tr", {}, h("td", { colspan: 6 }, t("poker.no_tables"))));
      const open = tournaments.filter((x) => !["finished", "cancelled"].includes(x.state));
      mine.clear();
      for (const x of open) if (x.your_entry) mine.set(x.id, x.your_entry);
      tournamentsBody.replaceChildren(...open.map(tournamentRow));
      if (!open.length) tournamentsBody.append(h("tr", {}, h("td", { colspan: 6 }, t("tournament.none"))));
    } catch (error) {
      notify(refusal(error), "error");
    }
  }
  await refresh();
  const timer = setInterval(refresh, REFRESH_MS);
  return () => clearInterval(timer);
}
