// The player's account (issue 38): game history and recall with the fairness proof
// checked in the browser, the account statement, settings, responsible-gaming limits,
// the cashier and the games' help pages. Route: #/account/<tab>[/<detail>].
import { t } from "../i18n.js";
import "../i18n/account.js";
import { h } from "../ui.js";

/** The tabs in the order they are drawn, each drawn by its own module (views/account_<module>.js). */
export const TABS = [
  ["history", "account_history"],
  ["statement", "account_money"],
  ["cashier", "account_money"],
  ["limits", "account_limits"],
  ["settings", "account_settings"],
  ["help", "account_help"],
];

export async function mount(root, { tab, detail }) {
  const known = TABS.find(([name]) => name === tab) || TABS[0];
  const [current, moduleName] = known;
  const panel = h("section", { id: "account-panel", class: "account-panel", "aria-labelledby": `account-tab-${current}` });
  root.append(
    h("div", { class: "account" },
      h("h1", {}, t("account.title")),
      h("nav", { class: "account-tabs", "aria-label": t("account.sections") },
        TABS.map(([name]) =>
          h("a", {
            href: `#/account/${name}`,
            id: `account-tab-${name}`,
            class: name === current ? "active" : null,
            "aria-current": name === current ? "page" : null,
          }, t(`account.tab.${name}`)))),
      panel),
  );
  const module = await import(`./${moduleName}.js`);
  return (await module.mount(panel, { tab: current, detail })) || null;
}
