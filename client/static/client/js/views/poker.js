// A poker ring (or tournament) table: `#/poker/<id>`. Everything shown comes from
// the table's view as the API presents it to this player (REST
// `GET /api/poker/tables/<id>/` and the same body in the websocket's snapshot):
// seats, the hand, our own hole cards, the legal range when it is our turn. A
// frame of the feed (a hand event, a seat event) asks the socket for a fresh
// snapshot, so what the page shows is always the server's redacted view; the
// events themselves give the showdown's results and the resume token.
import "../i18n/poker.js";
import { api } from "../api.js";
import { openFeed } from "../feed.js";
import { language, t } from "../i18n.js";
import { card, clear, h, money, notify, refusal } from "../ui.js";
import { mountHistory } from "./poker_history.js";

const SNAPSHOT_DEBOUNCE_MS = 120;
const CLOCK_TICK_MS = 250;

/** The raise-to amount of a preset, clamped to the engine's legal range (the API's `min_to`..`max_to`). */
export function presetAmount(preset, { legal, pot, maxBet, myBet, myStack }) {
  const potAfterCall = pot + legal.call_amount;
  const wanted = {
    min: legal.min_to,
    half: maxBet + Math.floor(potAfterCall / 2),
    pot: maxBet + potAfterCall,
    all: myBet + myStack,
  }[preset];
  return Math.max(legal.min_to, Math.min(legal.max_to, wanted));
}

