// Boot and hash router. A route names a view module (js/views/<name>.js) that
// exports `mount(root, params)` and returns a cleanup function (or a promise of
// one); the router unmounts the previous view first (its feeds close).
import "./i18n/shell.js";
import { api, logout, token, username } from "./api.js";
import { LANGUAGES, language, setLanguage, t } from "./i18n.js";
import { clear, h, money, notify } from "./ui.js";

const ROUTES = [
  // [pattern, view module, params from the match]
  [/^#\/login$/, "login", () => ({})],
  [/^#\/lobby$/, "lobby", () => ({})],
  [/^#\/house\/([\d,]+)$/, "house", (m) => ({ tableIds: m[1].split(",").filter(Boolean).map(Number) })],
  [/^#\/poker\/(\d+)$/, "poker", (m) => ({ tableId: Number(m[1]) })],
  [/^#\/tournament\/(\d+)$/, "tournament", (m) => ({ tournamentId: Number(m[1]) })],
  [/^#\/account(?:\/(\w+))?(?:\/(.+))?$/, "account", (m) => ({ tab: m[1] || "history", detail: m[2] || null })],
];

let cleanup = null;
let balanceTimer = null;

function resolve(hash) {
  if (!token()) return ["login", {}];
  for (const [pattern, view, params] of ROUTES) {
    const match = hash.match(pattern);
    if (match) return [view, params(match)];
  }
  return ["lobby", {}];
}

async function route() {
  const main = document.getElementById("main");
  if (cleanup) {
    try {
      await cleanup();
    } catch {
      /* a view that fails to clean up must not keep the next one out */
    }
    cleanup = null;
  }
  const [view, params] = resolve(location.hash);
  if (view === "login" && location.hash !== "#/login") history.replaceState(null, "", "#/login");
  drawTopbar();
  clear(main);
  const module = await import(`./views/${view}.js`);
  cleanup = (await module.mount(main, params)) || null;
  main.focus({ preventScroll: true });
}

/** The wallet's balance in the top bar (refreshed by views after a command, and every 15 s). */
export async function refreshBalance() {
  const slot = document.getElementById("balance");
  if (!slot || !token()) return;
  try {
    const wallet = await api("wallet/");
    slot.textContent = money(wallet.balance, wallet.currency);
    slot.dataset.minor = wallet.balance;
  } catch {
    /* the next refresh tries again */
  }
}

function drawTopbar() {
  const bar = clear(document.getElementById("topbar"));
  document.documentElement.lang = language();
  document.title = t("app.title");
  const picker = h(
    "select",
    { id: "language", "aria-label": t("nav.language"), onchange: (e) => changeLanguage(e.target.value) },
    LANGUAGES.map((lang) => h("option", { value: lang, selected: lang === language() }, lang.toUpperCase())),
  );
  bar.append(h("a", { class: "brand", href: "#/lobby" }, t("app.title")));
  if (token()) {
    bar.append(
      h("nav", { "aria-label": "main" },
        h("a", { href: "#/lobby" }, t("nav.lobby")),
        h("a", { href: "#/account" }, t("nav.account"))),
      h("span", { class: "who" }, username() || ""),
      h("span", { class: "balance" }, `${t("nav.balance")}: `, h("strong", { id: "balance" }, "…")),
      picker,
      h("button", { id: "logout", onclick: async () => { await logout(); location.hash = "#/login"; } }, t("nav.logout")),
    );
    refreshBalance();
  } else {
    bar.append(picker);
  }
}

async function changeLanguage(lang) {
  setLanguage(lang);
  if (token()) {
    // The player's choice follows them to every device (PATCH /api/me/settings/).
    try {
      await api("me/settings/", { method: "PATCH", body: { language: lang } });
    } catch {
      /* the local choice still applies */
    }
  }
  route();
}

async function adoptProfileLanguage() {
  try {
    const settings = await api("me/settings/");
    if (settings.language && settings.language !== language()) setLanguage(settings.language);
  } catch {
    /* logged out or offline: the browser's language */
  }
}

window.addEventListener("hashchange", route);
window.addEventListener("casino:logged-out", () => {
  location.hash = "#/login";
});
window.addEventListener("casino:balance", refreshBalance);
// A reality check (or any player notice) from a table feed: kept on screen until dismissed, and kept
// for this browser session so that the account page can list the reminders (key "casino.notices").
window.addEventListener("casino:notice", (event) => {
  const notice = event.detail || {};
  if (!notice.message) return;
  notify(notice.message, "info", { sticky: true });
  try {
    const kept = JSON.parse(sessionStorage.getItem("casino.notices") || "[]");
    kept.unshift({ ...notice, received_at: new Date().toISOString() });
    sessionStorage.setItem("casino.notices", JSON.stringify(kept.slice(0, 20)));
  } catch {
    /* storage full or disabled: the notice was shown */
  }
});
window.addEventListener("DOMContentLoaded", async () => {
  if (token()) await adoptProfileLanguage();
  clearInterval(balanceTimer);
  balanceTimer = setInterval(refreshBalance, 15000);
  route();
});
export { route };
