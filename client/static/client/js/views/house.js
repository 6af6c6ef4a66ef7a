// House tables (UTH, Casino Hold'em, Xtreme): `#/house/<id>[,<id>...]` mounts one
// panel per table, each with its own feed (docs/websocket.md). Everything shown comes
// from the public API: the table view (GET tables/<id>/ = the snapshot), the round's
// deltas and the player's private messages. Seed 000's shortcut keys act on the
// active panel (the one last clicked or focused; the first by default).
import "../i18n/house.js";
import { api } from "../api.js";
import { openFeed } from "../feed.js";
import { t } from "../i18n.js";
import { card, clear, h, money, notify, refusal } from "../ui.js";

/** Seed 000: "Hold DELETE for 3 seconds to remove all your bets." */
export const HOLD_TO_CLEAR_MS = 3000;
const DECLINED_SEEN_KEY = "casino.house.declined_seen";
const DECLINED_LOOKBACK_MS = 60 * 60 * 1000;
const TICK_MS = 250;

function label(prefix, key) {
  const text = t(`${prefix}.${key}`);
  return text === `${prefix}.${key}` ? key : text;
}

const spotName = (spot) => label("house.spot", spot);
const optionName = (option) => label("house.option", option);

function seenDeclined() {
  try {
    return new Set(JSON.parse(localStorage.getItem(DECLINED_SEEN_KEY) || "[]"));
  } catch {
    return new Set();
  }
}

function markDeclinedSeen(gameNumber) {
  const seen = [...seenDeclined(), gameNumber].slice(-50);
  localStorage.setItem(DECLINED_SEEN_KEY, JSON.stringify(seen));
}

class TablePanel {
  constructor(tableId, host, activate) {
    this.id = tableId;
    this.view = null; // the table view (snapshot) as last updated
    this.offset = 0; // server clock − local clock (ms)
    this.chip = null; // the selected chip's amount
    this.options = [];
    this.hint = null;
    this.decided = null;
    this.result = null;
    this.popups = [];
    this.chat = [];
    this.hideChat = false;
    this.feedState = { state: "connecting" };
    this.stopped = false;
    this.seated = true;
    this.root = h("section", {
      class: "house-panel",
      id: `house-${tableId}`,
      "aria-label": `${t("house.title")} ${tableId}`,
      onpointerdown: () => {
        activate(this);
        this.pointerDown = true;
      },
      onfocusin: () => activate(this),
    });
    host.append(this.root);
    // A redraw between a button's press and release would lose the click: wait for the release.
    this.release = () => {
      if (!this.pointerDown) return;
      this.pointerDown = false;
      if (this.renderPending) setTimeout(() => this.render(), 0);
    };
    window.addEventListener("pointerup", this.release);
    window.addEventListener("pointercancel", this.release);
    this.timer = setInterval(() => this.tick(), TICK_MS);
  }

  el(name) {
    return `t${this.id}-${name}`;
  }

  /** Take a seat (already seated is fine); a refusal (e.g. the multi-table limit) leaves the panel watching. */
  async join() {
    try {
      await api(`tables/${this.id}/join/`, { method: "POST" });
    } catch (error) {
      if (error.code !== "already_seated") {
        this.seated = false;
        this.joinRefusal = refusal(error);
        notify(t("house.joined_refused", { reason: refusal(error) }), "error");
      }
    }
  }

  async start() {
    try {
      const settings = await api("me/settings/");
      this.hideChat = Boolean(settings.hide_chat);
    } catch {
      /* default: chat shown */
    }
    this.feed = openFeed(`tables/${this.id}`, {
      onSnapshot: (m) => this.onSnapshot(m),
      onDelta: (m) => this.onDelta(m),
      onPrivate: (m) => this.onPrivate(m),
      onMessage: (m) => this.onMessage(m),
      onStatus: (s) => this.onStatus(s),
    });
  }

  stop() {
    this.stopped = true;
    clearInterval(this.timer);
    window.removeEventListener("pointerup", this.release);
    window.removeEventListener("pointercancel", this.release);
    if (this.feed) this.feed.close();
  }

  // --- state from the feed ---------------------------------------------------------------

  onSnapshot(message) {
    const view = message.table;
    this.view = view;
    if (view.server_time) this.offset = Date.parse(view.server_time) - Date.now();
    const me = view.me || {};
    this.options = me.options || [];
    this.offeredStreet = view.round ? view.round.phase : null;
    if (this.options.length) this.loadHint();
    if (Array.isArray(message.chat)) this.chat = message.chat.slice(-50);
    this.pickDefaultChip();
    this.render();
    this.checkDeclined();
  }