export async function mount(root, { tableId: initialTableId }) {
  let tableId = initialTableId;
  let view = null; // the last table view (snapshot body)
  let clockOffset = 0; // server time - local time, ms
  let tableVersion = null;
  let handVersion = 0;
  let handId = "";
  let current = null; // the hand being followed: {hand_id, shown: {seat: {cards, strength}}, awards: [...]}
  let results = null; // the last hand that ended (shown until the next one ends)
  let snapshotTimer = null;
  let busy = false;
  let chosen = null; // {turn, amount}: the bet size picked for this turn survives a redraw
  let closedReason = null;

  const status = h("p", { class: "feed-status", id: "feed-status", role: "status" }, t("feed.connecting"));
  const header = h("div", { class: "poker-header" });
  const felt = h("section", { class: "poker-felt", id: "poker-felt", "aria-label": t("poker.table") });
  const actions = h("section", { class: "poker-actions", id: "poker-actions", "aria-label": t("poker.your_actions") });
  const mySeat = h("section", { class: "poker-me", id: "poker-me", "aria-label": t("poker.your_seat") });
  const resultBox = h("section", { class: "poker-result", id: "poker-result", "aria-live": "polite" });
  const historyBox = h("section", { class: "poker-history", id: "poker-history", "aria-labelledby": "history-title" });
  root.append(
    h("div", { class: "poker-page" },
      header, status,
      h("div", { class: "poker-main" }, felt, h("div", { class: "poker-side" }, actions, resultBox, mySeat)),
      historyBox),
  );

  // ---- data ----

  function adopt(tableView) {
    view = tableView;
    if (view.server_time) clockOffset = Date.parse(view.server_time) - Date.now();
    render();
  }

  async function reload() {
    try {
      adopt(await api(`poker/tables/${tableId}/`));
    } catch (error) {
      notify(refusal(error), "error");
    }
  }

  function askSnapshot() {
    clearTimeout(snapshotTimer);
    snapshotTimer = setTimeout(() => {
      if (!feed.send({ type: "snapshot" })) reload();
    }, SNAPSHOT_DEBOUNCE_MS);
  }

  function resumeToken() {
    if (tableVersion === null) return null;
    return `${tableVersion}:${handId ? handVersion : 0}:${handId}`;
  }

  function onHandEvent(message) {
    if (message.hand_id !== handId) {
      handId = message.hand_id;
      handVersion = 0;
    }
    if (typeof message.version === "number") handVersion = Math.max(handVersion, message.version);
    const event = message.event || {};
    if (!current || current.hand_id !== message.hand_id) current = { hand_id: message.hand_id, shown: {}, awards: [] };
    if (event.type === "poker.hand_shown") current.shown[event.seat] = { cards: event.cards, strength: event.strength };
    if (event.type === "poker.pot_awarded") current.awards.push(event);
    if (event.type === "poker_hand.voided") current.voided = event.reason || true;
    if (event.type === "poker.hand_ended" || event.type === "poker_hand.voided") results = current;
    askSnapshot();
  }

  const feed = openFeed(`poker/${tableId}`, {
    resume: resumeToken,
    onSnapshot(message) {
      if (typeof message.table_version === "number") tableVersion = message.table_version;
      if (message.hand_id !== undefined) {
        handId = message.hand_id || "";
        handVersion = message.hand_version || 0;
      }
      adopt(message.table);
    },
    onDelta: onHandEvent,
    onPrivate: onHandEvent,
    onMessage(message) {
      if (message.type === "table") {
        if (typeof message.version === "number") tableVersion = message.version;
        const event = message.event || {};
        if (event.type === "poker_table.sat_out" && isMe(event.player_id) && event.reason && event.reason !== "player") {
          notify(t(`poker.sat_out.${event.reason}`, { code: event.code || "" }), "info", { sticky: true });
        }
        askSnapshot();
      } else if (message.type === "moved") {
        // A tournament moved us: the socket follows; the page names the new table.
        notify(t("poker.moved", { table: message.to_table, seat: message.seat }), "info", { sticky: true });
        tableId = message.to_table;
        history.replaceState(null, "", `#/poker/${tableId}`);
        tableVersion = null;
        handId = "";
        current = null;
      } else if (message.type === "error" && message.code === "bad_resume_seq") {
        tableVersion = null;
      } else if (message.type === "error" && message.message) {
        notify(refusal(message), "error");
      }
    },
    onStatus(state) {
      closedReason = state.state === "closed" ? state.reason || "feed.closed" : null;
      status.className = `feed-status ${state.state}`;
      status.textContent = state.reason ? t(state.reason) : t(`feed.${state.state === "open" ? "open" : state.state}`);
      if (state.state === "closed" && state.reason) notify(t(state.reason), "error", { sticky: true });
      // 4410: the socket could not follow a tournament's move; the page opens the new table itself.
      // (The `moved` frame came first: the address already names the new table; the remount closes this feed.)
      if (state.code === 4410) window.dispatchEvent(new HashChangeEvent("hashchange"));
      render();
    },
  });

  // ---- commands ----

  async function command(path, body, { keyed = true } = {}) {
    if (busy) return null;
    busy = true;
    render();
    try {
      const answer = await api(`poker/tables/${tableId}/${path}`, { method: "POST", body, command: keyed });
      window.dispatchEvent(new Event("casino:balance"));
      return answer;
    } catch (error) {
      notify(refusal(error), "error");
      return null;
    } finally {
      busy = false;
      await reload();
    }
  }

  const act = (action, amount) => command("act/", amount === undefined ? { action } : { action, amount });

  // ---- helpers ----

  function isMe(playerId) {
    const me = view && view.seats.find((s) => s.you);
    return Boolean(me && me.player_id === playerId);
  }

  function me() {
    return view ? view.seats.find((s) => s.you) : null;
  }

  function currency() {
    return view.table.currency;
  }

  function chips(amount) {
    // A tournament's tables play in tournament chips (the ledger's "XXX"), never money.
    if (currency() === "XXX") return t("poker.chips", { n: Number(amount).toLocaleString(language() === "fr" ? "fr-FR" : "en-GB") });
    return money(amount, currency());
  }

  function handPlayer(seat) {
    return view.hand ? view.hand.players.find((p) => p.seat === seat) : null;
  }

  function secondsLeft(deadline) {
    if (!deadline) return null;
    return Math.max(0, Math.ceil((Date.parse(deadline) - (Date.now() + clockOffset)) / 1000));
  }

  // ---- drawing ----

  function render() {
    if (!view) return;
    renderHeader();
    renderFelt();
    renderActions();
    renderMe();
    renderResults();
  }

  function renderHeader() {
    const table = view.table;
    const blinds = `${chips(table.small_blind)} / ${chips(table.big_blind)}`;
    clear(header).append(
      h("h1", {}, `${table.name} (${table.code})`),
      h("p", { class: "poker-stakes" },
        h("span", { id: "poker-blinds" }, `${t("poker.blinds")}: ${blinds}`),
        table.ante ? ` · ${t("poker.ante_short", { ante: chips(table.ante) })}` : "",
        ` · ${t(`poker.variant.${table.variant}`)}`,
        table.tournament_id ? " · " : ` · ${t("poker.buy_in")}: ${chips(table.buy_in_min)} – ${chips(table.buy_in_max)}`,
        table.tournament_id ? h("a", { href: `#/tournament/${table.tournament_id}`, id: "poker-tournament-link" }, t("poker.tournament_link")) : "",
        table.raise_cap ? ` · ${table.raise_cap.text}` : "",
        view.hand ? ` · ${t("poker.hand_number", { id: view.hand.hand_id })}` : ""),
    );
  }

  function seatStatus(seat, player) {
    const bits = [];
    if (seat.sitting_out) bits.push(t(seat.sat_out_reason === "disconnected" ? "poker.away" : "poker.sitting_out"));
    if (player && player.folded) bits.push(t("poker.folded"));
    if (player && player.all_in) bits.push(t("poker.all_in"));
    return bits.join(" · ");
  }

  function renderFelt() {
    const table = view.table;
    const hand = view.hand;
    const mine = me();
    clear(felt);
    const seatsList = h("ol", { class: "seats", id: "seats" });
    for (let number = 1; number <= table.max_seats; number += 1) {
      const seat = view.seats.find((s) => s.seat === number);
      const player = handPlayer(number);
      const acting = hand && hand.status !== "complete" && hand.actor_seat === number;
      const classes = ["seat", seat ? "taken" : "empty", seat && seat.you ? "you" : "", acting ? "acting" : "",
        player && player.folded ? "folded" : "", hand && hand.button === number ? "has-button" : ""].filter(Boolean).join(" ");
      if (!seat) {
        seatsList.append(h("li", { class: classes, dataset: { seat: number } },
          h("span", { class: "seat-number" }, t("poker.seat_n", { n: number })),
          mine || !table.is_open || table.tournament_id
            ? h("span", { class: "muted" }, t("poker.empty"))
            : h("button", { class: "sit", id: `sit-${number}`, onclick: () => openBuyIn(number) }, t("poker.sit_here"))));
        continue;
      }
      const cards = player
        ? (player.cards || (player.folded || hand.status === "complete" ? [] : [null, null])).map((c) => card(c))
        : [];
      const label = [t("poker.seat_n", { n: number }), seat.username, chips(player ? player.stack : seat.stack),
        seatStatus(seat, player)].filter(Boolean).join(", ");
      seatsList.append(h("li", { class: classes, dataset: { seat: number }, "aria-label": label, id: `seat-${number}` },
        h("span", { class: "seat-number" }, t("poker.seat_n", { n: number }),
          hand && hand.button === number ? h("span", { class: "dealer-button", title: t("poker.button") }, "D") : null),
        h("strong", { class: "who" }, seat.username + (seat.you ? ` (${t("poker.you")})` : "")),
        h("span", { class: "stack" }, chips(player ? player.stack : seat.stack)),
        h("span", { class: "status" }, seatStatus(seat, player)),
        h("span", { class: "hole", id: `hole-${number}` }, cards),
        player && player.bet ? h("span", { class: "bet" }, t("poker.bet_amount", { amount: chips(player.bet) })) : null,
        acting ? h("span", { class: "turn-clock", "data-deadline": hand.deadline }, clockText(hand)) : null,
        table.time_bank_seconds ? h("span", { class: "bank-left" }, t("poker.bank_left", { s: seat.time_bank_left })) : null,
        results && results.hand_id === (hand && hand.hand_id) && player && player.won
          ? h("span", { class: "won" }, t("poker.won", { amount: chips(player.won) })) : null));
    }
    const board = h("div", { class: "board", id: "board", "aria-label": t("poker.board") },
      hand ? hand.board.map((c) => card(c)) : []);
    const pot = hand ? h("div", { class: "pot", id: "pot" }, potText(hand)) : h("div", { class: "pot muted" }, t(waitingKey()));
    felt.append(h("div", { class: "center" }, board, pot), seatsList);
  }

  function waitingKey() {
    return view.table.phase === "idle" ? "poker.waiting_players" : "poker.next_hand_soon";
  }

  function potText(hand) {
    const parts = [h("span", { id: "pot-total" }, t("poker.pot", { amount: chips(hand.pot) }))];
    if (hand.pots && hand.pots.length > 1) {
      hand.pots.forEach((pot, index) => parts.push(h("span", { class: "side-pot" },
        ` · ${index === 0 ? t("poker.main_pot") : t("poker.side_pot", { n: index })}: ${chips(pot.amount)}`,
        ` (${t("poker.seats_short", { seats: pot.eligible.join(", ") })})`)));
    }
    if (hand.paused) parts.push(h("strong", { class: "paused" }, ` · ${t("poker.paused", { reason: hand.reason || "" })}`));
    if (hand.voided) parts.push(h("strong", { class: "paused" }, ` · ${t("poker.voided", { reason: hand.reason || "" })}`));
    return parts;
  }

  function clockText(hand) {
    const left = secondsLeft(hand.deadline);
    if (left === null) return "";
    if (hand.in_disconnection_bank) return t("poker.disconnection_bank", { s: left });
    if (hand.in_time_bank) return t("poker.time_bank", { s: left });
    return t("poker.turn_clock", { s: left });
  }

  function renderActions() {
    clear(actions);
    actions.classList.toggle("my-turn", Boolean(view.hand && view.hand.legal && !closedReason));
    const hand = view.hand;
    if (closedReason) {
      actions.append(h("p", { class: "error", id: "closed-reason" }, t(closedReason)),
        h("button", { onclick: () => location.reload() }, t("poker.reconnect")));
      return;
    }
    if (!hand || hand.status === "complete" || !hand.legal) {
      const actor = hand && hand.status !== "complete" && view.seats.find((s) => s.seat === hand.actor_seat);
      actions.append(h("p", { class: "muted", id: "waiting-turn" },
        actor ? t("poker.their_turn", { name: actor.username }) : hand && hand.status !== "complete" ? "" : t(waitingKey())));
      return;
    }
    const legal = hand.legal;
    const mine = handPlayer(me().seat);
    const maxBet = Math.max(...hand.players.map((p) => p.bet));
    const context = { legal, pot: hand.pot, maxBet, myBet: mine.bet, myStack: mine.stack };
    const verb = maxBet > 0 ? "raise" : "bet";
    actions.append(h("h2", { id: "your-turn" }, t("poker.your_turn"), " ",
      h("span", { class: "turn-clock", "data-deadline": hand.deadline }, clockText(hand))));
    const row = h("div", { class: "action-buttons" },
      h("button", { id: "act-fold", disabled: busy, "aria-keyshortcuts": "F", onclick: () => act("fold") }, t("poker.fold")),
      legal.can_check
        ? h("button", { id: "act-check", class: "primary", disabled: busy, "aria-keyshortcuts": "C", onclick: () => act("check") }, t("poker.check"))
        : h("button", { id: "act-call", class: "primary", disabled: busy, "aria-keyshortcuts": "C", onclick: () => act("call") },
          t("poker.call", { amount: chips(Math.min(legal.call_amount, mine.stack)) })));
    actions.append(row);
    if (legal.can_raise && legal.min_to !== null && legal.max_to !== null) {
      const slider = h("input", { type: "range", id: "raise-slider", min: legal.min_to, max: legal.max_to, step: 1,
        value: legal.min_to, "aria-label": t(`poker.${verb}_to`) });
      const go = h("button", { id: "act-raise", disabled: busy, "aria-keyshortcuts": "R" }, "");
      const setAmount = (value) => {
        const amount = Math.max(legal.min_to, Math.min(legal.max_to, Math.round(Number(value) || legal.min_to)));
        slider.value = amount;
        slider.setAttribute("aria-valuetext", chips(amount));
        const allIn = amount === mine.bet + mine.stack;
        go.textContent = allIn ? t("poker.all_in_for", { amount: chips(amount) }) : t(`poker.${verb}_to_amount`, { amount: chips(amount) });
        go.dataset.amount = amount;
        chosen = { turn: `${hand.hand_id}:${hand.street}:${legal.min_to}:${legal.max_to}`, amount };
      };
      slider.addEventListener("input", () => setAmount(slider.value));
      go.addEventListener("click", () => {
        const amount = Number(go.dataset.amount);
        if (amount === mine.bet + mine.stack) act("all_in");
        else act(verb, amount);
      });
      const presets = h("div", { class: "presets", role: "group", "aria-label": t("poker.presets") },
        ["min", "half", "pot", "all"].map((preset) => h("button", { type: "button", id: `preset-${preset}`,
          onclick: () => setAmount(presetAmount(preset, context)) }, t(`poker.preset.${preset}`))));
      const turn = `${hand.hand_id}:${hand.street}:${legal.min_to}:${legal.max_to}`;
      setAmount(chosen && chosen.turn === turn ? chosen.amount : legal.min_to);
      actions.append(presets, h("div", { class: "raise-row" },
        h("label", { for: "raise-slider", class: "visually-hidden" }, t(`poker.${verb}_to`)), slider, go));
    } else if (mine.stack > legal.call_amount) {
      actions.append(h("p", { class: "muted" }, t("poker.no_raise")));
    }
    actions.append(h("p", { class: "muted keys" }, t("poker.keys")));
    const focusable = actions.querySelector("#act-check, #act-call");
    if (focusable && !actions.contains(document.activeElement)) focusable.focus({ preventScroll: true });
  }

  function renderMe() {
    clear(mySeat);
    const mine = me();
    if (!mine) {
      mySeat.append(h("p", { class: "muted" }, t("poker.watching")));
      return;
    }
    // The API refuses a top-up to a seat dealt into the hand in play, and leaving while still in it (not folded).
    const dealtIn = Boolean(view.hand && view.hand.status !== "complete" && handPlayer(mine.seat));
    const inHand = dealtIn && !handPlayer(mine.seat).folded;
    const table = view.table;
    mySeat.append(h("h2", {}, t("poker.your_seat")),
      h("p", { id: "my-stack" }, t("poker.your_stack", { seat: mine.seat, amount: chips(mine.stack) }),
        mine.sitting_out ? ` · ${t("poker.sitting_out")}` : ""),
      table.time_bank_seconds ? h("p", { class: "muted", id: "my-time-bank" }, t("poker.time_bank_info", { s: mine.time_bank_left, of: table.time_bank_seconds })) : null);
    const buttons = h("div", { class: "seat-buttons" });
    if (mine.sitting_out) buttons.append(h("button", { id: "sit-in", disabled: busy, onclick: () => command("sit-in/", undefined, { keyed: false }) }, t("poker.sit_in")));
    else buttons.append(h("button", { id: "sit-out", disabled: busy, onclick: () => command("sit-out/", undefined, { keyed: false }) }, t("poker.sit_out")));
    if (!table.tournament_id) {
      const room = table.buy_in_max - mine.stack;
      if (room > 0 && !dealtIn) buttons.append(h("button", { id: "top-up", disabled: busy, onclick: () => openTopUp(room) }, t("poker.top_up")));
      buttons.append(h("button", { id: "leave", disabled: busy || inHand, title: inHand ? t("poker.leave_after_hand") : null,
        onclick: async () => { if (await command("leave/")) notify(t("poker.left")); } }, t("poker.leave")));
    }
    mySeat.append(buttons);
  }

  function renderResults() {
    clear(resultBox);
    const hand = view.hand;
    const shown = results;
    if (!shown) return;
    const name = (seat) => (view.seats.find((s) => s.seat === seat) || {}).username || t("poker.seat_n", { n: seat });
    const lines = [];
    if (shown.voided) lines.push(h("li", {}, t("poker.voided", { reason: shown.voided === true ? "" : shown.voided })));
    for (const award of shown.awards) {
      for (const [seat, amount] of award.winners) {
        const showdown = shown.shown[seat];
        lines.push(h("li", {}, t(award.index === 0 ? "poker.wins_main" : "poker.wins_side", { name: name(seat), amount: chips(amount), n: award.index }),
          showdown ? h("span", { class: "shown" }, " ", showdown.cards.map((c) => card(c))) : null));
      }
    }
    for (const [seat, info] of Object.entries(shown.shown)) {
      if (!shown.awards.some((a) => a.winners.some(([s]) => String(s) === seat))) {
        lines.push(h("li", {}, t("poker.showed", { name: name(Number(seat)) }), " ", info.cards.map((c) => card(c))));
      }
    }
    resultBox.append(h("h2", {}, t("poker.result"), hand && hand.hand_id === shown.hand_id ? "" : ` (${shown.hand_id})`),
      h("ul", { id: "showdown" }, lines));
  }

  // ---- dialogs: buy-in and top-up ----

  function amountChooser({ title, min, max, start, confirm, id }) {
    const step = view.table.big_blind;
    let amount = start;
    const output = h("output", { id: `${id}-amount`, for: `${id}-input` }, chips(amount));
    const input = h("input", { type: "range", id: `${id}-input`, min, max, step: 1, value: amount, "aria-label": title });
    const minus = h("button", { type: "button", id: `${id}-minus`, "aria-label": t("poker.less") }, "−");
    const plus = h("button", { type: "button", id: `${id}-plus`, "aria-label": t("poker.more") }, "+");
    const set = (value) => {
      amount = Math.max(min, Math.min(max, value));
      input.value = amount;
      output.textContent = chips(amount);
      minus.disabled = amount <= min;
      plus.disabled = amount >= max;
    };
    minus.addEventListener("click", () => set(amount - step));
    plus.addEventListener("click", () => set(amount + step));
    input.addEventListener("input", () => set(Number(input.value)));
    set(amount);
    const dialog = h("div", { class: "dialog", role: "dialog", "aria-modal": "true", "aria-labelledby": `${id}-title`, id },
      h("h2", { id: `${id}-title` }, title),
      h("p", { class: "muted" }, t("poker.range", { min: chips(min), max: chips(max) })),
      h("div", { class: "chooser" }, minus, input, plus, output),
      h("div", { class: "dialog-buttons" },
        h("button", { class: "primary", id: `${id}-confirm`, onclick: async () => { dialog.remove(); await confirm(amount); } }, t("poker.confirm")),
        h("button", { id: `${id}-cancel`, onclick: () => dialog.remove() }, t("poker.cancel"))));
    dialog.addEventListener("keydown", (event) => {
      if (event.key === "Escape") dialog.remove();
    });
    document.querySelectorAll(".dialog").forEach((d) => d.remove());
    root.append(dialog);
    dialog.querySelector(`#${id}-confirm`).focus();
  }

  function openBuyIn(seatNumber) {
    const table = view.table;
    amountChooser({
      id: "buy-in",
      title: t("poker.buy_in_at", { n: seatNumber }),
      min: table.buy_in_min,
      max: table.buy_in_max,
      start: Math.min(table.buy_in_max, Math.max(table.buy_in_min, table.big_blind * 100)),
      confirm: async (amount) => {
        if (await command("sit/", { seat: seatNumber, buy_in: amount })) notify(t("poker.seated", { n: seatNumber }));
      },
    });
  }

  function openTopUp(room) {
    amountChooser({
      id: "top-up-dialog",
      title: t("poker.top_up"),
      min: 1,
      max: room,
      start: room,
      confirm: (amount) => command("top-up/", { amount }),
    });
  }

  // ---- the clock ----

  const tick = setInterval(() => {
    if (!view || !view.hand) return;
    for (const element of root.querySelectorAll(".turn-clock")) element.textContent = clockText(view.hand);
  }, CLOCK_TICK_MS);

  // Keys at your turn (not while typing): F folds, C checks or calls, R bets or raises the amount chosen.
  function onKey(event) {
    if (event.ctrlKey || event.metaKey || event.altKey || event.target.closest("input, textarea, select, .dialog")) return;
    const target = { f: "#act-fold", c: "#act-check, #act-call", r: "#act-raise" }[event.key.toLowerCase()];
    const button = target && actions.querySelector(target);
    if (button && !button.disabled) {
      event.preventDefault();
      button.click();
    }
  }
  document.addEventListener("keydown", onKey);

  const historyCleanup = mountHistory(historyBox);

  return () => {
    clearInterval(tick);
    clearTimeout(snapshotTimer);
    document.removeEventListener("keydown", onKey);
    feed.close();
    document.querySelectorAll(".dialog").forEach((d) => d.remove());
    historyCleanup();
  };
}
