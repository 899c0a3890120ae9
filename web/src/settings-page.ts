/**
 * Settings: personal (name, display and notification settings, each saved with
 * PATCH /settings as it changes, as Zulip's settings pages do) and, for administrators,
 * the organization's main settings (one form, PATCH /realm with what changed). Values
 * come from register's user_settings and realm sections and follow their events, so a
 * change made in another tab shows here.
 */
import { h } from "./dom.js";
import { errorText, type Page, type PageContext } from "./pages.js";
import { avatar } from "./people.js";
import type { ServerEvent, User } from "./types.js";

type Kind = "bool" | "text" | "int" | { readonly choices: readonly (readonly [string | number, string])[] };

interface FieldSpec {
  readonly name: string;
  readonly label: string;
  readonly kind: Kind;
}

const DISPLAY: readonly FieldSpec[] = [
  {
    name: "color_scheme",
    label: "Theme",
    kind: {
      choices: [
        [1, "Automatic"],
        [2, "Dark"],
        [3, "Light"],
      ],
    },
  },
  {
    name: "web_home_view",
    label: "Home view",
    kind: {
      choices: [
        ["inbox", "Inbox"],
        ["recent_topics", "Recent conversations"],
        ["all_messages", "Combined feed"],
      ],
    },
  },
  { name: "twenty_four_hour_time", label: "24-hour time", kind: "bool" },
  { name: "starred_message_counts", label: "Show counts for starred messages", kind: "bool" },
];

const NOTIFICATIONS: readonly FieldSpec[] = [
  { name: "enable_desktop_notifications", label: "Desktop notifications for DMs and mentions", kind: "bool" },
  { name: "pm_content_in_desktop_notifications", label: "Include message content in DM notifications", kind: "bool" },
  { name: "wildcard_mentions_notify", label: "Notify for @all and @everyone mentions", kind: "bool" },
  { name: "enable_sounds", label: "Audible notifications", kind: "bool" },
  { name: "enable_offline_email_notifications", label: "Email me DMs and mentions while I am away", kind: "bool" },
];

/** The main organization settings (register's realm_* names without the prefix). */
const ORGANIZATION: readonly FieldSpec[] = [
  { name: "name", label: "Organization name", kind: "text" },
  { name: "description", label: "Description", kind: "text" },
  { name: "default_language", label: "Default language (code)", kind: "text" },
  { name: "invite_required", label: "Invitations are required to join", kind: "bool" },
  { name: "waiting_period_threshold", label: "Days before new members count as full members", kind: "int" },
  { name: "allow_message_editing", label: "Allow message editing", kind: "bool" },
  { name: "message_content_edit_limit_seconds", label: "Editing limit, seconds (empty: no limit)", kind: "int" },
  { name: "mandatory_topics", label: "Require topics in channel messages", kind: "bool" },
];

/** Personal and realm settings as register gave them, kept current by events. */
export class SettingsStore {
  readonly user: Record<string, unknown>;
  readonly realm: Record<string, unknown> = {};

  constructor(initial: Readonly<Record<string, unknown>>) {
    const user = initial["user_settings"];
    this.user = typeof user === "object" && user !== null ? { ...(user as Record<string, unknown>) } : {};
    for (const [k, v] of Object.entries(initial)) if (k.startsWith("realm_")) this.realm[k.slice(6)] = v;
    // Register has topics_policy; the form offers Zulip's older boolean.
    if (this.realm["mandatory_topics"] === undefined && typeof this.realm["topics_policy"] === "string")
      this.realm["mandatory_topics"] = this.realm["topics_policy"] === "disable_empty_topic";
  }

  apply(e: ServerEvent): boolean {
    if (e.type === "user_settings" && e["op"] === "update" && typeof e["property"] === "string") {
      this.user[e["property"]] = e["value"];
      return true;
    }
    if (e.type === "realm" && e["op"] === "update" && typeof e["property"] === "string") {
      this.realm[e["property"]] = e["value"];
      return true;
    }
    if (e.type === "realm" && e["op"] === "update_dict" && typeof e["data"] === "object" && e["data"] !== null) {
      Object.assign(this.realm, e["data"]);
      return true;
    }
    return false;
  }
}