  onDelta(message) {
    const view = this.view;
    if (!view) return;
    const data = message.data || {};
    const table = view.table;
    table.public_seq = message.seq;
    switch (message.event) {
      case "house_round.opened":
        view.round = {
          round_id: data.round_id,
          game_number: data.game_number,
          phase: "betting",
          deadline: data.deadline,
          warning_at: data.warning_at,
          cards: { player: null, dealer: [], board: [], seats: {}, seat_numbers: {} },
          wheel: data.wheel,
          wheel_spin: null,
          chips: data.chips || table.chips,
          mandatory_wagers: data.mandatory_wagers || table.mandatory_wagers || [],
          settled: null,
        };
        if (data.limits) table.limits = data.limits;
        table.phase = "betting";
        view.me = { ...(view.me || {}), bets: {}, mandatory_missing: [], decisions: [], options: [], returned: null };
        this.options = [];
        this.hint = null;
        this.decided = null;
        break;
      case "house_round.betting_closed":
        if (view.round) view.round.phase = "closed";
        table.phase = "closed";
        break;
      case "house_round.cards_dealt":
        this.dealCards(data.cards || []);
        break;
      case "house_round.cards_revealed":
        this.dealCards(data.cards || []);
        break;
      case "house_round.decision_window_opened":
        if (view.round) {
          view.round.phase = data.street;
          view.round.deadline = data.deadline;
        }
        table.phase = data.street;
        break;
      case "house_round.jackpot":
        table.jackpot = data.jackpot || [];
        break;
      case "house_round.wheel_spun":
        if (view.round) view.round.wheel_spin = data;
        break;
      case "house_round.settled":
        if (view.round) {
          view.round.settled = data;
          view.round.phase = "showdown";
          view.round.deadline = null;
        }
        break;
      case "house_round.paused":
        if (view.round) view.round.paused = true;
        break;
      case "house_round.resumed":
        if (view.round) view.round.paused = false;
        break;
      case "house_round.voided":
        if (view.round) {
          view.round.phase = "voided";
          view.round.deadline = null;
        }
        break;
      case "house_round.closed":
        if (view.round) view.round.deadline = null;
        table.phase = "between";
        if (view.round && view.round.phase !== "voided") view.round.phase = "between";
        this.options = [];
        break;
      default:
        return; // nothing drawn changes (shuffled, deck_revealed, contributions)
    }
    this.render();
  }

  dealCards(cards) {
    const round = this.view && this.view.round;
    if (!round) return;
    const dealt = round.cards || (round.cards = { player: null, dealer: [], board: [], seats: {} });
    const me = this.view.me && this.view.me.player_id;
    for (const c of cards) {
      let hand;
      if (c.to === "shared") hand = dealt.player || (dealt.player = []);
      else if (c.to === "dealer") hand = dealt.dealer || (dealt.dealer = []);
      else if (c.to === "board") hand = dealt.board || (dealt.board = []);
      else if (c.to.startsWith("player:")) {
        const owner = c.to.split(":")[1];
        dealt.seats = dealt.seats || {};
        hand = dealt.seats[owner] || (dealt.seats[owner] = []);
        if (String(me) === owner) dealt.player = hand;
      } else continue;
      // A later redacted copy (the public delta after the private one) never hides a card already known.
      if (c.card || hand[c.position] === undefined) hand[c.position] = c.card || null;
    }
  }

  onPrivate(message) {
    const view = this.view;
    if (!view) return;
    const me = (view.me = view.me || {});
    if (typeof message.balance === "number") me.balance = message.balance;
    if (Array.isArray(message.covered_chips)) me.covered_chips = message.covered_chips;
    const data = message.data || {};
    switch (message.event) {
      case "house_round.cards_dealt":
        this.dealCards(data.cards || []);
        break;
      case "decision.offered":
        this.options = data.options || [];
        this.offeredStreet = data.street;
        if (typeof data.balance === "number") me.balance = data.balance;
        if (view.round && data.deadline) view.round.deadline = data.deadline;
        this.decided = null;
        this.loadHint();
        break;
      case "house_decision.made":
        // The next street's offer may have arrived first (the dealer moves on at the last decision).
        if (data.street === this.offeredStreet) {
          this.options = [];
          this.hint = null;
        }
        this.decided = data;
        break;
      case "house_bet.placed":
      case "house_bet.removed":
        this.refreshMe();
        break;
      case "house_player.settled":
        this.result = { ...data, balance: message.balance, currency: message.currency, game: message.round_id };
        this.options = [];
        this.openPopup("result");
        window.dispatchEvent(new Event("casino:balance"));
        break;
      case "house_player.declined":
        this.showDeclined(message.round_id, data);
        window.dispatchEvent(new Event("casino:balance"));
        break;
      case "house_player.voided":
        notify(t("house.voided", { number: message.round_id, reason: data.reason, amount: this.money(data.returned) }), "error", { sticky: true });
        window.dispatchEvent(new Event("casino:balance"));
        break;
      default:
        break;
    }
    this.render();
  }

