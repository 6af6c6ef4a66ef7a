// Small DOM and formatting helpers shared by the views.
import { language, t } from "./i18n.js";

/** `h("button", {class: "x", onclick}, "text", child)`: an element with attributes, handlers and children. */
export function h(tag, attrs = {}, ...children) {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith("on") && typeof value === "function") element.addEventListener(name.slice(2), value);
    else if (name === "dataset") Object.assign(element.dataset, value);
    else if (value === true) element.setAttribute(name, "");
    else element.setAttribute(name, value);
  }
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    element.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return element;
}

/** The number of minor units in one unit of `currency` (ISO 4217, as the ledger: EUR 2, JPY 0). */
export function minorDigits(currency) {
  try {
    return new Intl.NumberFormat("en", { style: "currency", currency }).resolvedOptions().maximumFractionDigits;
  } catch {
    return 2;
  }
}

/** `amount` minor units of `currency` as the player's language writes money ("€12.50", "12,50 €"). */
export function money(amount, currency) {
  if (amount === null || amount === undefined) return "–";
  const digits = minorDigits(currency || "EUR");
  const locale = language() === "fr" ? "fr-FR" : "en-GB";
  try {
    return new Intl.NumberFormat(locale, {
      style: "currency",
      currency: currency || "EUR",
      minimumFractionDigits: amount % 10 ** digits === 0 ? 0 : digits,
    }).format(amount / 10 ** digits);
  } catch {
    return `${(amount / 10 ** digits).toFixed(digits)} ${currency}`;
  }
}

/** Show a short notice to the player (role=status region); `kind`: info | error. */
export function notify(text, kind = "info", { sticky = false } = {}) {
  const region = document.getElementById("notices");
  const item = h("div", { class: `notice ${kind}`, role: kind === "error" ? "alert" : "status" }, text,
    h("button", { class: "close", "aria-label": t("close"), onclick: () => item.remove() }, "×"));
  region.append(item);
  if (!sticky) setTimeout(() => item.remove(), 8000);
  return item;
}

/** A refusal as the player reads it: the API's message (already in their language) and its code. */
export function refusal(error) {
  return error && error.code ? `${error.message} (${error.code})` : String(error);
}

/** A card code ("Ah", "Td") as text with its suit symbol and colour class. */
export function card(code) {
  if (!code) return h("span", { class: "card back", "aria-label": t("card.face_down") }, "🂠");
  const rank = code[0] === "T" ? "10" : code[0];
  const suit = { s: "♠", h: "♥", d: "♦", c: "♣" }[code[1]] || "?";
  const red = code[1] === "h" || code[1] === "d";
  return h("span", { class: `card ${red ? "red" : "black"}`, "aria-label": code }, rank, suit);
}

export function clear(element) {
  while (element.firstChild) element.firstChild.remove();
  return element;
}
