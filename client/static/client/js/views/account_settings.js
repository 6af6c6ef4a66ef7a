// Settings (seed 000, "Settings": general, video and sound tabs), drawn from the API's
// own description (GET /api/me/settings/describe/: labels in the player's language,
// types, choices, ranges) and saved at once on change (PATCH /api/me/settings/).
// Changing the language here switches the whole client's language.
import { api } from "../api.js";
import { language, setLanguage, t } from "../i18n.js";
import { h, refusal } from "../ui.js";

function control(setting, value, save) {
  const id = `setting-${setting.name}`;
  const help = setting.help ? h("small", { id: `${id}-help`, class: "help" }, setting.help) : null;
  const described = help ? `${id}-help` : null;
  if (setting.type === "boolean") {
    return h("div", { class: "setting boolean" },
      h("input", { type: "checkbox", id, name: setting.name, checked: Boolean(value), "aria-describedby": described,
        onchange: (e) => save(setting.name, e.target.checked) }),
      h("label", { for: id }, setting.label), help);
  }
  if (setting.type === "volume") {
    const shown = h("output", { for: id, id: `${id}-value` }, String(value ?? setting.default));
    return h("div", { class: "setting volume" },
      h("label", { for: id }, setting.label), " ", shown,
      h("input", { type: "range", id, name: setting.name, min: setting.min, max: setting.max, step: 1,
        value: value ?? setting.default, "aria-describedby": described,
        oninput: (e) => { shown.textContent = e.target.value; },
        onchange: (e) => save(setting.name, Number(e.target.value)) }),
      help);
  }
  const choices = [...(setting.nullable ? [{ value: "", label: t("account.settings.not_chosen") }] : []), ...setting.choices];
  return h("div", { class: "setting choice" },
    h("label", { for: id }, setting.label),
    h("select", { id, name: setting.name, "aria-describedby": described,
      onchange: (e) => save(setting.name, e.target.value === "" && setting.nullable ? null : e.target.value) },
      choices.map((c) => h("option", { value: c.value, selected: (value ?? "") === c.value }, c.label))),
    help);
}

export async function mount(root) {
  root.append(h("h2", { id: "account-heading" }, t("account.tab.settings")));
  let description;
  let current;
  try {
    [description, current] = await Promise.all([api("me/settings/describe/"), api("me/settings/")]);
  } catch (error) {
    root.append(h("p", { class: "error", role: "alert" }, refusal(error)));
    return;
  }
  // One change at a time, in the order made: two quick steps of a slider must not arrive swapped.
  let saving = Promise.resolve();
  function save(name, value) {
    saving = saving.then(() => store(name, value));
    return saving;
  }
  const status = h("p", { id: "settings-status", role: "status", "aria-live": "polite" });
  async function store(name, value) {
    try {
      current = await api("me/settings/", { method: "PATCH", body: { [name]: value } });
      status.textContent = t("account.settings.saved");
      if (name === "language" && value && value !== language()) {
        setLanguage(value);
        // Draw everything again in the new language (the top bar too).
        window.dispatchEvent(new HashChangeEvent("hashchange"));
      }
    } catch (error) {
      status.textContent = refusal(error);
    }
  }
  root.append(
    h("form", { id: "settings-form", class: "settings", onsubmit: (e) => e.preventDefault() },
      description.tabs.map((tab) =>
        h("fieldset", { id: `settings-${tab.name}` },
          h("legend", {}, tab.label),
          tab.settings.map((setting) => control(setting, current[setting.name], save)))),
      status),
  );
}
