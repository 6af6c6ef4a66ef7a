import { login } from "../api.js";
import { language, setLanguage, t } from "../i18n.js";
import { api } from "../api.js";
import { h, refusal } from "../ui.js";

export function mount(root) {
  const error = h("p", { class: "error", role: "alert", id: "login-error" });
  const form = h(
    "form",
    { class: "login card-panel", id: "login-form" },
    h("h1", {}, t("login.title")),
    h("label", { for: "username" }, t("login.username")),
    h("input", { id: "username", name: "username", autocomplete: "username", required: true }),
    h("label", { for: "password" }, t("login.password")),
    h("input", { id: "password", name: "password", type: "password", autocomplete: "current-password", required: true }),
    h("button", { type: "submit", id: "login-submit" }, t("login.submit")),
    error,
  );
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    error.textContent = "";
    try {
      await login(form.username.value, form.password.value);
      try {
        const settings = await api("me/settings/");
        if (settings.language && settings.language !== language()) setLanguage(settings.language);
      } catch {
        /* keep the browser's language */
      }
      location.hash = "#/lobby";
    } catch (failure) {
      error.textContent = refusal(failure);
    }
  });
  root.append(form);
  form.username.focus();
}
