/**
 * @module tools/import/settings-replay
 * What every settings step of an import shares (tools/import/replay-settings.ts,
 * replay-realm.ts, replay-realm-extras.ts): the replay's context, one refusal-counting
 * call, and group-setting values mapped into the new realm. A leaf, so the steps can
 * call each other without import circles.
 */
import type { GroupSettingValue, Store } from "../../src/engine/index.js";
import { RECIPIENT, type ZulipExport } from "./zulip-export.js";

export interface SettingsReplay {
  readonly store: Store;
  readonly data: ZulipExport;
  readonly realmId: number;
  readonly ownerId: number;
  readonly users: Map<number, number>;
  readonly channels: Map<number, number>;
  readonly groups: Map<number, number>;
  /** Zulip message ID -> parley's (filled as messages are replayed). */
  readonly messages: Map<number, number>;
  readonly count: (what: string, n?: number) => void;
  readonly skip: (why: string, example: string) => void;
  readonly setClock: (unixSeconds: number) => void;
  /** The data directory files are copied into; undefined: files are not copied (reported). */
  readonly dataDir: string | undefined;
  /** Zulip emoji ID -> parley's (reactions and statuses name custom emoji by ID). */
  readonly emoji: Map<number, number>;
  /**
   * Message content as it is stored here: mentions' user IDs and upload links renamed.
   * Set once the users and uploads are imported; drafts and scheduled messages use it too.
   */
  rewriteContent: (content: string) => string;
}

export function reason(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

export function attempt(c: SettingsReplay, what: string, example: string, work: () => void): boolean {
  try {
    work();
    c.count(what);
    return true;
  } catch (error) {
    c.skip(`${what} refused: ${reason(error)}`, example);
    return false;
  }
}

/** A group setting's value in the new realm: a system group by name, a named group by its new ID, or anonymous. */
export function groupValue(
  c: SettingsReplay,
  zulipId: number,
  members: Map<number, GroupSettingValue>,
): GroupSettingValue {
  const system = c.data.systemGroups.get(zulipId);
  if (system !== undefined) return c.store.systemGroupId(c.realmId, system);
  const named = c.groups.get(zulipId);
  if (named !== undefined) return named;
  const anonymous = members.get(zulipId);
  if (anonymous !== undefined) return anonymous;
  throw new Error(`group ${zulipId} is not in the export`);
}

export function anonymousGroups(c: SettingsReplay): Map<number, GroupSettingValue> {
  const out = new Map<number, { directMembers: number[]; directSubgroups: number[] }>();
  for (const id of c.data.anonymousGroups) out.set(id, { directMembers: [], directSubgroups: [] });
  for (const m of c.data.groupMembers) {
    const user = c.users.get(m.user_profile);
    if (user !== undefined) out.get(m.user_group)?.directMembers.push(user);
  }
  for (const g of c.data.groupSubgroups) {
    const sub = c.data.systemGroups.has(g.subgroup)
      ? c.store.systemGroupId(c.realmId, c.data.systemGroups.get(g.subgroup)!)
      : c.groups.get(g.subgroup);
    if (sub !== undefined) out.get(g.supergroup)?.directSubgroups.push(sub);
  }
  return out;
}

/** A Zulip recipient as a draft's or scheduled message's addressee, from `userId`'s side. */
export function addressee(
  c: SettingsReplay,
  userId: number,
  recipientId: number,
  membersOfRecipient: Map<number, number[]>,
): { type: "channel"; channelId: number } | { type: "direct"; userIds: number[] } | null {
  const r = c.data.recipients.get(recipientId);
  if (r === undefined) return null;
  if (r.type === RECIPIENT.STREAM) {
    const channelId = c.channels.get(r.type_id);
    return channelId === undefined ? null : { type: "channel", channelId };
  }
  const zulipMembers = r.type === RECIPIENT.PERSONAL ? [r.type_id] : (membersOfRecipient.get(r.id) ?? []);
  const members = zulipMembers.map((u) => c.users.get(u));
  if (members.some((u) => u === undefined)) return null;
  const others = (members as number[]).filter((u) => u !== userId);
  return { type: "direct", userIds: others.length === 0 ? [userId] : others };
}