  onMessage(message) {
    if (message.type === "chat") {
      this.chat.push(message);
      this.chat = this.chat.slice(-50);
      this.renderChat();
    } else if (message.type === "notice") {
      if (message.message) notify(message.message, "info", { sticky: true });
    } else if (message.type === "error" && message.code !== "bad_resume_seq") {
      this.say(refusal(message), "error");
    }
  }

  onStatus(status) {
    this.feedState = status;
    if (status.reason) notify(t(status.reason), status.state === "closed" ? "error" : "info", { sticky: status.state === "closed" });
    if (status.state === "closed") {
      // 4409: the table plays in the other window now; this one stops (no reconnect, no commands).
      this.stopped = true;
      clearInterval(this.timer);
    }
    this.render();
  }

  async refreshMe() {
    try {
      const view = await api(`tables/${this.id}/`);
      if (this.view && view.round && this.view.round && view.round.round_id === this.view.round.round_id) {
        this.view.me = view.me;
      }
      this.render();
    } catch {
      /* the next private message carries the balance again */
    }
  }

  async loadHint() {
    const street = this.offeredStreet;
    let hint = null;
    try {
      hint = await api(`tables/${this.id}/hint/`);
    } catch {
      /* no hint: the options alone */
    }
    if (this.offeredStreet !== street) return; // a later street's hint is on its way
    this.hint = hint;
    this.render();
  }

  /** Seed 003: bets declined at "No More Bets" (absent or a required wager missing), shown once each. */
  async checkDeclined() {
    const code = this.view && this.view.table.code;
    if (!code || this.declinedChecked) return;
    this.declinedChecked = true;
    let page;
    try {
      page = await api("history/", { query: { limit: 10 } });
    } catch {
      return;
    }
    const now = Date.now() + this.offset;
    const seen = seenDeclined();
    for (const row of page.results || []) {
      if (row.status !== "declined" || !row.game_number.startsWith(`${code}-`) || seen.has(row.game_number)) continue;
      if (now - Date.parse(row.date) > DECLINED_LOOKBACK_MS) continue;
      let data = { reason: "absent", returned: null };
      try {
        const game = await api(`history/games/${encodeURIComponent(row.game_number)}/`);
        const event = ((game.player && game.player.events) || []).find((e) => e && e.type === "house_player.declined");
        if (event) data = event.data;
      } catch {
        /* the row alone says declined */
      }
      this.showDeclined(row.game_number, data);
    }
  }

  showDeclined(gameNumber, data) {
    if (this.declinedNumber === gameNumber) return; // already shown (the live event, then the history)
    this.declinedNumber = gameNumber;
    markDeclinedSeen(gameNumber);
    const key = data.reason === "mandatory_wager_missing" ? "house.declined.mandatory_wager_missing" : "house.declined";
    this.declined = t(key, { number: gameNumber, amount: data.returned === null || data.returned === undefined ? "" : this.money(data.returned) });
    this.openPopup("declined");
    this.render();
  }

  // --- commands ----------------------------------------------------------------------------

  async command(path, body) {
    if (this.stopped) return null;
    try {
      const answer = await api(`tables/${this.id}/${path}`, { method: "POST", body: body || {}, command: true });
      if (answer && answer.totals && this.view && this.view.me) this.view.me.bets = answer.totals;
      if (answer && typeof answer.balance === "number" && this.view && this.view.me) this.view.me.balance = answer.balance;
      if (answer && answer.capped) this.say(t("house.bet_max", { spot: spotName(body.spot) }));
      window.dispatchEvent(new Event("casino:balance"));
      this.render();
      return answer;
    } catch (error) {
      this.say(refusal(error), "error");
      return null;
    }
  }

  placeChip(spot) {
    if (!this.chip) return;
    return this.command("bets/chip/", { spot, amount: this.chip });
  }

  undo() {
    return this.command("bets/undo/");
  }

  clearBets() {
    return this.command("bets/clear/");
  }

