// The player's poker hands (`GET /api/poker/hands/`) and a hand's step-by-step
// replay (`GET /api/poker/hands/<id>/replay/`): the state after each event, as
// the API redacts it for this player (others' cards only where shown).
import "../i18n/poker.js";
import { api } from "../api.js";
import { t } from "../i18n.js";
import { card, clear, h, money, notify, refusal } from "../ui.js";
import { listTable } from "./lobby_poker.js";

const PAGE = 10;

/** Text for one replay step's event (the engine's or the dealer's). */
export function describe(event, currency) {
  const chips = (amount) => money(amount, currency);
  const seat = event.seat;
  switch (event.type) {
    case "poker.hand_started":
      return t("replay.started", { button: event.button, players: event.seats.length });
    case "poker.ante_posted":
      return t("replay.ante", { seat, amount: chips(event.amount) });
    case "poker.blind_posted":
      return t(`replay.blind.${event.kind}`, { seat, amount: chips(event.amount) });
    case "poker.hole_cards_dealt":
      return t("replay.dealt", { seat });
    case "poker.action_taken":
      return t(`replay.action.${event.action}`, { seat, amount: chips(event.amount), total: chips(event.total) });
    case "poker.uncalled_bet_returned":
      return t("replay.returned", { seat, amount: chips(event.amount) });
    case "poker.betting_round_ended":
      return t("replay.round_ended", { street: t(`replay.street.${event.street}`) });
    case "poker.board_dealt":
      return t("replay.board", { street: t(`replay.street.${event.street}`), cards: event.cards.join(" ") });
    case "poker.hand_shown":
      return t("replay.shown", { seat, cards: event.cards.join(" ") });
    case "poker.hand_mucked":
      return t("replay.mucked", { seat });
    case "poker.rake_taken":
      return t("replay.rake", { amount: chips(event.amount) });
    case "poker.pot_awarded":
      return event.winners
        .map(([winner, amount]) => t(event.index === 0 ? "replay.pot_main" : "replay.pot_side", { seat: winner, amount: chips(amount), n: event.index }))
        .join(" · ");
    case "poker.hand_ended":
      return t("replay.ended");
    default:
      return event.type;
  }
}

function dealerNotes(step) {
  return (step.dealer || []).map((note) => {
    if (note.type === "poker_hand.timed_out") return t(note.disconnected ? "replay.timed_out_away" : "replay.timed_out", { seat: note.seat, action: note.action });
    if (note.type === "poker_hand.turn" && note.time_bank) return t(`replay.bank.${note.bank || "thinking"}`, { seat: note.seat });
    return null;
  }).filter(Boolean);
}

