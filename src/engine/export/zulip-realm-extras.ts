/**
 * @module export/zulip-realm-extras
 * More of the realm's configuration as realm.json tables of a Zulip export: the
 * defaults new people's settings start with (zerver_realmuserdefault, one row of
 * UserBaseSettings columns under their API names), default channel groups
 * (zerver_defaultstreamgroup, its channels as the many-to-many list Zulip's export
 * writes) and code playgrounds (zerver_realmplayground). People's saved snippets and
 * navigation views are theirs: as Zulip's export limits them to consenting users, they
 * are exported in an export with consent, for those who consent.
 */
import type { StoreState } from "../state.js";
import { REALM_EXPORT_TYPE } from "../types.js";
import { REALM_DEFAULT_SETTING_NAMES } from "../settings/validation.js";

type Row = Record<string, unknown>;

/** Users whose own data goes in: the consenting ones, in an export with consent (none in a public one). */
export interface OwnDataScope {
  readonly type: number;
  readonly consented: ReadonlySet<number>;
}

function ownDataTables(state: StoreState, realmId: number, scope: OwnDataScope): Record<string, Row[]> {
  const snippets: Row[] = [];
  const views: Row[] = [];
  if (scope.type === REALM_EXPORT_TYPE.FULL_WITH_CONSENT) {
    const users = [...state.usersOfRealm(realmId)].filter((u) => scope.consented.has(u)).sort((x, y) => x - y);
    for (const userId of users) {
      const mine = [...(state.snippetsByUser.get(userId)?.values() ?? [])].sort((x, y) => x.id - y.id);
      for (const s of mine)
        snippets.push({
          id: s.id,
          user_profile: userId,
          realm: realmId,
          title: s.title,
          content: s.content,
          date_created: s.dateCreated,
        });
      for (const v of state.navigationViewsOf.get(userId)?.views ?? [])
        views.push({ id: views.length + 1, user: userId, fragment: v.fragment, is_pinned: v.isPinned, name: v.name });
    }
  }
  return { zerver_savedsnippet: snippets, zerver_navigationview: views };
}

export function realmExtraTables(state: StoreState, realmId: number, scope: OwnDataScope): Record<string, Row[]> {
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
    ...ownDataTables(state, realmId, scope),
  };
}
