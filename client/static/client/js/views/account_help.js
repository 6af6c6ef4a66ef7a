// The games' help pages (GET /api/games/<code>/help/, in the player's language): each
// seed's page as the product serves it (rules, hand rankings, pay tables, returns).
import { api } from "../api.js";
import { t } from "../i18n.js";
import { h, refusal } from "../ui.js";

const GAMES = ["uth", "casino_holdem", "xtreme", "holdem_no_limit", "holdem_pot_limit", "holdem_fixed_limit"];

function payTable(table) {
  return h("div", { class: "table-scroll" }, h("table", { class: "account-table" },
    h("caption", {}, `${table.wager_name} · ${table.name}`),
    h("thead", {}, h("tr", {}, h("th", { scope: "col" }, t("account.help.hand")), h("th", { scope: "col" }, t("account.help.pays")))),
    h("tbody", {}, table.lines.map((line) => h("tr", {}, h("th", { scope: "row" }, line.hand), h("td", {}, line.pay)))),
    table.rtp ? h("tfoot", {}, h("tr", {}, h("td", { colspan: 2 }, table.rtp.text))) : null));
}

export async function mount(root, { detail }) {
  const game = GAMES.includes(detail) ? detail : GAMES[0];
  root.append(
    h("h2", { id: "account-heading" }, t("account.tab.help")),
    h("nav", { class: "help-games", "aria-label": t("account.help.games") },
      GAMES.map((code) => h("a", { href: `#/account/help/${code}`, "aria-current": code === game ? "page" : null,
        class: code === game ? "active" : null }, t(`account.help.game.${code}`)))),
  );
  try {
    const page = await api(`games/${game}/help/`);
    root.append(h("article", { class: "help-page", id: "help-page", lang: page.language },
      h("h3", {}, page.title),
      page.sections.map((section) => h("section", { id: `help-${section.id}` },
        h("h4", {}, section.title), section.paragraphs.map((text) => h("p", {}, text)))),
      page.hand_rankings ? h("section", {}, h("h4", {}, t("account.help.rankings")),
        h("ol", {}, page.hand_rankings.map((r) => h("li", {}, h("strong", {}, r.name), ` – ${r.description}`)))) : null,
      (page.pay_tables || []).length ? h("section", {}, h("h4", {}, t("account.help.pay_tables")), page.pay_tables.map(payTable)) : null));
  } catch (error) {
    root.append(h("p", { class: "error", role: "alert" }, refusal(error)));
  }
}
