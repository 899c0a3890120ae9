/**
 * @module import/replay-realm-extras
 * The realm's defaults for new people's settings (zerver_realmuserdefault, set through
 * PATCH /realm/user_settings_defaults' action, one at a time if one is refused), code
 * playgrounds and default channel groups (their channels by new ID), each as the owner.
 * Default channel groups go in before archiving, which takes archived channels out of
 * them as it does live. Each person's saved snippets (at their creation time) and
 * navigation views are set as that person.
 */
import { REALM_DEFAULT_SETTING_NAMES, type SettingChanges } from "../../src/engine/index.js";
import { attempt, type SettingsReplay } from "./settings-replay.js";

export function replayRealmUserDefaults(c: SettingsReplay): void {
  const row = c.data.realmUserDefaults as Record<string, unknown> | null;
  if (row === null) return;
  const settings: Record<string, boolean | number | string> = {};
  for (const name of REALM_DEFAULT_SETTING_NAMES) {
    const value = row[name];
    if (typeof value === "boolean" || typeof value === "number" || typeof value === "string") settings[name] = value;
  }
  const apply = (changes: Record<string, boolean | number | string>) => () =>
    c.store.updateRealmSettingDefaults(c.ownerId, changes as SettingChanges);
  try {
    apply(settings)();
    c.count("realm defaults for new users");
  } catch {
    for (const [name, value] of Object.entries(settings))
      attempt(c, "realm defaults for new users", name, apply({ [name]: value }));
  }
}

export function replayPlaygrounds(c: SettingsReplay): void {
  for (const p of c.data.playgrounds)
    attempt(c, "code playgrounds", p.name, () =>
      c.store.addPlayground(c.ownerId, {
        name: p.name,
        pygmentsLanguage: p.pygments_language,
        urlTemplate: p.url_template,
      }),
    );
}

export function replayDefaultChannelGroups(c: SettingsReplay): void {
  for (const g of c.data.defaultStreamGroups) {
    const names: string[] = [];
    for (const stream of g.streams ?? []) {
      const channel = c.channels.get(stream);
      const name = channel === undefined ? undefined : c.store.getChannel(channel)?.name;
      if (name === undefined) c.skip("default channel group's channel not in the export", `${g.name}: ${stream}`);
      else names.push(name);
    }
    attempt(c, "default channel groups", g.name, () =>
      c.store.createDefaultChannelGroup(c.ownerId, {
        name: g.name,
        description: g.description ?? "",
        channelNames: names,
      }),
    );
  }
}

export function replaySnippetsAndViews(c: SettingsReplay): void {
  for (const s of c.data.savedSnippets) {
    const userId = c.users.get(s.user_profile);
    if (userId === undefined) continue;
    if (s.date_created !== undefined) c.setClock(Math.floor(s.date_created));
    attempt(c, "saved snippets", `user ${s.user_profile}: ${s.title}`, () =>
      c.store.createSavedSnippet(userId, s.title, s.content),
    );
  }
  for (const v of c.data.navigationViews) {
    const userId = c.users.get(v.user);
    if (userId === undefined) continue;
    attempt(c, "navigation views", `user ${v.user}: ${v.fragment}`, () =>
      c.store.addNavigationView(userId, {
        fragment: v.fragment,
        isPinned: v.is_pinned ?? false,
        ...(v.name !== null && v.name !== undefined ? { name: v.name } : {}),
      }),
    );
  }
}
