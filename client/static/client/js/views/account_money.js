// The cashier (deposit and withdrawal requests, POST /api/cashier/deposits|withdrawals/,
// and the player's transactions, GET /api/cashier/transactions/) and the account
// statement (every wallet movement with its running balance, GET /api/wallet/statement/).
import { api, idempotencyKey } from "../api.js";
import { t } from "../i18n.js";
import { h, money, refusal } from "../ui.js";
import { label, stackLabels, when } from "./account_history.js";
import { toMinor } from "./account_limits.js";

const PAGE = 25;

function requestForm({ kind, currency, onDone }) {
  const id = `cashier-${kind}`;
  const status = h("p", { id: `${id}-status`, role: "status", "aria-live": "polite" });
  const amount = h("input", { id: `${id}-amount`, name: "amount", inputmode: "decimal", required: true, size: 10 });
  const form = h("form", { id: `${id}-form`, class: "cashier-form" },
    h("fieldset", {}, h("legend", {}, t(`account.cashier.${kind}`)),
      h("label", { for: `${id}-amount` }, t("account.cashier.amount", { currency })), amount,
      h("button", { type: "submit", class: "primary", id: `${id}-submit` }, t(`account.cashier.${kind}.submit`)),
      h("p", { class: "help" }, t(`account.cashier.${kind}.help`)),
      status));
  // One request key per amount typed: a retry after a lost answer is the same request, not a second one.
  let key = idempotencyKey();
  amount.addEventListener("input", () => { key = idempotencyKey(); });
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const minor = toMinor(amount.value, currency);
    if (!minor || Number.isNaN(minor)) {
      status.textContent = t("account.cashier.not_amount");
      amount.focus();
      return;
    }
    try {
      const txn = await api(`cashier/${kind === "deposit" ? "deposits" : "withdrawals"}/`, {
        method: "POST", body: { amount: minor, currency, request_key: key }, command: true,
      });
      status.textContent = t(`account.cashier.${kind}.requested`, { amount: money(txn.amount, txn.currency), reference: txn.external_reference });
      amount.value = "";
      key = idempotencyKey();
      window.dispatchEvent(new Event("casino:balance"));
      onDone();
    } catch (error) {
      status.textContent = refusal(error);
    }
  });
  return form;
}

async function mountCashier(root) {
  const wallet = await api("wallet/");
  const cur = wallet.currency;
  const body = h("tbody");
  async function refresh() {
    const rows = await api("cashier/transactions/");
    body.replaceChildren(...(rows.length ? rows.map((r) => h("tr", { dataset: { id: r.id } },
      h("td", {}, when(r.created_at)),
      h("td", {}, label("account.cashier.kind", r.kind)),
      h("td", { class: "num" }, money(r.amount, r.currency)),
      h("td", {}, label("account.cashier.state", r.state)),
      h("td", {}, r.external_reference || ""),
      h("td", {}, r.reason || ""))) : [h("tr", {}, h("td", { colspan: 6 }, t("account.cashier.none")))]));
    stackLabels(document.getElementById("cashier-transactions"));
    const fresh = await api("wallet/");
    balance.textContent = money(fresh.balance, cur);
  }
  const balance = h("strong", { id: "cashier-balance" }, money(wallet.balance, cur));
  root.append(
    h("h2", { id: "account-heading" }, t("account.tab.cashier")),
    h("p", {}, t("account.cashier.balance"), " ", balance, wallet.in_play ? ` · ${t("account.cashier.in_play", { amount: money(wallet.in_play, cur) })}` : ""),
    h("div", { class: "cashier-forms" },
      requestForm({ kind: "deposit", currency: cur, onDone: refresh }),
      requestForm({ kind: "withdrawal", currency: cur, onDone: refresh })),
    h("div", { class: "table-scroll" }, h("table", { class: "account-table", id: "cashier-transactions" },
      h("caption", {}, t("account.cashier.transactions")),
      h("thead", {}, h("tr", {}, [t("account.history.date"), t("account.cashier.kind"), t("account.cashier.amount_col"), t("account.cashier.state"),
        t("account.cashier.reference"), t("account.cashier.reason")].map((x) => h("th", { scope: "col" }, x)))),
      body)),
  );
  await refresh();
}

async function mountStatement(root) {
  const body = h("tbody");
  const status = h("p", { class: "pager-status", "aria-live": "polite" });
  const previous = h("button", { type: "button" }, t("account.previous"));
  const next = h("button", { type: "button" }, t("account.next"));
  let offset = 0;
  async function show(at) {
    try {
      const page = await api("wallet/statement/", { query: { limit: PAGE, offset: at } });
      offset = page.offset;
      const cur = page.currency;
      body.replaceChildren(...(page.results.length ? page.results.map((line) => h("tr", {},
        h("td", {}, when(line.at)),
        h("td", {}, label("account.statement.kind", line.kind)),
        h("td", {}, line.game_number || ""),
        h("td", { class: `num ${line.amount < 0 ? "lost" : "won"}` }, money(line.amount, cur)),
        h("td", { class: "num" }, money(line.balance_after, cur)))) : [h("tr", {}, h("td", { colspan: 5 }, t("account.statement.none")))]));
      status.textContent = page.count ? t("account.page", { from: offset + 1, to: offset + page.results.length, count: page.count }) : "";
      previous.disabled = offset <= 0;
      next.disabled = offset + page.results.length >= page.count;
      stackLabels(document.getElementById("statement-lines"));
    } catch (error) {
      status.textContent = refusal(error);
    }
  }
  previous.addEventListener("click", () => show(Math.max(0, offset - PAGE)));
  next.addEventListener("click", () => show(offset + PAGE));
  root.append(
    h("h2", { id: "account-heading" }, t("account.tab.statement")),
    h("div", { class: "table-scroll" }, h("table", { class: "account-table", id: "statement-lines" },
      h("caption", {}, t("account.statement.caption")),
      h("thead", {}, h("tr", {}, [t("account.history.date"), t("account.statement.kind"), t("account.history.game_number"), t("account.statement.amount"),
        t("account.statement.balance")].map((x) => h("th", { scope: "col" }, x)))),
      body)),
    h("div", { class: "pager" }, previous, status, next));
  await show(0);
}

export async function mount(root, { tab }) {
  try {
    if (tab === "statement") await mountStatement(root);
    else await mountCashier(root);
  } catch (error) {
    root.append(h("p", { class: "error", role: "alert" }, refusal(error)));
  }
}