  repeat() {
    return this.command("bets/repeat/");
  }

  double() {
    return this.command("bets/double/");
  }

  /** Seed 000: SPACEBAR repeats the most recent bet; a second time doubles it. */
  repeatThenDouble() {
    return this.totalBet() > 0 ? this.double() : this.repeat();
  }

  async decide(option) {
    const street = this.offeredStreet;
    const answer = await this.command("decision/", { option });
    if (answer && this.offeredStreet === street) {
      this.options = [];
      this.decided = { option, auto: false };
      this.render();
    }
  }

  selectChipAt(index) {
    const chips = this.chips();
    const amount = chips[index];
    if (amount === undefined || !this.covered().includes(amount)) return;
    this.chip = amount;
    this.render();
  }

  async sendChat(text) {
    if (!text.trim()) return;
    try {
      await api(`tables/${this.id}/chat/`, { method: "POST", body: { text } });
    } catch (error) {
      this.say(refusal(error), "error");
    }
  }

  async toggleChat() {
    this.hideChat = !this.hideChat;
    try {
      await api("me/settings/", { method: "PATCH", body: { hide_chat: this.hideChat } });
    } catch (error) {
      this.say(refusal(error), "error");
    }
    this.renderChat();
  }

  // --- derived -----------------------------------------------------------------------------

  currency() {
    return (this.view && this.view.table.currency) || "EUR";
  }

  money(amount) {
    return money(amount, this.currency());
  }

  chips() {
    const view = this.view;
    if (!view) return [];
    return [...((view.round && view.round.chips) || view.table.chips || [])].sort((a, b) => a - b);
  }

  covered() {
    return (this.view && this.view.me && this.view.me.covered_chips) || [];
  }

  bets() {
    return (this.view && this.view.me && this.view.me.bets) || {};
  }

  totalBet() {
    return Object.values(this.bets()).reduce((sum, amount) => sum + amount, 0);
  }

  pickDefaultChip() {
    const covered = this.covered();
    if (this.chip && covered.includes(this.chip)) return;
    const chips = this.chips().filter((c) => covered.includes(c));
    this.chip = chips.length ? chips[0] : null;
  }

  now() {
    return Date.now() + this.offset;
  }

  phase() {
    const view = this.view;
    if (!view) return null;
    if (view.round && view.round.paused) return "paused";
    return (view.round && view.round.phase) || view.table.phase;
  }

  /** Green until warning_at, yellow until the betting deadline, then red: by the server's clock. */
  light() {
    const round = this.view && this.view.round;
    if (this.stopped || !round || round.phase !== "betting" || round.paused || !round.deadline) return "red";
    const now = this.now();
    if (now >= Date.parse(round.deadline)) return "red";
    if (round.warning_at && now >= Date.parse(round.warning_at)) return "yellow";
    return "green";
  }

  secondsLeft() {
    const round = this.view && this.view.round;
    if (this.stopped || !round || !round.deadline || round.paused) return null;
    return Math.max(0, Math.ceil((Date.parse(round.deadline) - this.now()) / 1000));
  }

  bettingOpen() {
    return !this.stopped && this.seated && this.light() !== "red";
  }

  // --- drawing -----------------------------------------------------------------------------

  tick() {
    if (!this.view) return;
    const light = this.light();
    const lamp = document.getElementById(this.el("light"));
    const left = document.getElementById(this.el("countdown"));
    const seconds = this.secondsLeft();
    if (left) {
      left.textContent = seconds === null ? "" : t("house.countdown", { seconds });
      left.dataset.seconds = seconds === null ? "" : seconds;
    }
    if (lamp && lamp.dataset.light !== light) this.render();
  }

  say(text, kind = "info") {
    const line = document.getElementById(this.el("message"));
    if (line) {
      line.textContent = text;
      line.className = `house-message ${kind}`;
    }
    if (kind === "error") notify(text, "error");
  }

  openPopup(kind) {
    this.popups = this.popups.filter((p) => p !== kind);
    this.popups.push(kind);
  }

  /** Esc: the topmost pop-up closes. True if one did. */
  closePopup() {
    if (!this.popups.length) return false;
    this.popups.pop();
    this.render();
    return true;
  }

