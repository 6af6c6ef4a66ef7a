// Responsible gaming (docs/cashier-and-responsible-gaming.md): deposit and loss limits per
// currency, the session time limit and the reality-check reminder (GET/PUT /api/me/limits/),
// a cool-off or self-exclusion (POST /api/me/exclusion/). A less protective change waits
// 24 hours: the API answers it as pending, and the page says from when.
import { api } from "../api.js";
import { t } from "../i18n.js";
import { h, minorDigits, money, refusal } from "../ui.js";
import { when } from "./account_history.js";

const KINDS = ["deposit_day", "deposit_week", "deposit_month", "loss_day", "loss_week", "loss_month"];

/** Major units typed by the player ("12.50") as minor units; "" → null (no limit); NaN when not an amount. */
export function toMinor(text, currency) {
  const trimmed = String(text).trim().replace(",", ".");
  if (trimmed === "") return null;
  if (!/^\d+(\.\d+)?$/.test(trimmed)) return NaN;
  return Math.round(Number(trimmed) * 10 ** minorDigits(currency));
}

export function toMajor(minor, currency) {
  if (minor === null || minor === undefined) return "";
  return String(minor / 10 ** minorDigits(currency));
}

function pendingNote(entry, format) {
  if (!entry || !entry.pending_from) return null;
  const value = entry.pending === null || entry.pending === undefined ? t("account.limits.none") : format(entry.pending);
  return h("small", { class: "pending" }, t("account.limits.pending", { value, from: when(entry.pending_from) }));
}

/** The page drawn again from the API's answer to a change, `done` said in the redrawn `statusId`;
 * a refusal (the API's message and code) in `status`, nothing changed. */
async function change(root, status, request, statusId, done) {
  try {
    const answer = await request;
    root.replaceChildren();
    draw(root, answer);
    document.getElementById(statusId).textContent = t(done);
  } catch (error) {
    status.textContent = refusal(error);
  }
}

function draw(root, data) {
  const cur = data.currency;
  const status = h("p", { id: "limits-status", role: "status", "aria-live": "polite" });
  const inputs = {};
  const rows = KINDS.map((kind) => {
    const entry = data.limits[kind] || {};
    const id = `limit-${kind}`;
    inputs[kind] = h("input", { id, name: kind, inputmode: "decimal", value: toMajor(entry.in_force, cur), size: 10,
      "aria-describedby": `${id}-now` });
    return h("div", { class: "limit-row" },
      h("label", { for: id }, t(`account.limits.${kind}`), ` (${cur})`),
      inputs[kind],
      h("small", { id: `${id}-now` }, entry.in_force === null || entry.in_force === undefined
        ? t("account.limits.none") : t("account.limits.in_force", { value: money(entry.in_force, cur) })),
      pendingNote(entry, (v) => money(v, cur)));
  });
  const minutes = (name, value, entry) => {
    const id = `limit-${name}`;
    inputs[name] = h("input", { id, name, type: "number", min: 1, step: 1, value: value ?? "", size: 6 });
    return h("div", { class: "limit-row" }, h("label", { for: id }, t(`account.limits.${name}`)), inputs[name],
      pendingNote(entry, (v) => t("account.limits.minutes", { minutes: v })));
  };
  const form = h("form", { id: "limits-form", class: "limits" },
    h("fieldset", {}, h("legend", {}, t("account.limits.money", { currency: cur })), rows),
    h("fieldset", {}, h("legend", {}, t("account.limits.session")),
      minutes("session_limit_minutes", data.session_limit_minutes, data.session_limit),
      minutes("reality_check_minutes", data.reality_check_minutes, null),
      h("p", { class: "help" }, t("account.limits.reality_check_help"))),
    h("p", { class: "help" }, t("account.limits.rule")),
    h("button", { type: "submit", class: "primary", id: "limits-save" }, t("account.limits.save")),
    status);
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const limits = {};
    for (const kind of KINDS) {
      const typed = toMinor(inputs[kind].value, cur);
      if (Number.isNaN(typed)) {
        status.textContent = t("account.limits.not_amount", { field: t(`account.limits.${kind}`) });
        inputs[kind].focus();
        return;
      }
      if (typed !== (data.limits[kind] || {}).in_force) limits[kind] = typed;
    }
    const body = { currency: cur, limits };
    for (const name of ["session_limit_minutes", "reality_check_minutes"]) {
      const typed = inputs[name].value.trim() === "" ? null : Number(inputs[name].value);
      if (typed !== (data[name] ?? null)) body[name] = typed;
    }
    await change(root, status, api("me/limits/", { method: "PUT", body }), "limits-status", "account.limits.saved");
  });
  root.append(h("h2", { id: "account-heading" }, t("account.tab.limits")), exclusionState(data), form, reminders(),
    exclusionForm(root));
}

