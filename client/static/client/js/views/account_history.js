// Game history: the player's house rounds and poker hands, page by page; a round's
// recall (every card, wager, decision, result and the pay tables in force) and its
// provably-fair deal, checked here in the browser (js/fairness.js).
import { api } from "../api.js";
import { verify } from "../fairness.js";
import { language, t } from "../i18n.js";
import { card, clear, h, money, refusal } from "../ui.js";

export const PAGE = 20;
const POKER_PREFIX = "poker/";

/** `prefix.value`'s text, or `value` itself where the client has no words for it (a new wager, outcome...). */
export function label(prefix, value) {
  const key = `${prefix}.${value}`;
  const text = t(key);
  return text === key ? String(value) : text;
}

export function when(iso) {
  if (!iso) return "–";
  return new Date(iso).toLocaleString(language() === "fr" ? "fr-FR" : "en-GB", { dateStyle: "short", timeStyle: "medium" });
}

/** Each body cell labelled with its column's heading: on a phone the table's rows stack as cards (account.css). */
export function stackLabels(table) {
  const headings = [...table.querySelectorAll("thead th")].map((th) => th.textContent);
  for (const row of table.querySelectorAll("tbody tr, tfoot tr")) {
    const cells = [...row.children];
    if (cells.length !== headings.length) continue;
    cells.forEach((cell, index) => { cell.dataset.label = headings[index]; });
  }
  table.classList.add("stack");
  return table;
}

function hand(cards) {
  if (!cards || !cards.length) return h("span", { class: "muted" }, "–");
  return h("span", { class: "hand" }, cards.map((code) => card(code)));
}

function netCell(amount, currency) {
  if (amount === null || amount === undefined) return h("td", { class: "num" }, "–");
  return h("td", { class: `num ${amount > 0 ? "won" : amount < 0 ? "lost" : ""}` }, money(amount, currency));
}

/** A paged list: `load(offset)` → the API's page ({count, limit, offset, results}); `row(result)` → a <tr>. */
export function pagedTable({ id, caption, headers, load, row, empty }) {
  const body = h("tbody");
  const status = h("p", { class: "pager-status", "aria-live": "polite" });
  const previous = h("button", { type: "button", class: "pager-prev" }, t("account.previous"));
  const next = h("button", { type: "button", class: "pager-next" }, t("account.next"));
  let offset = 0;
  async function show(at) {
    try {
      const page = await load(at);
      offset = page.offset;
      body.replaceChildren(...page.results.map(row));
      if (!page.results.length) body.append(h("tr", {}, h("td", { colspan: headers.length }, empty)));
      status.textContent = page.count
        ? t("account.page", { from: offset + 1, to: offset + page.results.length, count: page.count })
        : "";
      previous.disabled = offset <= 0;
      next.disabled = offset + page.results.length >= page.count;
      stackLabels(table);
    } catch (error) {
      status.textContent = refusal(error);
    }
  }
  previous.addEventListener("click", () => show(Math.max(0, offset - PAGE)));
  next.addEventListener("click", () => show(offset + PAGE));
  const table = h("table", { class: "account-table", id },
    h("caption", {}, caption),
    h("thead", {}, h("tr", {}, headers.map((text) => h("th", { scope: "col" }, text)))),
    body);
  return { element: h("div", { class: "paged" }, h("div", { class: "table-scroll" }, table), h("div", { class: "pager" }, previous, status, next)), show };
}

async function mountList(root) {
  const rounds = pagedTable({
    id: "history-rounds",
    caption: t("account.history.rounds"),
    headers: [t("account.history.date"), t("account.history.game"), t("account.history.game_number"), t("account.history.staked"), t("account.history.payout"), t("account.history.net"), t("account.history.status")],
    empty: t("account.history.none"),
    load: (offset) => api("history/", { query: { limit: PAGE, offset } }),
    row: (r) => h("tr", { dataset: { game: r.game_number } },
      h("td", {}, when(r.date)),
      h("td", {}, label("account.game", r.game)),
      h("th", { scope: "row" }, h("a", { href: `#/account/history/${encodeURIComponent(r.game_number)}` }, r.game_number)),
      h("td", { class: "num" }, money(r.staked, r.currency)),
      h("td", { class: "num" }, money(r.payout, r.currency)),
      netCell(r.net, r.currency),
      h("td", {}, label("account.round.status", r.status))),
  });
  const hands = pagedTable({
    id: "history-hands",
    caption: t("account.history.hands"),
    headers: [t("account.history.date"), t("account.history.table"), t("account.history.hand"), t("account.history.seat"), t("account.history.net"), t("account.history.status")],
    empty: t("account.history.no_hands"),
    load: (offset) => api("poker/hands/", { query: { limit: PAGE, offset } }),
    row: (r) => h("tr", { dataset: { hand: r.hand_id } },
      h("td", {}, when(r.started_at)),
      h("td", {}, r.table),
      h("th", { scope: "row" }, h("a", { href: `#/account/history/${POKER_PREFIX}${encodeURIComponent(r.hand_id)}` }, r.hand_id)),
      h("td", {}, r.seat),
      netCell(r.net, r.currency),
      h("td", {}, label("account.hand.status", r.status))),
  });
  root.append(h("h2", { id: "account-heading" }, t("account.tab.history")), rounds.element, hands.element);
  await Promise.all([rounds.show(0), hands.show(0)]);
}