function control(spec: FieldSpec, value: unknown, id: string): HTMLInputElement | HTMLSelectElement {
  const kind = spec.kind;
  if (kind === "bool") return h("input", { id, type: "checkbox", name: spec.name, checked: value === true });
  if (kind === "text" || kind === "int") {
    const input = h("input", { id, name: spec.name, type: kind === "int" ? "number" : "text", autocomplete: "off" });
    input.value = value === null || value === undefined ? "" : String(value);
    return input;
  }
  const select = h("select", { id, name: spec.name });
  for (const [v, label] of kind.choices) select.append(h("option", { value: String(v) }, label));
  select.value = String(value ?? kind.choices[0]?.[0] ?? "");
  return select;
}

/** The value a control holds, in the wire type of its setting. */
function valueOf(spec: FieldSpec, el: HTMLInputElement | HTMLSelectElement): unknown {
  if (spec.kind === "bool") return (el as HTMLInputElement).checked;
  if (spec.kind === "int") return el.value.trim() === "" ? "unlimited" : Number(el.value);
  if (spec.kind === "text") return el.value;
  const choice = spec.kind.choices.find(([v]) => String(v) === el.value);
  return choice?.[0];
}

function row(spec: FieldSpec, el: HTMLElement, id: string): HTMLElement {
  return spec.kind === "bool"
    ? h("div", { class: "check-field" }, el, h("label", { for: id }, spec.label))
    : h("div", { class: "dialog-field" }, h("label", { for: id }, spec.label), el);
}

export class SettingsPage implements Page {
  readonly element = h("section", { class: "page settings-page", "aria-label": "Personal settings" });
  readonly #status = h("p", { class: "settings-status", role: "status" });

  constructor(
    private readonly ctx: PageContext,
    private readonly store: SettingsStore,
    private readonly askNotifications: () => Promise<string>,
  ) {
    this.#draw();
  }

  onEvents(events: readonly ServerEvent[]): void {
    if (events.some((e) => e.type === "user_settings" || e.type === "realm_user")) this.#draw();
  }

