/**
 * @module import/replay-invites
 * Invitations (zerver_preregistrationuser, zerver_multiuseinvite) with their link keys
 * and expiry (confirmation_confirmation), written as the export had them through the
 * engine's import action: the same key, so links already handed out open the join page
 * of the new server; their channels and groups by new ID. Once every channel and group
 * exists, before deactivations (an inviter's deactivation ends their invitations, as
 * it did on the old server). Zulip's exports hold none (its export leaves them out);
 * an invitation without its confirmation row has no link to carry and is reported.
 */
import type { ImportedInvite, Role } from "../../src/engine/index.js";
import { attempt, type SettingsReplay } from "./settings-replay.js";

/** confirmation.settings' statuses; Confirmation.INVITATION and MULTIUSE_INVITE. */
const STATUS: Readonly<Record<number, ImportedInvite["status"]>> = { 0: "pending", 1: "used", 2: "revoked" };
const TYPE = { email: 2, multiuse: 6 } as const;

export function replayInvites(c: SettingsReplay): void {
  const confirmations = new Map(c.data.confirmations.map((row) => [`${row.type}:${row.object_id}`, row]));
  const group = (zulipId: number): number | undefined => {
    const system = c.data.systemGroups.get(zulipId);
    return system !== undefined ? c.store.systemGroupId(c.realmId, system) : c.groups.get(zulipId);
  };
  const rows = [
    ...c.data.emailInvites.filter((r) => r.realm_creation !== true).map((row) => ({ row, kind: "email" as const })),
    ...c.data.multiuseInvites.map((row) => ({ row, kind: "multiuse" as const })),
  ];
  for (const { row, kind } of rows) {
    const example = kind === "email" ? `invitation of ${row.email ?? "?"}` : `invitation link ${row.id}`;
    const confirmation = confirmations.get(`${TYPE[kind]}:${row.id}`);
    const inviter =
      row.referred_by === null || row.referred_by === undefined ? undefined : c.users.get(row.referred_by);
    if (confirmation === undefined || inviter === undefined) {
      c.skip(
        confirmation === undefined ? "invitation without its link key" : "invitation from a user not imported",
        example,
      );
      continue;
    }
    const channelIds = (row.streams ?? []).map((id) => c.channels.get(id));
    const groupIds = (row.groups ?? []).map(group);
    if (channelIds.includes(undefined) || groupIds.includes(undefined)) {
      c.skip("invitation to a channel or group not imported", example);
      continue;
    }
    attempt(c, kind === "email" ? "invitations" : "invitation links", example, () =>
      c.store.importInvite(c.realmId, {
        kind,
        email: kind === "email" ? (row.email ?? "") : null,
        invitedById: inviter,
        invitedAs: (row.invited_as ?? 400) as Role,
        channelIds: channelIds as number[],
        groupIds: groupIds as number[],
        includeRealmDefaultSubscriptions: row.include_realm_default_subscriptions === true,
        notifyReferrerOnJoin: row.notify_referrer_on_join !== false,
        welcomeMessageCustomText: row.welcome_message_custom_text ?? null,
        invitedAt: row.invited_at ?? confirmation.date_sent ?? c.store.now(),
        expiresAt: confirmation.expiry_date ?? null,
        key: confirmation.confirmation_key,
        status: STATUS[row.status ?? 0] ?? "pending",
      }),
    );
  }
}