  render() {
    if (this.pointerDown) {
      this.renderPending = true;
      return;
    }
    this.renderPending = false;
    const focused = document.activeElement && document.activeElement.id;
    const message = document.getElementById(this.el("message"));
    const said = message ? [message.textContent, message.className] : ["", "house-message"];
    clear(this.root);
    if (!this.view) {
      this.root.append(h("p", { class: "loading" }, t("house.feed.connecting")), this.feedLine());
      return;
    }
    const { table, round } = this.view;
    const me = this.view.me || {};
    const light = this.light();
    const seconds = this.secondsLeft();
    this.root.append(h("div", { class: "house-body" },
      h("header", { class: "house-head" },
        h("h2", {}, `${table.name} (${table.code})`),
        h("span", { class: "game-number", id: this.el("game-number"), dataset: { round: round ? round.game_number : "" } },
          round ? t("house.game_number", { number: round.game_number }) : t("house.no_round")),
        this.feedLine()),
      this.feedState.state === "closed" ? h("p", { class: "feed-reason", id: this.el("feed-reason"), role: "alert" },
        t(this.feedState.reason || "house.feed.closed")) : null,
      this.seated ? null : h("p", { class: "watching", id: this.el("watching"), role: "alert" },
        t("house.watching"), ": ", this.joinRefusal || ""),
      h("div", { class: "house-status" },
        h("span", { class: `light ${light}`, id: this.el("light"), dataset: { light }, role: "status",
          "aria-label": t("house.light", { light: t(`light.${light}`) }) }, t(`light.${light}`)),
        h("span", { class: "phase", id: this.el("phase"), dataset: { phase: this.phase() || "" } }, label("house.phase", this.phase() || "idle")),
        h("span", { class: "countdown", id: this.el("countdown"), "aria-live": "off", dataset: { seconds: seconds ?? "" } }, seconds === null ? "" : t("house.countdown", { seconds })),
        h("span", { class: "balance" }, `${t("house.balance")}: `,
          h("strong", { id: this.el("balance"), dataset: { minor: me.balance ?? "" } }, this.money(me.balance)))),
      this.jackpotMeter(),
      this.cardsArea(),
      this.wheelArea(),
      this.spotsArea(),
      this.trayArea(),
      this.decisionArea(),
      h("p", { class: said[1], id: this.el("message"), role: "status", "aria-live": "polite" }, said[0]),
      this.popupArea(),
      this.chatArea(),
      h("p", { class: "keys" }, t("house.keys"),
        " ",
        h("button", { class: "leave", id: this.el("leave"), onclick: () => this.leave() }, t("house.leave")))));
    if (focused) {
      const again = document.getElementById(focused);
      if (again && this.root.contains(again)) again.focus({ preventScroll: true });
    }
  }

  feedLine() {
    const status = this.feedState || {};
    const key = (status.state !== "closed" && status.reason) || (status.state === "open" ? "feed.open" : status.state === "reconnecting" ? "feed.reconnecting" : status.state === "closed" ? "house.feed.closed" : "house.feed.connecting");
    return h("span", { class: `feed ${status.state || "connecting"}`, id: this.el("feed"), dataset: { state: status.state || "connecting", code: status.code || "" } },
      `${t("house.feed")}: ${t(key)}`);
  }

  jackpotMeter() {
    const pools = this.view.table.jackpot || [];
    if (!pools.length) return null;
    return h("section", { class: "jackpot", id: this.el("jackpot"), "aria-label": t("house.jackpot") },
      h("h3", {}, t("house.jackpot")),
      h("ul", {}, pools.map((p) => h("li", { dataset: { pool: p.pool } }, h("span", {}, p.name), " ", h("strong", {}, money(p.amount, p.currency))))));
  }

  hand(cards, count) {
    const list = [...(cards || [])];
    while (list.length < count) list.push(undefined);
    return list.map((c) => (c === undefined ? h("span", { class: "card slot", "aria-hidden": "true" }) : card(c)));
  }

  cardsArea() {
    const round = this.view.round;
    const cards = (round && round.cards) || {};
    const me = this.view.me || {};
    const rows = [
      h("div", { class: "hand dealer", id: this.el("dealer") }, h("span", { class: "who" }, t("house.cards.dealer")), this.hand(cards.dealer, 2)),
      h("div", { class: "hand board", id: this.el("board") }, h("span", { class: "who" }, t("house.cards.board")), this.hand(cards.board, 5)),
    ];
    if (this.view.table.hand_mode === "per_seat") {
      const numbers = cards.seat_numbers || {};
      for (const [owner, hand] of Object.entries(cards.seats || {})) {
        const mine = String(owner) === String(me.player_id);
        const seat = numbers[owner] ?? owner;
        rows.push(h("div", { class: `hand seat${mine ? " mine" : ""}`, id: mine ? this.el("player") : undefined, dataset: { owner } },
          h("span", { class: "who" }, mine ? t("house.cards.you", { seat }) : t("house.cards.seat", { seat })), this.hand(hand, 2)));
      }
    } else {
      rows.push(h("div", { class: "hand player mine", id: this.el("player") }, h("span", { class: "who" }, t("house.cards.player")), this.hand(cards.player, 2)));
    }
    return h("section", { class: "cards", "aria-label": t("house.cards.board") }, rows);
  }

