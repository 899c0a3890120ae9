/**
 * @module export/zulip-settings-tables
 * The realm's settings and people's own data as realm.json tables of a Zulip export
 * (zerver/lib/export.py's get_realm_config; what zerver/lib/import_realm.py reads):
 * custom profile fields and their values, linkifiers (zerver_realmfilter), email
 * domains, custom emoji, channel folders, each channel's permission groups (the
 * can_*_group columns of zerver_stream, as UserGroup IDs: anonymous groups become
 * zerver_usergroup rows without a named row, as Zulip stores them), alert words,
 * muted users and statuses. Drafts and scheduled messages are private text: they are
 * exported for the people who consent, in an export with consent only (scheduled
 * messages pending, failed and delivered, and reminders, as Zulip's export has them).
 */
import { CHANNEL_GROUP_SETTINGS, channelPermission } from "../actions/channels.js";
import { GROUP_SETTINGS, groupSetting } from "../actions/groups.js";
import type { StoreState } from "../state.js";
import { REALM_EXPORT_TYPE, type Channel, type GroupSettingValue, type UserGroup } from "../types.js";
import { RECIPIENT_ID } from "./zulip-ids.js";
import { realmSettingColumns } from "./zulip-realm-columns.js";

type Row = Record<string, unknown>;

/** Zulip's ScheduledMessage.SEND_LATER and REMIND. */
const SEND_LATER = 1;
const REMIND = 2;

export interface SettingsContext {
  readonly realmId: number;
  readonly type: number;
  readonly consented: ReadonlySet<number>;
  /** zerver_client ID of a client name. */
  readonly clientId: (name: string) => number;
  /** Recipient ID of a direct conversation of `userId` with `others` (a group's huddle row is added), or null. */
  readonly directRecipient: (userId: number, others: readonly number[]) => number | null;
  /** Named groups' IDs: anonymous ones get IDs above these. */
  readonly maxGroupId: number;
}

export interface SettingsTables {
  readonly tables: Record<string, Row[]>;
  /** Per channel, its group columns for zerver_stream. */
  readonly streamColumns: Map<number, Row>;
  /** Per named group, its permission columns for zerver_namedusergroup. */
  readonly groupColumns: Map<number, Row>;
  /** The realm's settings for zerver_realm. */
  readonly realmColumns: Row;
  /** Anonymous groups: zerver_usergroup rows and their memberships. */
  readonly anonymousGroups: Row[];
  readonly anonymousMembers: Row[];
  readonly anonymousSubgroups: Row[];
}

const byId = <T extends { id: number }>(a: T, b: T) => a.id - b.id;