// --- the fairness proof ---------------------------------------------------------------------------

function downloadLink(answer, name) {
  const url = URL.createObjectURL(new Blob([JSON.stringify(answer, null, 2)], { type: "application/json" }));
  return h("a", { href: url, download: name, class: "download" }, t("account.fairness.download"));
}

/** The fairness section: the commitment, a Verify button checking the proof here, the result. */
function fairnessSection({ fetchAnswer, history, fileName }) {
  const result = h("div", { id: "fairness-result", class: "fairness-result", role: "status", "aria-live": "polite" });
  const details = h("div", { class: "fairness-details" });
  const button = h("button", { type: "button", id: "fairness-verify", class: "primary" }, t("account.fairness.verify"));
  button.addEventListener("click", async () => {
    button.disabled = true;
    result.className = "fairness-result";
    result.textContent = t("account.fairness.checking");
    try {
      const answer = await fetchAnswer();
      if (!("leaves" in answer) && !("revealed" in answer) && !("deck" in answer)) {
        // Only the commitment so far: the deck is opened when the round ends.
        result.dataset.outcome = "pending";
        result.textContent = t("account.fairness.pending", { commitment: answer.commitment });
        return;
      }
      const problems = await verify(answer, history);
      clear(details).append(
        h("p", {}, t("account.fairness.commitment"), " ", h("code", { class: "commitment" }, answer.commitment)),
        h("p", {}, t("account.fairness.algorithm", { algorithm: answer.algorithm })),
        downloadLink(answer, fileName),
      );
      if (problems.length) {
        result.className = "fairness-result failed";
        result.dataset.outcome = "failed";
        result.replaceChildren(h("strong", {}, t("account.fairness.failed")), h("ul", {}, problems.map((p) => h("li", {}, p))));
      } else {
        const proven = answer.leaves ? answer.deal_order.length : (answer.revealed || []).length + (answer.yours || []).length;
        result.className = "fairness-result verified";
        result.dataset.outcome = "verified";
        result.replaceChildren(h("strong", {}, t("account.fairness.verified")), " ", t("account.fairness.verified_detail", { cards: proven }));
      }
    } catch (error) {
      result.className = "fairness-result failed";
      result.dataset.outcome = "error";
      result.textContent = refusal(error);
    } finally {
      button.disabled = false;
    }
  });
  return h("section", { class: "fairness", "aria-labelledby": "fairness-title" },
    h("h3", { id: "fairness-title" }, t("account.fairness.title")),
    h("p", {}, t("account.fairness.explain")),
    button, result, details);
}

// --- a house round's recall -------------------------------------------------------------------------

function describeList(pairs) {
  return h("dl", { class: "facts" }, pairs.flatMap(([term, value]) => [h("dt", {}, term), h("dd", {}, value)]));
}