  wheelArea() {
    const round = this.view.round;
    const wheel = (round && round.wheel) || this.view.table.wheel;
    if (!wheel) return null;
    const spin = round && round.wheel_spin;
    return h("section", { class: "wheel", id: this.el("wheel"), "aria-label": t("house.wheel") },
      h("h3", {}, t("house.wheel")),
      h("ol", { class: "segments" }, wheel.segments.map((s) => h("li", {
        class: spin && spin.label === s.label ? "spun" : "",
        "aria-current": spin && spin.label === s.label ? "true" : undefined,
        dataset: { label: s.label },
      }, s.label))),
      spin ? h("p", { id: this.el("wheel-result"), role: "status" }, t("house.wheel_spun", { label: spin.label })) : null);
  }

  spotsArea() {
    const table = this.view.table;
    const round = this.view.round;
    const limits = table.limits || {};
    const bets = this.bets();
    const mandatory = (round && round.mandatory_wagers) || table.mandatory_wagers || [];
    const missing = (this.view.me && this.view.me.mandatory_missing) || [];
    const open = this.bettingOpen() && this.chip !== null;
    const spots = Object.keys(limits).map((spot) => {
      const amount = bets[spot] || 0;
      const range = limits[spot];
      return h("button", {
        class: `spot${mandatory.includes(spot) ? " mandatory" : ""}${amount ? " staked" : ""}`,
        id: this.el(`spot-${spot}`),
        dataset: { spot, amount },
        disabled: !open,
        "aria-label": t("house.spot_button", { spot: spotName(spot), amount: this.money(amount), min: this.money(range.min), max: this.money(range.max) }),
        onclick: () => this.placeChip(spot),
      },
      h("span", { class: "name" }, spotName(spot)),
      mandatory.includes(spot) ? h("span", { class: "required" }, t("house.mandatory")) : null,
      h("span", { class: "amount" }, amount ? this.money(amount) : ""),
      h("span", { class: "limits" }, t("house.limits", { min: this.money(range.min), max: this.money(range.max) })));
    });
    // Wagers the game places itself (Ante Plus, X-tra Bonus) and the call / play.
    const automatic = Object.entries(bets).filter(([spot]) => !(spot in limits)).map(([spot, amount]) =>
      h("div", { class: "spot automatic", id: this.el(`spot-${spot}`), dataset: { spot, amount } },
        h("span", { class: "name" }, spotName(spot)), h("span", { class: "amount" }, this.money(amount))));
    const canUndo = this.bettingOpen() && this.totalBet() > 0;
    return h("section", { class: "spots-area", "aria-label": t("house.spots") },
      h("div", { class: "spots" }, spots, automatic),
      missing.length ? h("p", { class: "mandatory-missing", role: "alert" }, t("house.mandatory_missing", { spots: missing.map(spotName).join(", ") })) : null,
      h("div", { class: "bet-buttons" },
        h("button", { id: this.el("undo"), disabled: !canUndo, onclick: () => this.undo() }, t("house.undo")),
        h("button", { id: this.el("clear"), disabled: !canUndo, onclick: () => this.clearBets() }, t("house.clear")),
        h("button", { id: this.el("repeat"), disabled: !this.bettingOpen(), onclick: () => this.repeat() }, t("house.repeat")),
        h("button", { id: this.el("double"), disabled: !canUndo || (this.view.me && this.view.me.doubled && this.view.me.doubled.length > 0), onclick: () => this.double() }, t("house.double")),
        h("span", { class: "total" }, `${t("house.total_bet")}: `, h("strong", { id: this.el("total"), dataset: { minor: this.totalBet() } }, this.money(this.totalBet())))));
  }

