// The lobby: house tables by game with their light, limits, chips and jackpot;
// poker tables and tournaments are listed by their own sections (views/lobby_poker.js).
import { api } from "../api.js";
import { t } from "../i18n.js";
import { h, money, notify, refusal } from "../ui.js";

const LIGHT_REFRESH_MS = 3000;

function limitText(table) {
  const ante = table.limits && (table.limits.ante || Object.values(table.limits)[0]);
  return ante ? `${money(ante.min, table.currency)} – ${money(ante.max, table.currency)}` : "";
}

function jackpotText(table) {
  return (table.jackpot || []).map((pool) => `${pool.name}: ${money(pool.amount, pool.currency)}`).join(" · ");
}

function houseRow(table) {
  const light = table.traffic_light || "red";
  return h(
    "tr",
    { dataset: { table: table.code } },
    h("td", {}, t(`game.${table.game}`)),
    h("th", { scope: "row" }, `${table.name} (${table.code})`),
    h("td", {}, limitText(table)),
    h("td", { class: "players" }, String(table.players ?? "")),
    h("td", {}, h("span", { class: `light ${light}`, "aria-label": t(`light.${light}`) }, t(`light.${light}`))),
    h("td", { class: "jackpot" }, jackpotText(table)),
    h(
      "td",
      {},
      table.is_open
        ? h("a", { class: "button", href: `#/house/${table.id}`, id: `play-${table.code}` }, t("lobby.play"))
        : t("lobby.closed"),
    ),
  );
}

export async function mount(root) {
  const house = h("tbody", { id: "house-tables" });
  root.append(
    h("h1", {}, t("lobby.title")),
    h("section", { "aria-labelledby": "house-title" },
      h("h2", { id: "house-title" }, t("lobby.house")),
      h("table", { class: "lobby" },
        h("thead", {}, h("tr", {},
          h("th", { scope: "col" }, t("lobby.game")),
          h("th", { scope: "col" }, t("lobby.table")),
          h("th", { scope: "col" }, t("lobby.limits")),
          h("th", { scope: "col" }, t("lobby.players")),
          h("th", { scope: "col" }, t("lobby.light")),
          h("th", { scope: "col" }, t("lobby.jackpot")),
          h("th", { scope: "col" }, ""))),
        house)),
    h("section", { id: "poker-lobby", "aria-label": t("lobby.poker") }),
  );
  async function refresh() {
    try {
      const tables = await api("tables/");
      house.replaceChildren(...tables.map(houseRow));
    } catch (error) {
      notify(refusal(error), "error");
    }
  }
  await refresh();
  const timer = setInterval(refresh, LIGHT_REFRESH_MS);
  let pokerCleanup = null;
  try {
    const poker = await import("./lobby_poker.js");
    pokerCleanup = await poker.mount(document.getElementById("poker-lobby"));
  } catch {
    /* the poker lobby section is its own module; the house lobby works without it */
  }
  return () => {
    clearInterval(timer);
    if (pokerCleanup) pokerCleanup();
  };
}
