/**
 * Entry point: the login screen, or the client when this tab already holds a key. The
 * key lives in sessionStorage (this tab only, gone when it closes), never in a URL.
 */
import "./style.css";
import { Api, ApiError, fetchApiKey, type Credentials } from "./api.js";
import { App } from "./app.js";
import { h } from "./dom.js";

const KEY = "parley.credentials";

function saved(): Credentials | null {
  try {
    const raw: unknown = JSON.parse(sessionStorage.getItem(KEY) ?? "null");
    if (typeof raw !== "object" || raw === null) return null;
    const { email, apiKey } = raw as Record<string, unknown>;
    return typeof email === "string" && typeof apiKey === "string" ? { email, apiKey } : null;
  } catch {
    return null;
  }
}

function field(id: string, label: string, attrs: Record<string, string>): [HTMLLabelElement, HTMLInputElement] {
  return [h("label", { for: id }, label), h("input", { id, name: id, required: true, ...attrs })];
}

async function startApp(root: HTMLElement, creds: Credentials): Promise<void> {
  const app = new App(root, new Api(creds), (message) => {
    sessionStorage.removeItem(KEY);
    showLogin(root, message);
  });
  await app.start();
  sessionStorage.setItem(KEY, JSON.stringify(creds));
}

function showLogin(root: HTMLElement, message: string): void {
  const error = h("p", { class: "error-line", role: "alert", id: "login-error" }, message);
  const [emailLabel, email] = field("login-email", "Email", { type: "email", autocomplete: "username" });
  const [passwordLabel, password] = field("login-password", "Password", {
    type: "password",
    autocomplete: "current-password",
  });
  const [keyEmailLabel, keyEmail] = field("key-email", "Email", { type: "email", autocomplete: "off" });
  const [keyLabel, key] = field("key-value", "API key", { type: "password", autocomplete: "off", spellcheck: "false" });
  const realm = h("p", { class: "realm-name" });
  const passwordForm = h(
    "form",
    { class: "login-form", id: "password-form", "aria-labelledby": "password-heading" },
    h("h2", { id: "password-heading" }, "Log in"),
    emailLabel,
    email,
    passwordLabel,
    password,
    h("button", { type: "submit" }, "Log in"),
  );
  const keyForm = h(
    "form",
    { class: "login-form", id: "key-form", "aria-labelledby": "key-heading" },
    h("h2", { id: "key-heading" }, "Or paste an API key"),
    keyEmailLabel,
    keyEmail,
    keyLabel,
    key,
    h("button", { type: "submit" }, "Use API key"),
  );
  root.replaceChildren(
    h(
      "main",
      { class: "login" },
      h("h1", {}, "parley"),
      realm,
      error,
      h("div", { class: "login-forms" }, passwordForm, keyForm),
    ),
  );
  email.focus();
  fetch("/api/v1/server_settings")
    .then((r) => r.json())
    .then((s: unknown) => {
      const name = typeof s === "object" && s !== null ? (s as Record<string, unknown>)["realm_name"] : undefined;
      if (typeof name === "string") realm.textContent = name;
    })
    .catch(() => undefined);

  const attempt = async (form: HTMLFormElement, get: () => Promise<Credentials>): Promise<void> => {
    const button = form.querySelector("button");
    if (button) button.disabled = true;
    error.textContent = "";
    try {
      await startApp(root, await get());
    } catch (e) {
      showLogin(root, loginError(e));
    }
  };
  passwordForm.addEventListener("submit", (ev) => {
    ev.preventDefault();
    void attempt(passwordForm, () => fetchApiKey(email.value.trim(), password.value));
  });
  keyForm.addEventListener("submit", (ev) => {
    ev.preventDefault();
    void attempt(keyForm, () => Promise.resolve({ email: keyEmail.value.trim(), apiKey: key.value.trim() }));
  });
}

function loginError(e: unknown): string {
  if (!(e instanceof ApiError)) {
    console.error(e);
    return "Could not log in.";
  }
  if (e.status === 401 || e.status === 403) return e.message || "Wrong email, password or key.";
  if (e.status === 404) return "This server does not offer password login: paste an API key instead.";
  if (e.code === "NETWORK") return "The server could not be reached.";
  return e.message;
}

const root = document.getElementById("root");
if (root) {
  const creds = saved();
  if (creds)
    startApp(root, creds).catch((e: unknown) => {
      sessionStorage.removeItem(KEY);
      showLogin(root, loginError(e));
    });
  else showLogin(root, "");
}