  trayArea() {
    const covered = this.covered();
    const open = this.bettingOpen();
    return h("section", { class: "tray", "aria-label": t("house.chips") },
      h("div", { role: "radiogroup", "aria-label": t("house.chips"), class: "chips" },
        this.chips().map((amount, index) => {
          const enabled = covered.includes(amount);
          return h("button", {
            class: `chip${this.chip === amount ? " selected" : ""}`,
            id: this.el(`chip-${amount}`),
            role: "radio",
            "aria-checked": this.chip === amount ? "true" : "false",
            "aria-label": enabled ? t("house.chip_button", { amount: this.money(amount) }) : t("house.chip_uncovered", { amount: this.money(amount) }),
            "aria-keyshortcuts": index < 9 ? String(index + 1) : undefined,
            dataset: { amount },
            disabled: !enabled || !open,
            onclick: () => this.selectChipAt(index),
          }, this.money(amount));
        })),
      h("span", { class: "selected-chip", id: this.el("selected-chip") }, this.chip ? t("house.selected_chip", { amount: this.money(this.chip) }) : ""));
  }

  decisionArea() {
    const parts = [];
    if (this.options.length && !this.stopped) {
      const optimal = this.hint && this.hint.hint;
      parts.push(h("h3", {}, t("house.decision")),
        h("div", { class: "options" }, this.options.map((option) => h("button", {
          class: `option${option === optimal ? " optimal primary" : ""}`,
          id: this.el(`option-${option}`),
          dataset: { option },
          onclick: () => this.decide(option),
        }, optionName(option)))),
        h("p", { class: "hint", id: this.el("hint") }, this.hint ? (optimal ? t("house.hint", { option: optionName(optimal) }) : t("house.hint_none")) : ""));
    } else if (this.decided) {
      parts.push(h("p", { class: "decided", id: this.el("decided") },
        t(this.decided.auto ? "house.decided_auto" : "house.decided", { option: optionName(this.decided.option) })));
    }
    return parts.length ? h("section", { class: "decision", "aria-label": t("house.decision") }, parts) : null;
  }

  popupArea() {
    const nodes = [];
    for (const kind of this.popups) {
      const body = kind === "result" ? this.resultBody() : kind === "declined" ? h("p", { id: this.el("declined") }, this.declined) : null;
      if (!body) continue;
      nodes.push(h("div", { class: `popup ${kind}`, role: "dialog", "aria-label": kind === "result" ? t("house.result") : t("house.phase.closed"), id: this.el(`popup-${kind}`) },
        body,
        h("button", { class: "close-popup", onclick: () => { this.popups = this.popups.filter((p) => p !== kind); this.render(); } }, t("house.close_popup"))));
    }
    return nodes.length ? h("div", { class: "popups" }, nodes) : null;
  }

  resultBody() {
    const r = this.result;
    if (!r) return null;
    const settled = this.view.round && this.view.round.settled;
    const dealer = settled && settled.dealer;
    return h("div", { class: "result", id: this.el("result"), dataset: { result: r.result } },
      h("h3", {}, `${t("house.result")}: ${label("house.result", r.result)}`),
      r.player && r.player.category ? h("p", {}, t("house.your_hand", { hand: r.player.category.replaceAll("_", " ") })) : null,
      dealer ? h("p", {}, t(dealer.qualifies ? "house.dealer_hand" : "house.dealer_not_qualified", { hand: dealer.category.replaceAll("_", " ") })) : null,
      h("table", { class: "wagers" },
        h("thead", {}, h("tr", {}, h("th", { scope: "col" }, t("house.wager")), h("th", { scope: "col" }, t("house.stake")),
          h("th", { scope: "col" }, t("house.outcome")), h("th", { scope: "col" }, t("house.returned")))),
        h("tbody", {}, (r.wagers || []).map((w) => h("tr", { dataset: { wager: w.wager } },
          h("th", { scope: "row" }, spotName(w.wager)),
          h("td", {}, this.money(w.stake)),
          h("td", {}, label("house.outcome", w.outcome),
            w.wheel ? ` · ${t("house.wheel_award", { label: w.wheel.label || w.wheel })}` : "",
            w.progressive ? ` · ${t("house.progressive_award", { pool: w.progressive.pool || w.progressive })}` : ""),
          h("td", {}, this.money(w.returned)))))),
      h("p", {}, t("house.result_returned", { returned: this.money(r.returned), staked: this.money(r.staked) }), " · ",
        h("strong", { id: this.el("net") }, t("house.result_net", { amount: this.money(r.net) }))),
      h("p", { id: this.el("new-balance") }, t("house.new_balance", { amount: this.money(r.balance) })));
  }

  chatArea() {
    const box = h("section", { class: "chat", id: this.el("chat"), "aria-label": t("house.chat") });
    this.chatBox = box;
    this.fillChat(box);
    return box;
  }

  renderChat() {
    if (this.chatBox) this.fillChat(clear(this.chatBox));
  }

