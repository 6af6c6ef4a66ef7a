// REST client of the public API (docs: /api/docs/). Every call sends the player's
// token and language; a refusal becomes an ApiError carrying the API's stable code.
import { language } from "./i18n.js";

const TOKEN_KEY = "casino.token";
const USER_KEY = "casino.username";

export class ApiError extends Error {
  /** A refusal: `code` is the API's stable error code, `message` its text in the player's language. */
  constructor(status, code, message, details) {
    super(message || code);
    this.status = status;
    this.code = code;
    this.details = details || {};
  }
}

export function token() {
  return localStorage.getItem(TOKEN_KEY);
}

export function username() {
  return localStorage.getItem(USER_KEY);
}

export function forget() {
  localStorage.removeItem(TOKEN_KEY);
  localStorage.removeItem(USER_KEY);
}

/** A fresh Idempotency-Key: a command retried after a lost answer is applied once. */
export function idempotencyKey() {
  if (crypto.randomUUID) return crypto.randomUUID();
  return Array.from(crypto.getRandomValues(new Uint8Array(16)), (b) => b.toString(16).padStart(2, "0")).join("");
}

/**
 * Call `path` (under /api/) and return its JSON. `command: true` adds an Idempotency-Key
 * (every POST the API documents as a command). A 401 forgets the token and sends the
 * player to the login page.
 */
export async function api(path, { method = "GET", body, command = false, query } = {}) {
  const headers = { Accept: "application/json", "Accept-Language": language() };
  const key = token();
  if (key) headers.Authorization = `Token ${key}`;
  if (body !== undefined) headers["Content-Type"] = "application/json";
  if (command) headers["Idempotency-Key"] = idempotencyKey();
  let url = path.startsWith("/") ? path : `/api/${path}`;
  if (query) {
    const params = new URLSearchParams();
    for (const [name, value] of Object.entries(query)) if (value !== undefined && value !== null) params.set(name, value);
    if ([...params].length) url += `?${params}`;
  }
  const response = await fetch(url, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await response.text();
  const data = text ? JSON.parse(text) : null;
  if (!response.ok) {
    const error = (data && data.error) || {};
    if (response.status === 401 && key) {
      forget();
      window.dispatchEvent(new CustomEvent("casino:logged-out"));
    }
    throw new ApiError(response.status, error.code || `http_${response.status}`, error.message, error.details);
  }
  return data;
}

export async function login(name, password) {
  const answer = await api("auth/token/", { method: "POST", body: { username: name, password } });
  localStorage.setItem(TOKEN_KEY, answer.token);
  localStorage.setItem(USER_KEY, answer.username);
  return answer;
}

export async function logout() {
  try {
    await api("auth/logout/", { method: "POST" });
  } finally {
    forget();
  }
}