/** The reality checks received this browser session (kept by main.js from the table feeds' notices). */
function reminders() {
  let kept = [];
  try {
    kept = JSON.parse(sessionStorage.getItem("casino.notices") || "[]").filter((n) => n.kind === "reality_check");
  } catch {
    kept = [];
  }
  return h("section", { id: "reality-checks", "aria-labelledby": "reality-checks-title" },
    h("h3", { id: "reality-checks-title" }, t("account.limits.reminders")),
    kept.length
      ? h("ul", {}, kept.map((n) => h("li", {}, `${when(n.received_at)}: ${n.message}`)))
      : h("p", { class: "help" }, t("account.limits.no_reminders")));
}

function exclusionState(data) {
  if (!data.exclusion) return null;
  return h("p", { class: "exclusion-state", id: "exclusion-state", role: "status" },
    t(`account.exclusion.state.${data.exclusion}`, { until: data.excluded_until ? when(data.excluded_until) : t("account.exclusion.permanent") }));
}

function exclusionForm(root) {
  const status = h("p", { id: "exclusion-status", role: "status", "aria-live": "polite" });
  const kind = h("select", { id: "exclusion-kind", name: "kind" },
    h("option", { value: "cool_off" }, t("account.exclusion.cool_off")),
    h("option", { value: "self_exclusion" }, t("account.exclusion.self_exclusion")));
  const days = h("input", { id: "exclusion-days", name: "days", type: "number", min: 1, step: 1, value: 1, size: 6 });
  const permanent = h("input", { id: "exclusion-permanent", type: "checkbox" });
  const sure = h("input", { id: "exclusion-confirm", type: "checkbox", required: true });
  const form = h("form", { id: "exclusion-form", class: "exclusion" },
    h("fieldset", {}, h("legend", {}, t("account.exclusion.title")),
      h("p", { class: "help" }, t("account.exclusion.help")),
      h("div", { class: "limit-row" }, h("label", { for: "exclusion-kind" }, t("account.exclusion.kind")), kind),
      h("div", { class: "limit-row" }, h("label", { for: "exclusion-days" }, t("account.exclusion.days")), days),
      h("div", { class: "limit-row" }, permanent, h("label", { for: "exclusion-permanent" }, t("account.exclusion.permanent_choice"))),
      h("div", { class: "limit-row" }, sure, h("label", { for: "exclusion-confirm" }, t("account.exclusion.confirm"))),
      h("button", { type: "submit", id: "exclusion-submit" }, t("account.exclusion.submit")),
      status));
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const body = { kind: kind.value, days: permanent.checked && kind.value === "self_exclusion" ? null : Number(days.value) };
    await change(root, status, api("me/exclusion/", { method: "POST", body }), "exclusion-status", "account.exclusion.done");
  });
  return form;
}

export async function mount(root) {
  try {
    const wallet = await api("wallet/");
    draw(root, await api("me/limits/", { query: { currency: wallet.currency } }));
  } catch (error) {
    root.append(h("p", { class: "error", role: "alert" }, refusal(error)));
  }
}
