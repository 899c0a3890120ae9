/**
 * @module actions/realms
 * Creating realms (with their system groups and first owner) and their settings.
 */
import { createHash, randomUUID } from "node:crypto";
import { realmAudience } from "../events/audience.js";
import { SYSTEM_GROUPS } from "../access.js";
import { BadRequestError, clip } from "../errors.js";
import type { StoreState, WriteContext } from "../state.js";
import type { Realm, User, UserGroup } from "../types.js";
import { ROLE } from "../types.js";
import { createUserInTxn, type CreateUserInput } from "./users.js";

export interface CreateRealmInput {
  /** "" creates the realm served on bare hosts (127.0.0.1, localhost). */
  readonly subdomain: string;
  readonly name: string;
  readonly owner: Omit<CreateUserInput, "realmId" | "role" | "bot">;
}

const SUBDOMAIN = /^(|[a-z0-9]([a-z0-9-]{0,38}[a-z0-9])?)$/;

export function createRealm(state: StoreState, input: CreateRealmInput): { realm: Realm; owner: User } {
  const subdomain = input.subdomain.trim().toLowerCase();
  if (!SUBDOMAIN.test(subdomain))
    throw new BadRequestError(`Invalid subdomain '${clip(input.subdomain)}': use letters, digits and inner hyphens`);
  if (state.realmBySubdomain.has(subdomain)) throw new BadRequestError(`Subdomain '${subdomain}' is already in use`);
  const name = input.name.trim();
  if (name.length === 0 || name.length > 40) throw new BadRequestError("Organization name must be 1 to 40 characters");
  return state.write((ctx) => {
    const now = state.now();
    const realm: Realm = {
      id: state.allocate("nextRealmId"),
      subdomain,
      name,
      dateCreated: now,
      deactivated: false,
      emptyTopicDisplayName: "general chat",
      topicsPolicy: "allow_empty_topic",
      enableSpectatorAccess: false,
      uuid: randomUUID(),
    };
    state.tables.realms.putSync(realm.id, realm);
    ctx.afterCommit(() => state.indexRealm(realm));
    ctx.changed({ kind: "realm", id: realm.id, op: "added" });
    const ids = SYSTEM_GROUPS.map(() => state.allocate("nextGroupId"));
    const nobody = ids[SYSTEM_GROUPS.findIndex((g) => g.name === "role:nobody")]!;
    SYSTEM_GROUPS.forEach((system, i) => {
      const group: UserGroup = {
        id: ids[i]!,
        realmId: realm.id,
        name: system.name,
        description: system.description,
        systemRole: system.name,
        members: [],
        subgroups: [],
        deactivated: false,
        canManageGroup: nobody,
        canMentionGroup: nobody,
        dateCreated: now,
        creatorId: null,
      };
      state.tables.groups.putSync(group.id, group);
      ctx.afterCommit(() => state.indexGroup(group));
      ctx.changed({ kind: "group", id: group.id, op: "added" });
    });
    const owner = createUserInTxn(state, ctx, { ...input.owner, realmId: realm.id, role: ROLE.OWNER }, realm);
    return { realm, owner };
  });
}

/** The ID of a realm's system group by name ("role:members", ...). */
export function systemGroupId(state: StoreState, realmId: number, name: string): number {
  const id = state.systemGroupIdOf(realmId, name);
  if (id !== undefined) return id;
  throw new BadRequestError(`Realm ${realmId} has no system group ${name}`);
}

/** Sets (or clears, with null) the channel where new channels are announced. */
export function setNewChannelAnnouncementsChannel(state: StoreState, realmId: number, channelId: number | null): void {
  const realm = state.realms.get(realmId);
  if (!realm) throw new BadRequestError("Invalid realm");
  if (channelId !== null) {
    const channel = state.channels.get(channelId);
    if (!channel || channel.realmId !== realmId) throw new BadRequestError("Invalid channel ID");
  }
  const next: Realm = { ...realm, newChannelAnnouncementsChannelId: channelId };
  state.write((ctx) => {
    state.tables.realms.putSync(realmId, next);
    ctx.afterCommit(() => state.indexRealm(next));
    ctx.emit({ type: "realm", op: "update_announcements_channel", realm: next }, () => realmAudience(state, realmId));
  });
}

/** Sets the realm's flag; `alsoInTxn` writes what goes with it (the owners' mail) in the same transaction. */
export function setRealmDeactivated(
  state: StoreState,
  realmId: number,
  deactivated: boolean,
  alsoInTxn?: (ctx: WriteContext) => void,
): void {
  const realm = state.realms.get(realmId);
  if (!realm) throw new BadRequestError("Invalid realm");
  const next: Realm = { ...realm, deactivated };
  state.write((ctx) => {
    alsoInTxn?.(ctx);
    state.tables.realms.putSync(realmId, next);
    ctx.afterCommit(() => state.indexRealm(next));
    ctx.changed({ kind: "realm", id: realmId, fields: ["deactivated"] });
    if (deactivated) ctx.emit({ type: "realm", op: "deactivated", realm: next }, () => realmAudience(state, realmId));
  });
}

/**
 * The realm's UUID for the push bouncer. Realms created before it existed get one
 * derived from what never changes about them, so it is stable without a migration.
 */
export function realmUuid(realm: Realm): string {
  if (realm.uuid !== undefined) return realm.uuid;
  const hex = createHash("sha256").update(`parley-realm:${realm.id}:${realm.dateCreated}`).digest("hex");
  // Shaped as a version-4 UUID, which is what the bouncer parses.
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-${((parseInt(hex[16]!, 16) & 0x3) | 0x8).toString(16)}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}