export function settingsTables(state: StoreState, ctx: SettingsContext): SettingsTables {
  const realmId = ctx.realmId;
  const userIds = [...state.usersOfRealm(realmId)].sort((x, y) => x - y);
  const inRealm = <T extends { realmId: number; id: number }>(rows: Iterable<T>) =>
    [...rows].filter((r) => r.realmId === realmId).sort(byId);

  const fields = inRealm(state.profileFields.values());
  const fieldValues: Row[] = [];
  for (const userId of userIds) {
    const user = state.users.get(userId)!;
    for (const field of fields) {
      const value = user.profileData[String(field.id)];
      if (value === undefined) continue;
      // Zulip keeps a user field's IDs as JSON text in the value column.
      const text = typeof value === "string" ? value : JSON.stringify(value);
      fieldValues.push({ id: fieldValues.length + 1, user_profile: userId, field: field.id, value: text });
    }
  }

  const alertWords: Row[] = [];
  const muted: Row[] = [];
  const statuses: Row[] = [];
  for (const userId of userIds) {
    for (const word of state.alertWords.byUser.get(userId)?.words ?? [])
      alertWords.push({ id: alertWords.length + 1, user_profile: userId, realm: realmId, word });
    for (const m of state.mutedUsersOf.get(userId)?.muted ?? [])
      muted.push({ id: muted.length + 1, user_profile: userId, muted_user: m.id, date_muted: m.dateMuted });
    const status = state.userStatuses.get(userId);
    if (status)
      statuses.push({
        id: statuses.length + 1,
        user_profile: userId,
        timestamp: status.timestamp,
        client: ctx.clientId("internal"),
        status_text: status.statusText,
        emoji_name: status.emojiName,
        emoji_code: status.emojiCode,
        reaction_type: status.reactionType,
      });
  }

  // Group settings: a named group by its ID, an anonymous one as a zerver_usergroup row of its own.
  const anonymousGroups: Row[] = [];
  const anonymousMembers: Row[] = [];
  const anonymousSubgroups: Row[] = [];
  let nextGroupId = ctx.maxGroupId;
  const groupIdOf = (value: GroupSettingValue): number => {
    if (typeof value === "number") return value;
    const id = ++nextGroupId;
    anonymousGroups.push({ id, realm: realmId });
    for (const member of value.directMembers) anonymousMembers.push({ user_group: id, user_profile: member });
    for (const sub of value.directSubgroups) anonymousSubgroups.push({ supergroup: id, subgroup: sub });
    return id;
  };
  const streamColumns = new Map<number, Row>();
  for (const channel of inRealm<Channel>(state.channels.values())) {
    const columns: Row = {};
    for (const spec of CHANNEL_GROUP_SETTINGS)
      columns[spec.wire] = groupIdOf(channelPermission(state, channel, spec.field));
    streamColumns.set(channel.id, columns);
  }
  const realmColumns = realmSettingColumns(state, realmId, groupIdOf);
  const groupColumns = new Map<number, Row>();
  for (const group of inRealm<UserGroup>(state.groups.values())) {
    const columns: Row = {};
    for (const spec of GROUP_SETTINGS) columns[spec.wire] = groupIdOf(groupSetting(state, group, spec.field));
    groupColumns.set(group.id, columns);
  }

  const drafts: Row[] = [];
  const scheduled: Row[] = [];
  if (ctx.type === REALM_EXPORT_TYPE.FULL_WITH_CONSENT) {
    for (const userId of userIds) {
      if (!ctx.consented.has(userId)) continue;
      for (const d of [...(state.draftsByUser.get(userId)?.values() ?? [])].sort(byId)) {
        const recipient =
          d.type === "stream"
            ? RECIPIENT_ID.stream(d.to[0]!)
            : d.type === "private"
              ? ctx.directRecipient(userId, d.to)
              : null;
        if (d.type !== "" && recipient === null) continue;
        drafts.push({
          id: d.id,
          user_profile: userId,
          recipient,
          topic: d.topic,
          content: d.content,
          last_edit_time: d.lastEditTime,
        });
      }
    }
    for (const m of [...state.scheduledMessages.values()].sort(byId)) {
      if (m.realmId !== realmId || !ctx.consented.has(m.senderId)) continue;
      const recipient =
        m.recipient.type === "channel"
          ? RECIPIENT_ID.stream(m.recipient.channelId)
          : ctx.directRecipient(m.senderId, m.recipient.userIds);
      if (recipient === null) continue;
      scheduled.push({
        id: m.id,
        realm: realmId,
        sender: m.senderId,
        recipient,
        stream: m.recipient.type === "channel" ? m.recipient.channelId : null,
        subject: m.recipient.type === "channel" ? m.recipient.topic : "",
        content: m.content,
        rendered_content: m.renderedContent,
        sending_client: ctx.clientId(m.client),
        scheduled_timestamp: m.deliverAt,
        read_by_sender: m.readBySender,
        delivered: m.delivered,
        delivered_message: m.deliveredMessageId,
        has_attachment: false,
        failed: m.failed,
        failure_message: m.failureMessage,
        delivery_type: m.reminder === undefined ? SEND_LATER : REMIND,
        reminder_target_message_id: m.reminder?.messageId ?? null,
        reminder_note: m.reminder === undefined || m.reminder.note === "" ? null : m.reminder.note,
        // parley's own column: the realm URL a reminder's text links its message with.
        ...(m.reminder !== undefined ? { reminder_realm_url: m.reminder.realmUrl } : {}),
      });
    }
  }

  return {
    tables: {
      zerver_customprofilefield: fields.map((f) => ({
        id: f.id,
        realm: realmId,
        name: f.name,
        hint: f.hint,
        order: f.order,
        field_type: f.type,
        field_data: f.fieldData,
        display_in_profile_summary: f.displayInProfileSummary,
        required: f.required,
        editable_by_user: f.editableByUser,
        use_for_user_matching: f.useForUserMatching,
      })),
      zerver_customprofilefieldvalue: fieldValues,
      zerver_realmfilter: inRealm(state.linkifiers.values()).map((l) => ({
        id: l.id,
        realm: realmId,
        pattern: l.pattern,
        url_template: l.urlTemplate,
        order: l.order,
      })),
      zerver_realmdomain: inRealm(state.realmDomains.values()).map((d) => ({
        id: d.id,
        realm: realmId,
        domain: d.domain,
        allow_subdomains: d.allowSubdomains,
      })),
      zerver_realmemoji: inRealm(state.realmEmoji.values()).map((e) => ({
        id: e.id,
        realm: realmId,
        author: e.authorId,
        name: e.name,
        file_name: e.fileName,
        is_animated: e.isAnimated,
        deactivated: e.deactivated,
      })),
      zerver_channelfolder: inRealm(state.channelFolders.values()).map((f) => ({
        id: f.id,
        realm: realmId,
        name: f.name,
        description: f.description,
        rendered_description: f.renderedDescription,
        order: f.order,
        date_created: f.dateCreated,
        creator: f.creatorId,
        is_archived: f.isArchived,
      })),
      zerver_alertword: alertWords,
      zerver_muteduser: muted,
      zerver_userstatus: statuses,
      zerver_draft: drafts,
      zerver_scheduledmessage: scheduled,
    },
    streamColumns,
    realmColumns,
    groupColumns,
    anonymousGroups,
    anonymousMembers,
    anonymousSubgroups,
  };
}
