// The client's own strings in English and French. Each area registers its table
// (js/i18n/<area>.js); `t(key, params)` fills `{name}` placeholders. Refusals
// need no table here: the API answers their `message` in the player's language.
const tables = { en: {}, fr: {} };
const LANG_KEY = "casino.language";
export const LANGUAGES = ["en", "fr"];

export function register(lang, strings) {
  Object.assign(tables[lang], strings);
}

export function language() {
  const chosen = localStorage.getItem(LANG_KEY);
  if (LANGUAGES.includes(chosen)) return chosen;
  const browser = (navigator.language || "en").slice(0, 2).toLowerCase();
  return LANGUAGES.includes(browser) ? browser : "en";
}

export function setLanguage(lang) {
  if (!LANGUAGES.includes(lang)) return;
  localStorage.setItem(LANG_KEY, lang);
  document.documentElement.lang = lang;
  window.dispatchEvent(new CustomEvent("casino:language", { detail: lang }));
}

/** `key`'s text in the current language (English if French lacks it; the key itself if both do). */
export function t(key, params = {}) {
  const lang = language();
  const text = tables[lang][key] ?? tables.en[key] ?? key;
  return text.replace(/\{(\w+)\}/g, (_, name) => (name in params ? String(params[name]) : `{${name}}`));
}

/** Every key of `lang` lacking in the other language: the test of complete translations reads it. */
export function missing() {
  const out = [];
  for (const key of Object.keys(tables.en)) if (!(key in tables.fr)) out.push(`fr:${key}`);
  for (const key of Object.keys(tables.fr)) if (!(key in tables.en)) out.push(`en:${key}`);
  return out;
}