  fillChat(box) {
    const me = window.localStorage.getItem("casino.username");
    const lines = this.hideChat ? this.chat.filter((line) => line.player === me) : this.chat;
    const input = h("input", { id: this.el("chat-input"), "aria-label": t("house.chat_input"), maxlength: 280, disabled: !this.seated || this.stopped });
    box.append(h("div", {},
      h("h3", {}, t("house.chat"), " ",
        h("button", { class: "link", id: this.el("chat-toggle"), "aria-pressed": this.hideChat ? "true" : "false", onclick: () => this.toggleChat() },
          this.hideChat ? t("house.chat_show") : t("house.chat_hide"))),
      this.hideChat ? h("p", { class: "muted" }, t("house.chat_hidden")) : null,
      h("ul", { class: "lines", "aria-live": "polite" }, lines.slice(-8).map((line) => h("li", {}, h("strong", {}, line.player), ": ", line.text))),
      h("form", { class: "say", onsubmit: (e) => { e.preventDefault(); this.sendChat(input.value); input.value = ""; } },
        input, h("button", { type: "submit", disabled: !this.seated || this.stopped }, t("house.chat_send")))));
  }

  async leave() {
    try {
      await api(`tables/${this.id}/leave/`, { method: "POST" });
    } catch (error) {
      if (error.code !== "not_seated") {
        this.say(refusal(error), "error");
        return;
      }
    }
    location.hash = "#/lobby";
  }
}

function typing(target) {
  return target && (target.isContentEditable || ["INPUT", "TEXTAREA", "SELECT"].includes(target.tagName));
}

export async function mount(root, { tableIds }) {
  const ids = [...new Set(tableIds)];
  const host = h("div", { class: `house-tables count-${ids.length}` });
  root.append(h("h1", { class: "visually-hidden" }, t("house.title")), host);
  let active = null;
  const activate = (panel) => {
    active = panel;
  };
  const panels = ids.map((id) => new TablePanel(id, host, activate));
  active = panels[0] || null;
  let deleteTimer = null;
  let deleteCleared = false;

  function onKeyDown(event) {
    if (!active || typing(event.target)) return;
    const panel = active;
    if (event.key === "Escape") {
      if (panel.closePopup()) event.preventDefault();
      return;
    }
    if ((event.ctrlKey || event.metaKey) && event.key.toLowerCase() === "z") {
      event.preventDefault();
      panel.undo();
      return;
    }
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    if (/^[1-9]$/.test(event.key)) {
      event.preventDefault();
      panel.selectChipAt(Number(event.key) - 1);
    } else if (event.key === " ") {
      event.preventDefault();
      if (!event.repeat) panel.repeatThenDouble();
    } else if (event.key === "Delete" || event.key === "Backspace") {
      event.preventDefault();
      if (event.repeat || deleteTimer) return;
      deleteCleared = false;
      deleteTimer = setTimeout(() => {
        deleteCleared = true;
        deleteTimer = null;
        panel.clearBets();
      }, HOLD_TO_CLEAR_MS);
    }
  }

  function onKeyUp(event) {
    if (!active || typing(event.target)) return;
    // Space was the repeat/double shortcut: it must not also press the focused button.
    if (event.key === " ") event.preventDefault();
    if (event.key !== "Delete" && event.key !== "Backspace") return;
    if (deleteTimer) {
      clearTimeout(deleteTimer);
      deleteTimer = null;
      if (!deleteCleared) active.undo();
    }
    deleteCleared = false;
  }

  // Leaving the page (closed, navigated away, frozen in the back/forward cache) is leaving the
  // table: the feeds close at once, so the server knows (seed 000: bets of an absent player are declined).
  function onPageHide() {
    for (const panel of panels) panel.stop();
  }
  function onPageShow(event) {
    if (event.persisted) location.reload();
  }
  window.addEventListener("keydown", onKeyDown);
  window.addEventListener("keyup", onKeyUp);
  window.addEventListener("pagehide", onPageHide);
  window.addEventListener("pageshow", onPageShow);
  for (const panel of panels) panel.render();
  // Seats are taken in the order the tables are named, so the multi-table limit refuses the last ones.
  for (const panel of panels) await panel.join();
  await Promise.all(panels.map((panel) => panel.start()));
  return () => {
    window.removeEventListener("keydown", onKeyDown);
    window.removeEventListener("keyup", onKeyUp);
    window.removeEventListener("pagehide", onPageHide);
    window.removeEventListener("pageshow", onPageShow);
    clearTimeout(deleteTimer);
    for (const panel of panels) panel.stop();
  };
}