  #draw(): void {
    if (this.element.contains(document.activeElement)) return;
    const me = this.ctx.state.users.get(this.ctx.state.me);
    const name = h("input", { id: "setting-full_name", name: "full_name", autocomplete: "name", maxlength: "60" });
    name.value = me?.full_name ?? "";
    const nameForm = h(
      "form",
      { class: "settings-group", "aria-labelledby": "profile-heading" },
      h("h2", { id: "profile-heading" }, "Profile"),
      h("div", { class: "dialog-field" }, h("label", { for: "setting-full_name" }, "Full name"), name),
      h("button", { type: "submit", class: "primary" }, "Save name"),
    );
    nameForm.addEventListener("submit", (ev) => {
      ev.preventDefault();
      void this.#save({ full_name: name.value.trim() });
    });
    nameForm.insertBefore(this.#avatarControls(me), nameForm.querySelector(".dialog-field"));
    const notifyButton =
      typeof Notification === "undefined"
        ? h("p", {}, "This browser has no desktop notifications.")
        : h(
            "button",
            {
              type: "button",
              class: "secondary",
              id: "allow-notifications",
              onclick: () =>
                void this.askNotifications().then((p) => (this.#status.textContent = `Desktop notifications: ${p}`)),
            },
            Notification.permission === "granted"
              ? "Desktop notifications allowed in this browser"
              : "Allow desktop notifications in this browser",
          );
    this.element.replaceChildren(
      nameForm,
      this.#group("display", "Display", DISPLAY),
      this.#group("notifications", "Notifications", NOTIFICATIONS, notifyButton),
      this.#status,
    );
  }

  /** The avatar: upload an image (POST /users/me/avatar) or go back to the default (DELETE). */
  #avatarControls(me: User | undefined): HTMLElement {
    const id = this.ctx.state.me;
    let preview = avatar(me, id, "large");
    const show = (url: string | null): void => {
      if (me) me.avatar_url = url;
      const next = avatar(me, id, "large");
      preview.replaceWith(next);
      preview = next;
      remove.hidden = url === null;
    };
    const file = h("input", {
      id: "setting-avatar",
      type: "file",
      accept: "image/png,image/gif,image/jpeg,image/webp",
    });
    const remove = h("button", { type: "button", class: "secondary", id: "remove-avatar" }, "Remove avatar");
    remove.hidden = typeof me?.avatar_url !== "string";
    file.addEventListener("change", () => {
      const chosen = file.files?.[0];
      if (!chosen) return;
      const form = new FormData();
      form.append("file", chosen, chosen.name);
      this.#status.textContent = "Uploading…";
      this.ctx.api
        .postFiles("/users/me/avatar", form)
        .then((reply) => {
          show(typeof reply["avatar_url"] === "string" ? reply["avatar_url"] : null);
          this.#status.textContent = "Saved.";
        })
        .catch((error: unknown) => (this.#status.textContent = errorText(error, "Could not upload the avatar")))
        .finally(() => (file.value = ""));
    });
    remove.addEventListener("click", () => {
      this.ctx.api
        .delete("/users/me/avatar")
        .then(() => {
          // The default is a Gravatar, which this client shows as initials (people.ts).
          show(null);
          this.#status.textContent = "Saved.";
        })
        .catch((error: unknown) => (this.#status.textContent = errorText(error, "Could not remove the avatar")));
    });
    return h(
      "div",
      { class: "avatar-field" },
      preview,
      h("div", { class: "dialog-field" }, h("label", { for: "setting-avatar" }, "Upload avatar"), file),
      remove,
    );
  }

  #group(key: string, title: string, specs: readonly FieldSpec[], extra: HTMLElement | null = null): HTMLElement {
    const rows = specs.map((spec) => {
      const id = `setting-${spec.name}`;
      const el = control(spec, this.store.user[spec.name], id);
      el.addEventListener("change", () => void this.#save({ [spec.name]: valueOf(spec, el) }));
      return row(spec, el, id);
    });
    return h("fieldset", { class: "settings-group" }, h("legend", { id: `${key}-heading` }, title), ...rows, extra);
  }

  async #save(params: Record<string, unknown>): Promise<void> {
    this.#status.textContent = "Saving…";
    try {
      await this.ctx.api.patch("/settings", params as Record<string, string | number | boolean>);
      for (const [k, v] of Object.entries(params)) if (k !== "full_name") this.store.user[k] = v;
      this.#status.textContent = "Saved.";
    } catch (error) {
      this.#status.textContent = errorText(error, "Could not save");
    }
  }
}

export class OrganizationPage implements Page {
  readonly element = h("section", { class: "page settings-page", "aria-label": "Organization settings" });

  constructor(
    private readonly ctx: PageContext,
    private readonly store: SettingsStore,
    isAdmin: boolean,
  ) {
    if (!isAdmin) {
      this.element.append(h("p", { class: "list-notice" }, "Only administrators can change organization settings."));
      return;
    }
    this.#draw();
  }

  onEvents(events: readonly ServerEvent[]): void {
    if (events.some((e) => e.type === "realm")) this.#draw();
  }

  #draw(): void {
    if (this.element.contains(document.activeElement)) return;
    const status = h("p", { class: "settings-status", role: "status" });
    const controls = ORGANIZATION.map((spec) => {
      const id = `realm-${spec.name}`;
      return { spec, el: control(spec, this.store.realm[spec.name], id), id };
    });
    const form = h(
      "form",
      { class: "settings-group", "aria-labelledby": "org-heading" },
      h("h2", { id: "org-heading" }, "Organization"),
      ...controls.map(({ spec, el, id }) => row(spec, el, id)),
      h("button", { type: "submit", class: "primary" }, "Save changes"),
      status,
    );
    form.addEventListener("submit", (ev) => {
      ev.preventDefault();
      const changed: Record<string, string | number | boolean> = {};
      for (const { spec, el } of controls) {
        const value = valueOf(spec, el);
        const old = this.store.realm[spec.name];
        const same = value === old || (value === "unlimited" && old === null);
        if (!same && (typeof value === "string" || typeof value === "number" || typeof value === "boolean"))
          changed[spec.name] = value;
      }
      if (Object.keys(changed).length === 0) {
        status.textContent = "Nothing changed.";
        return;
      }
      status.textContent = "Saving…";
      this.ctx.api.patch("/realm", changed).then(
        () => {
          Object.assign(this.store.realm, changed);
          status.textContent = "Saved.";
        },
        (error: unknown) => (status.textContent = errorText(error, "Could not save")),
      );
    });
    this.element.replaceChildren(form);
  }
}
