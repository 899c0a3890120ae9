/**
 * @module export/zulip-realm-extras
 * More of the realm's configuration as realm.json tables of a Zulip export: the
 * defaults new people's settings start with (zerver_realmuserdefault, one row of
 * UserBaseSettings columns under their API names), default channel groups
 * (zerver_defaultstreamgroup, its channels as the many-to-many list Zulip's export
 * writes) and code playgrounds (zerver_realmplayground).
 */
import type { StoreState } from "../state.js";
import { REALM_DEFAULT_SETTING_NAMES } from "../settings/validation.js";

type Row = Record<string, unknown>;

export function realmExtraTables(state: StoreState, realmId: number): Record<string, Row[]> {
  const realm = state.realms.get(realmId)!;
  const defaults = state.realmDefaultsOf(realmId);
  return {
    zerver_realmuserdefault: [
      { id: 1, realm: realmId, ...Object.fromEntries(REALM_DEFAULT_SETTING_NAMES.map((n) => [n, defaults[n]])) },
    ],
    zerver_defaultstreamgroup: (realm.defaultChannelGroups ?? []).map((g) => ({
      id: g.id,
      realm: realmId,
      name: g.name,
      description: g.description,
      streams: [...g.channelIds],
    })),
    zerver_realmplayground: [...state.playgrounds.values()]
      .filter((p) => p.realmId === realmId)
      .sort((x, y) => x.id - y.id)
      .map((p) => ({
        id: p.id,
        realm: realmId,
        name: p.name,
        pygments_language: p.pygmentsLanguage,
        url_template: p.urlTemplate,
      })),
  };
}
