// The cashier (deposit and withdrawal requests, POST /api/cashier/deposits|withdrawals/,
// and the player's transactions, GET /api/cashier/transactions/) and the account
// statement (every wallet movement with its running balance, GET /api/wallet/statement/).
import { api, idempotencyKey } from "../api.js";
import { t } from "../i18n.js";
import { h, money, refusal } from "../ui.js";
import { PAGE, label, pagedTable, stackLabels, when } from "./account_history.js";
import { toMinor } from "./account_limits.js";

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
  let currency = null;
  const lines = pagedTable({
    id: "statement-lines",
    caption: t("account.statement.caption"),
    headers: [t("account.history.date"), t("account.statement.kind"), t("account.history.game_number"),
      t("account.statement.amount"), t("account.statement.balance")],
    empty: t("account.statement.none"),
    load: async (offset) => {
      const page = await api("wallet/statement/", { query: { limit: PAGE, offset } });
      currency = page.currency;
      return page;
    },
    row: (line) => h("tr", {},
      h("td", {}, when(line.at)),
      h("td", {}, label("account.statement.kind", line.kind)),
      h("td", {}, line.game_number
        ? h("a", { href: `#/account/history/${encodeURIComponent(line.game_number)}` }, line.game_number) : ""),
      h("td", { class: `num ${line.amount < 0 ? "lost" : "won"}` }, money(line.amount, currency)),
      h("td", { class: "num" }, money(line.balance_after, currency))),
  });
  root.append(h("h2", { id: "account-heading" }, t("account.tab.statement")), lines.element);
  await lines.show(0);
}

export async function mount(root, { tab }) {
  try {
    if (tab === "statement") await mountStatement(root);
    else await mountCashier(root);
  } catch (error) {
    root.append(h("p", { class: "error", role: "alert" }, refusal(error)));
  }
}