async function mountRound(root, gameNumber) {
  const recall = await api(`history/games/${encodeURIComponent(gameNumber)}/`);
  const player = recall.player || {};
  const cur = recall.currency;
  const cards = recall.cards || {};
  const places = [[t("account.recall.dealer"), hand(cards.dealer)], [t("account.recall.board"), hand(cards.board)]];
  if (cards.seats) {
    for (const [pid, cs] of Object.entries(cards.seats)) {
      const seat = (cards.seat_numbers || {})[pid];
      const mine = String(player.player_id) === pid;
      places.push([mine ? t("account.recall.your_hand") : t("account.recall.seat", { seat: seat ?? pid }), hand(cs)]);
    }
  } else {
    places.push([t("account.recall.player_hand"), hand(cards.player)]);
  }
  const wagers = player.wagers || [];
  root.append(
    h("p", {}, h("a", { href: "#/account/history", id: "back-to-history" }, `← ${t("account.tab.history")}`)),
    h("h2", { id: "account-heading" }, t("account.recall.title", { number: recall.game_number })),
    describeList([
      [t("account.history.game"), label("account.game", recall.game)],
      [t("account.history.table"), recall.table],
      [t("account.history.date"), when(recall.opened_at)],
      [t("account.history.status"), label("account.round.status", recall.status)],
      [t("account.recall.balance_before"), money(player.balance_before, cur)],
      [t("account.recall.balance_after"), money(player.balance_after, cur)],
    ]),
    h("section", { "aria-labelledby": "cards-title" }, h("h3", { id: "cards-title" }, t("account.recall.cards")),
      describeList(places)),
    h("section", { "aria-labelledby": "wagers-title" }, h("h3", { id: "wagers-title" }, t("account.recall.wagers")),
      h("div", { class: "table-scroll" }, stackLabels(h("table", { class: "account-table", id: "recall-wagers" },
        h("thead", {}, h("tr", {}, [t("account.recall.wager"), t("account.recall.stake"), t("account.recall.outcome"), t("account.recall.returned")].map((x) => h("th", { scope: "col" }, x)))),
        h("tbody", {}, wagers.length
          ? wagers.map((w) => h("tr", {}, h("th", { scope: "row" }, label("account.wager", w.wager)), h("td", { class: "num" }, money(w.stake, cur)),
            h("td", {}, label("account.outcome", w.outcome)), h("td", { class: "num" }, money(w.returned, cur))))
          : h("tr", {}, h("td", { colspan: 4 }, t("account.recall.no_wagers")))),
        h("tfoot", {}, h("tr", {}, h("th", { scope: "row" }, t("account.recall.total")), h("td", { class: "num" }, money(player.staked, cur)),
          netCell(player.net, cur), h("td", { class: "num" }, money(player.returned, cur)))))))),
    h("section", { "aria-labelledby": "decisions-title" }, h("h3", { id: "decisions-title" }, t("account.recall.decisions")),
      (player.decisions || []).length
        ? h("ol", { id: "recall-decisions" }, player.decisions.map((d) =>
          h("li", {}, t(d.auto ? "account.recall.decision_auto" : "account.recall.decision",
            { street: label("account.street", d.street), option: label("account.option", d.option) }))))
        : h("p", {}, t("account.recall.no_decisions"))),
    h("details", { class: "pay-tables", id: "recall-terms" }, h("summary", {}, t("account.recall.pay_tables")),
      describeList([
        ...Object.entries(recall.pay_tables || {}).map(([wager, table]) =>
          [label("account.wager", wager), t("account.recall.pay_table", { number: table && table.number })]),
        ...Object.entries(recall.limits || {}).map(([spot, range]) =>
          [label("account.wager", spot), t("account.recall.limit", { min: money(range.min, cur), max: money(range.max, cur) })]),
        [t("account.recall.rules_version"), recall.rules_version],
      ]),
      h("p", {}, h("a", { href: `#/account/help/${recall.game}` }, t("account.recall.rules_link")))),
    fairnessSection({
      fetchAnswer: () => api(`rounds/${encodeURIComponent(gameNumber)}/fairness/`),
      history: recall,
      fileName: `fairness-${gameNumber}.json`,
    }),
  );
}

// --- a poker hand's recall --------------------------------------------------------------------------

async function mountHand(root, handId) {
  const recall = await api(`poker/hands/${encodeURIComponent(handId)}/`);
  const final = recall.final || {};
  const cur = recall.currency;
  root.append(
    h("p", {}, h("a", { href: "#/account/history", id: "back-to-history" }, `← ${t("account.tab.history")}`)),
    h("h2", { id: "account-heading" }, t("account.recall.hand_title", { number: recall.hand_id })),
    describeList([
      [t("account.history.table"), `${recall.table.name} (${recall.table.code})`],
      [t("account.history.date"), when(recall.started_at)],
      [t("account.history.status"), label("account.hand.status", recall.status)],
      [t("account.history.seat"), recall.your_seat ?? "–"],
      [t("account.recall.board"), hand(final.board)],
      ...(final.players || []).map((p) => [
        t(p.seat === recall.your_seat ? "account.recall.your_seat" : "account.recall.seat", { seat: p.seat }), hand(p.cards)]),
      [t("account.recall.rake"), money(recall.rake, cur)],
    ]),
    fairnessSection({
      fetchAnswer: () => api(`poker/hands/${encodeURIComponent(handId)}/fairness/`),
      history: recall,
      fileName: `fairness-${handId}.json`,
    }),
  );
}

export async function mount(root, { detail }) {
  try {
    if (!detail) await mountList(root);
    else if (detail.startsWith(POKER_PREFIX)) await mountHand(root, decodeURIComponent(detail.slice(POKER_PREFIX.length)));
    else await mountRound(root, decodeURIComponent(detail));
  } catch (error) {
    root.append(h("p", { class: "error", role: "alert" }, refusal(error)));
  }
}