export function mountHistory(section) {
  let offset = 0;
  let alive = true;
  const list = h("tbody", { id: "hand-list" });
  const replayBox = h("div", { class: "replay", id: "replay" });
  const more = h("div", { class: "pager" });
  section.append(
    h("h2", { id: "history-title" }, t("history.title")),
    h("button", { id: "history-refresh", onclick: () => load() }, t("history.refresh")),
    listTable({ class: "lobby hands", "aria-labelledby": "history-title" },
      ["history.hand", "lobby.table", "history.seat", "history.net", "history.when", ""], list),
    more,
    replayBox,
  );

  async function load() {
    try {
      const page = await api("poker/hands/", { query: { limit: PAGE, offset } });
      if (!alive) return;
      list.replaceChildren(...page.results.map((row) => h("tr", { dataset: { hand: row.hand_id } },
        h("th", { scope: "row" }, row.hand_id),
        h("td", {}, row.table),
        h("td", {}, row.seat),
        h("td", { class: row.net > 0 ? "plus" : row.net < 0 ? "minus" : "" }, row.net === null ? t(`history.status.${row.status}`) : money(row.net, row.currency)),
        h("td", {}, row.started_at ? new Date(row.started_at).toLocaleTimeString() : ""),
        h("td", {}, h("button", { class: "replay-open", onclick: () => openReplay(row) }, t("history.replay"))))));
      if (!page.results.length) list.append(h("tr", {}, h("td", { colspan: 6 }, t("history.none"))));
      clear(more);
      if (offset > 0) more.append(h("button", { onclick: () => { offset = Math.max(0, offset - PAGE); load(); } }, t("history.newer")));
      if (offset + PAGE < page.count) more.append(h("button", { onclick: () => { offset += PAGE; load(); } }, t("history.older")));
    } catch (error) {
      notify(refusal(error), "error");
    }
  }

  async function openReplay(row) {
    let replay;
    try {
      replay = await api(`poker/hands/${encodeURIComponent(row.hand_id)}/replay/`);
    } catch (error) {
      notify(refusal(error), "error");
      return;
    }
    const steps = replay.steps;
    let index = 0;
    const stage = h("div", { class: "replay-stage", id: "replay-stage", "aria-live": "polite" });
    const position = h("span", { id: "replay-position" });
    const buttons = {
      first: h("button", { id: "replay-first", "aria-label": t("replay.first"), onclick: () => show(0) }, "«"),
      prev: h("button", { id: "replay-prev", "aria-label": t("replay.prev"), onclick: () => show(index - 1) }, "◀"),
      next: h("button", { id: "replay-next", "aria-label": t("replay.next"), onclick: () => show(index + 1) }, "▶"),
      last: h("button", { id: "replay-last", "aria-label": t("replay.last"), onclick: () => show(steps.length - 1) }, "»"),
    };
    function show(at) {
      index = Math.max(0, Math.min(steps.length - 1, at));
      const step = steps[index];
      const state = step.state;
      position.textContent = t("replay.step", { n: index + 1, of: steps.length });
      buttons.first.disabled = buttons.prev.disabled = index === 0;
      buttons.next.disabled = buttons.last.disabled = index === steps.length - 1;
      clear(stage).append(
        h("p", { class: "replay-event", id: "replay-event" }, describe(step.event, row.currency),
          ...dealerNotes(step).map((note) => h("span", { class: "muted" }, ` (${note})`))),
        h("div", { class: "board" }, state.board.map((c) => card(c))),
        h("p", {}, t("poker.pot", { amount: money(state.pot, row.currency) })),
        h("ul", { class: "replay-players" }, state.players.map((p) => h("li", { class: p.folded ? "folded" : "" },
          h("strong", {}, t("poker.seat_n", { n: p.seat })), p.seat === row.seat ? ` (${t("poker.you")})` : "",
          " ", money(p.stack, row.currency),
          p.bet ? ` · ${t("poker.bet_amount", { amount: money(p.bet, row.currency) })}` : "",
          p.folded ? ` · ${t("poker.folded")}` : "",
          p.won ? ` · ${t("poker.won", { amount: money(p.won, row.currency) })}` : "",
          " ", h("span", { class: "hole" }, (p.cards || (p.folded ? [] : [null, null])).map((c) => card(c)))))),
      );
    }
    const panel = h("div", { class: "replay-panel", tabindex: "-1", "aria-labelledby": "replay-title" },
      h("h3", { id: "replay-title" }, t("replay.title", { id: row.hand_id })),
      replay.voided ? h("p", { class: "error" }, t("poker.voided", { reason: replay.reason || "" })) : null,
      h("div", { class: "replay-controls", role: "group", "aria-label": t("replay.controls") },
        buttons.first, buttons.prev, position, buttons.next, buttons.last,
        h("button", { id: "replay-close", onclick: () => clear(replayBox) }, t("close"))),
      stage);
    panel.addEventListener("keydown", (event) => {
      if (event.key === "ArrowRight") show(index + 1);
      else if (event.key === "ArrowLeft") show(index - 1);
      else if (event.key === "Home") show(0);
      else if (event.key === "End") show(steps.length - 1);
      else if (event.key === "Escape") clear(replayBox);
      else return;
      event.preventDefault();
    });
    clear(replayBox).append(panel);
    show(0);
    buttons.next.focus();
  }

  load();
  return () => {
    alive = false;
  };
}
