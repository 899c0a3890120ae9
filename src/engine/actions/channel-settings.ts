/**
 * @module actions/channel-settings
 * Administering a channel (Zulip's update_stream_backend and deactivate_stream_backend):
 * name, description, access (private, web-public, history), default channel, message
 * retention, topics policy, every group setting, archiving and unarchiving. Who may do
 * what is decided here, in Zulip's order; one request is one write, all or nothing
 * (Zulip commits each kind of change separately).
 *
 * Every change tells whoever may see the channel with a `stream update` event, and
 * the Notification Bot posts Zulip's notice to the channel's "channel events" topic.
 * Changes that grant or take away the channel's metadata (privacy, and the three group
 * settings that grant it) send `stream create` (with the subscribers as peer_add) to
 * those who gain it and `stream delete` to those who lose it. Deviation: Zulip sends no
 * delete when a public channel becomes private, leaving it in the clients of
 * non-subscribers who can no longer see it; parley tells them.
 */
import {
  canAccessChannelContent,
  canAdministerChannel,
  canManageDefaultChannels,
  canSeeChannel,
  isAdmin,
  isSubscribed,
} from "../access.js";
import {
  BadRequestError,
  CannotAdministerChannelError,
  ChannelExistsError,
  OrganizationOwnerRequiredError,
  PermissionDeniedError,
} from "../errors.js";
import { withoutArchivedChannelInTxn } from "./default-channel-groups.js";
import { withoutArchivedChannelSettingsInTxn } from "./realm-settings.js";
import { botManagersAudience, channelViewersAudience, realmAudience, usersAudience } from "../events/audience.js";
import type { EngineEvent, StreamPropertyValue } from "../events/types.js";
import { key } from "../index/keys.js";
import type { StoreState, WriteContext } from "../state.js";
import type { Channel, ChannelTopicsPolicy, GroupSettingChange, GroupSettingValue, Realm, User } from "../types.js";
import { ROLE } from "../types.js";
import {
  accessChannelById,
  CHANNEL_GROUP_SETTINGS,
  channelPermission,
  checkChannelGroupSetting,
  checkChannelName,
  checkTopicCreationForProtectedHistory,
  DELETE_POLICY_SETTINGS,
  findChannelByName,
  MAX_CHANNEL_DESCRIPTION_LENGTH,
  normalizeGroupSetting,
  renderChannelDescription,
  requireChannelFolder,
  sameGroupSetting,
  SETTINGS_GRANTING_METADATA_ACCESS,
  SETTINGS_REQUIRING_CONTENT_ACCESS,
  streamPostPolicy,
  type ChannelGroupField,
} from "./channels.js";
import { requireActiveUser } from "./lookups.js";
import {
  canCreateChannel,
  canCreateWebPublicChannel,
  canSetChannelDeletePolicy,
  canSetTopicsPolicy,
} from "./channel-permissions.js";
import {
  CHANNEL_EVENTS_TOPIC,
  ensureNotificationBotInTxn,
  sendsChannelEventsMessages,
  silentMention,
} from "./notification-bot.js";
import { systemGroupId } from "./realms.js";
import { realmPropertyValue } from "./realm-settings.js";
import { internalChannelMessage, renderMessage, storeMessage } from "./send-message.js";

/** A group setting change as PATCH takes it: the new value and, to guard against races, the expected old one. */

export interface UpdateChannelInput {
  readonly name?: string;
  readonly description?: string;
  readonly isPrivate?: boolean;
  readonly isWebPublic?: boolean;
  readonly historyPublicToSubscribers?: boolean;
  readonly isDefault?: boolean;
  /** Days; -1 unlimited; null the organization's default. */
  readonly messageRetentionDays?: number | null;
  /** Only false does anything: unarchiving (archiving is archiveChannel). */
  readonly isArchived?: boolean;
  readonly topicsPolicy?: ChannelTopicsPolicy;
  /** A channel folder of the realm; null takes the channel out of its folder. */
  readonly folderId?: number | null;
  readonly permissions?: Partial<Record<ChannelGroupField, GroupSettingChange>>;
}

const INVALID_CHANNEL = "Invalid channel ID";

/**
 * Zulip's access_stream_for_delete_or_update_requiring_metadata_access: administrators
 * and channel administrators may change the channel; a user who may read it but not
 * administer it is told so; anyone else gets "Invalid channel ID", as for a channel
 * that does not exist. Archived channels are included (they can be unarchived).
 */
export function channelToAdminister(state: StoreState, actor: User, channelId: number): Channel {
  const channel = state.channels.get(channelId);
  if (!channel || channel.realmId !== actor.realmId) throw new BadRequestError(INVALID_CHANNEL);
  if (isAdmin(actor)) return channel;
  if (canSeeChannel(state, actor, channel) && canAdministerChannel(state, actor, channel)) return channel;
  if (canAccessChannelContent(state, actor, channel)) throw new CannotAdministerChannelError();
  throw new BadRequestError(INVALID_CHANNEL);
}

/** Zulip's policy names, for the access-permissions notice. */
function policyName(channel: Pick<Channel, "inviteOnly" | "historyPublicToSubscribers" | "isWebPublic">): string {
  if (channel.isWebPublic) return "Web-public";
  if (!channel.inviteOnly) return "Public";
  return channel.historyPublicToSubscribers ? "Private, shared history" : "Private, protected history";
}

/** Zulip's names of the topics policies in notices (the empty topic is "general chat" there). */
const TOPICS_POLICY_NAMES: Readonly<Record<ChannelTopicsPolicy, string>> = {
  inherit: "Automatic",
  allow_empty_topic: "*general chat* topic allowed",
  disable_empty_topic: "No *general chat* topic",
  empty_topic_only: "Only *general chat* topic allowed",
};

function retentionPeriod(days: number): string {
  return days === -1 ? "Forever" : `${days} days`;
}

function hasNamedTopics(state: StoreState, channelId: number): boolean {
  return state.bitmaps.get(key.channel(channelId)).size > state.bitmaps.get(key.channelTopic(channelId, "")).size;
}

/** Emits a `stream update` about the channel (named as `named`) to whoever must hear of it. */
type UpdateEmitter = (
  named: Channel,
  property: string,
  value: StreamPropertyValue,
  extra?: Pick<
    Extract<EngineEvent, { type: "stream"; op: "update" }>,
    "renderedDescription" | "historyPublicToSubscribers" | "isWebPublic"
  >,
) => void;

/** One change of a write, in Zulip's order: what it emits and the notice it posts. */
interface Step {
  readonly events: (final: Channel, update: UpdateEmitter, ctx: WriteContext) => void;
  readonly notice?: string;
}

/**
 * PATCH /streams/{stream_id}: checks everything first, in Zulip's order, then applies
 * the changes in one write. A value equal to the current one changes nothing.
 */
export function updateChannel(state: StoreState, actorId: number, channelId: number, input: UpdateChannelInput): void {
  const actor = requireActiveUser(state, actorId);
  const channel = channelToAdminister(state, actor, channelId);
  const realmId = channel.realmId;
  const realm = state.realms.get(realmId)!;
  const contentAccess = canAccessChannelContent(state, actor, channel);
  const mention = silentMention(actor);
  let next: Channel = { ...channel };
  const steps: Step[] = [];

  // Access: private, web-public and history, as Zulip proposes them before checking.
  const proposedPrivate = input.isPrivate ?? channel.inviteOnly;
  const proposedWebPublic = input.isWebPublic ?? channel.isWebPublic;
  const proposedDefault = input.isDefault ?? channel.isDefault;
  const proposedHistory =
    input.historyPublicToSubscribers ??
    (input.isPrivate !== undefined ? !input.isPrivate : channel.historyPublicToSubscribers);
  if (proposedWebPublic && !proposedHistory) throw new BadRequestError("Invalid parameters");
  if (proposedWebPublic && proposedPrivate) throw new BadRequestError("Invalid parameters");
  if (!proposedPrivate && !proposedHistory) throw new BadRequestError("Invalid parameters");
  if (proposedPrivate && proposedDefault) throw new BadRequestError("A default channel cannot be private.");
  if (input.isPrivate !== undefined && !contentAccess) throw new BadRequestError("Channel content access is required.");
  if (input.isPrivate !== undefined && !canCreateChannel(state, actor, input.isPrivate))
    throw new PermissionDeniedError("Insufficient permission");
  if (input.isWebPublic === true) {
    if (!realm.enableSpectatorAccess) throw new BadRequestError("Web-public channels are not enabled.");
    if (!canCreateWebPublicChannel(state, actor)) throw new PermissionDeniedError("Insufficient permission");
  }
  if (
    policyName(channel) !==
    policyName({
      inviteOnly: proposedPrivate,
      isWebPublic: proposedWebPublic,
      historyPublicToSubscribers: proposedHistory,
    })
  ) {
    if (input.permissions?.canCreateTopicGroup === undefined)
      checkTopicCreationForProtectedHistory(
        state,
        realmId,
        proposedHistory,
        channelPermission(state, channel, "canCreateTopicGroup"),
      );
    const before = policyName(channel);
    next = {
      ...next,
      inviteOnly: proposedPrivate,
      isWebPublic: proposedWebPublic,
      historyPublicToSubscribers: proposedHistory,
    };
    steps.push({
      events: (final, update) =>
        update(final, "invite_only", final.inviteOnly, {
          historyPublicToSubscribers: final.historyPublicToSubscribers,
          isWebPublic: final.isWebPublic,
        }),
      notice:
        `${mention} changed the [access permissions](/help/channel-permissions) for this channel ` +
        `from **${before}** to **${policyName(next)}**.`,
    });
  }

  if (input.isDefault !== undefined) {
    if (!canManageDefaultChannels(actor))
      throw new PermissionDeniedError("You do not have permission to change default channels.");
    if (input.isDefault !== channel.isDefault) {
      next = { ...next, isDefault: input.isDefault };
      steps.push({ events: (final, _update, ctx) => emitDefaultChannels(state, ctx, final) });
    }
  }

  if (input.messageRetentionDays !== undefined) {
    if (actor.role !== ROLE.OWNER) throw new OrganizationOwnerRequiredError();
    const days = input.messageRetentionDays;
    if (days !== channel.messageRetentionDays) {
      // Zulip names the realm's policy where the channel follows it (null).
      const realmDays = realmPropertyValue(state, realm, "message_retention_days");
      const realmPolicy = typeof realmDays === "number" ? realmDays : -1;
      const oldDays = channel.messageRetentionDays ?? realmPolicy;
      const newDays = days ?? realmPolicy;
      next = { ...next, messageRetentionDays: days };
      const summary =
        newDays === -1
          ? "Messages in this channel will now be retained forever."
          : `Messages in this channel will now be automatically deleted ${newDays} days after they are sent.`;
      steps.push({
        events: (final, update) => update(final, "message_retention_days", final.messageRetentionDays),
        notice:
          `${mention} has changed the [message retention period](/help/message-retention-policy) for this channel:\n` +
          `* **Old retention period**: ${retentionPeriod(oldDays)}\n` +
          `* **New retention period**: ${retentionPeriod(newDays)}\n\n${summary}`,
      });
    }
  }

  if (input.isArchived === false) {
    if (!channel.isArchived) throw new BadRequestError("Channel is not currently deactivated");
    if (channel.inviteOnly && (state.subscribers.get(channel.id)?.size ?? 0) === 0)
      throw new BadRequestError("Channel is private and have no subscribers");
    // Zulip repairs records that are both private and web-public while unarchiving.
    next = { ...next, isArchived: false, isWebPublic: next.inviteOnly ? false : next.isWebPublic };
    steps.push({
      events: (final, update, ctx) => {
        update(final, "is_archived", false);
        ctx.emit({ type: "stream", op: "create", channels: [final], forUnarchiving: true }, () =>
          channelViewersAudience(state, final),
        );
      },
      notice: `Channel ${next.name} un-archived.`,
    });
  }

  if (input.topicsPolicy !== undefined) {
    if (!isAdmin(actor) && !canSetTopicsPolicy(state, actor))
      throw new PermissionDeniedError("Insufficient permission");
    if (input.topicsPolicy === "empty_topic_only" && hasNamedTopics(state, channel.id))
      throw new BadRequestError(
        'To enable this configuration, all messages in this channel must be in the "general chat" topic. ' +
          "Consider renaming or deleting other topics.",
      );
    if (input.topicsPolicy !== channel.topicsPolicy) {
      const before = TOPICS_POLICY_NAMES[channel.topicsPolicy];
      next = { ...next, topicsPolicy: input.topicsPolicy };
      steps.push({
        events: (final, update) => update(final, "topics_policy", final.topicsPolicy),
        notice:
          `${mention} changed the "Allow posting to the *general chat* topic?" setting from ` +
          `**${before}** to **${TOPICS_POLICY_NAMES[input.topicsPolicy]}**.`,
      });
    }
  }

  if (input.description !== undefined) {
    // Zulip does not allow newlines in channel descriptions: they become spaces.
    const description = input.description.replace(/\r?\n/g, " ");
    if ([...description].length > MAX_CHANNEL_DESCRIPTION_LENGTH)
      throw new BadRequestError(`description is too long (limit: ${MAX_CHANNEL_DESCRIPTION_LENGTH} characters)`);
    if (description !== channel.description) {
      const shown = (text: string) => (text === "" ? "*No description.*" : text);
      next = { ...next, description, renderedDescription: renderChannelDescription(state, actor, description) };
      steps.push({
        events: (final, update) =>
          update(final, "description", final.description, { renderedDescription: final.renderedDescription }),
        notice:
          `${mention} changed the description for this channel.\n\n` +
          `* **Old description:**\n\`\`\`\` quote\n${shown(channel.description)}\n\`\`\`\`\n` +
          `* **New description:**\n\`\`\`\` quote\n${shown(description)}\n\`\`\`\``,
      });
    }
  }

  if (input.name !== undefined) {
    const name = input.name.trim();
    if (name === channel.name) throw new BadRequestError("Channel already has that name.");
    if (name.toLowerCase() !== channel.name.toLowerCase()) {
      checkChannelName(name);
      if (findChannelByName(state, realmId, name) !== undefined) throw new ChannelExistsError(name);
    }
    const oldName = channel.name;
    next = { ...next, name };
    steps.push({
      events: (final, update, ctx) => {
        // Zulip's rename event names the channel by its old name.
        update({ ...final, name: oldName }, "name", final.name);
        // Bots name their default channels by name: those who see bots hear the new one.
        for (const bot of botsDefaultingTo(state, final)) {
          const fields = (["defaultSendingChannelId", "defaultEventsRegisterChannelId"] as const).filter(
            (field) => bot.botConfig?.[field] === final.id,
          );
          ctx.emit({ type: "realm_bot", op: "update", bot, fields }, () => botManagersAudience(state, bot));
        }
      },
      notice: `${mention} renamed channel **${oldName}** to **${name}**.`,
    });
  }

  if (input.folderId !== undefined) {
    if (input.folderId !== null) requireChannelFolder(state, realmId, input.folderId);
    if (input.folderId !== (channel.folderId ?? null)) {
      next = { ...next, folderId: input.folderId };
      steps.push({ events: (final, update) => update(final, "folder_id", final.folderId ?? null) });
    }
  }

  const groupChanges = checkGroupSettingChanges(state, actor, channel, contentAccess, input.permissions ?? {});
  for (const [field, value] of groupChanges) next = { ...next, [field]: value };
  if (groupChanges.has("canCreateTopicGroup"))
    checkTopicCreationForProtectedHistory(state, realmId, next.historyPublicToSubscribers, next.canCreateTopicGroup!);
  for (const [field, value] of groupChanges) {
    const wire = CHANNEL_GROUP_SETTINGS.find((spec) => spec.field === field)!.wire;
    const old = channelPermission(state, channel, field);
    const posting = field === "canSendMessageGroup";
    steps.push({
      events: (final, update) => {
        update(final, wire, value);
        if (!posting) return;
        const before = streamPostPolicy(state, channel);
        const after = streamPostPolicy(state, final);
        if (before === after) return;
        update(final, "stream_post_policy", after);
        update(final, "is_announcement_only", after === 2);
      },
      ...(posting
        ? {
            notice:
              `${mention} changed the [posting permissions](/help/channel-posting-policy) for this channel:\n\n` +
              `* **Old**: ${describeSetting(state, old)}\n* **New**: ${describeSetting(state, value)}\n`,
          }
        : {}),
    });
  }

  if (steps.length === 0) return;
  const accessMayChange =
    next.inviteOnly !== channel.inviteOnly ||
    next.isWebPublic !== channel.isWebPublic ||
    [...groupChanges.keys()].some((field) => SETTINGS_GRANTING_METADATA_ACCESS.has(field));
  writeChannel(state, realm, channel, next, steps, { accessMayChange, noticeReadBy: [] });
}

/**
 * DELETE /streams/{stream_id}: archives the channel (Zulip's do_deactivate_stream). It
 * stops being a default channel, a member of default channel groups and the
 * organization's new-channel announcements channel; subscriptions and messages stay;
 * the Notification Bot says so, read by all.
 */
export function archiveChannel(
  state: StoreState,
  actorId: number,
  channelId: number,
  options: { readonly notice?: boolean } = {},
): void {
  const actor = requireActiveUser(state, actorId);
  const channel = channelToAdminister(state, actor, channelId);
  if (channel.isArchived) throw new BadRequestError("Channel is already deactivated");
  const realm = state.realms.get(channel.realmId)!;
  const final: Channel = { ...channel, isArchived: true, isDefault: false };
  const steps: Step[] = [];
  if (channel.isDefault) steps.push({ events: (after, _update, ctx) => emitDefaultChannels(state, ctx, after) });
  steps.push({
    events: (after, update, ctx) => {
      let nextRealm = realm;
      if (realm.newChannelAnnouncementsChannelId === channel.id) {
        nextRealm = { ...realm, newChannelAnnouncementsChannelId: null };
        ctx.emit({ type: "realm", op: "update_announcements_channel", realm: nextRealm }, () =>
          realmAudience(state, realm.id),
        );
      }
      nextRealm = withoutArchivedChannelInTxn(state, ctx, nextRealm, channel.id);
      nextRealm = withoutArchivedChannelSettingsInTxn(state, ctx, nextRealm, channel.id);
      if (nextRealm !== realm) {
        const stored = nextRealm;
        state.tables.realms.putSync(realm.id, stored);
        ctx.afterCommit(() => state.indexRealm(stored));
      }
      update(after, "is_archived", true);
      ctx.emit({ type: "stream", op: "delete", channels: [after], forArchiving: true }, () =>
        channelViewersAudience(state, after),
      );
    },
    // An import replays the archiving whose notice is already among the imported messages.
    ...(options.notice === false ? {} : { notice: `Channel ${channel.name} has been archived.` }),
  });
  // Zulip posts the notice read for everyone (limit_unread_user_ids empty).
  writeChannel(state, realm, channel, final, steps, {
    accessMayChange: false,
    noticeReadBy: [...(state.subscribers.get(channel.id) ?? [])],
  });
}

/**
 * The write of a channel change: the record, each step's events and notice in order,
 * then `stream create` (with the subscribers) to those who may now see the channel and
 * `stream delete` to those who no longer may. Updates go to those who saw it before
 * and still do: the others get the whole channel or lose it.
 */
function writeChannel(
  state: StoreState,
  realm: Realm,
  before: Channel,
  final: Channel,
  steps: readonly Step[],
  options: { readonly accessMayChange: boolean; readonly noticeReadBy: readonly number[] },
): void {
  const viewersBefore = viewersOf(state, before);
  state.write((ctx) => {
    state.tables.channels.putSync(final.id, final);
    ctx.afterCommit(() => state.indexChannel(final));
    // Some changes (the default flag) have no stream event to name the record.
    ctx.changed({ kind: "channel", id: final.id });
    const stayers = () =>
      realmAudience(state, final.realmId, (u) => viewersBefore.has(u.id) && canSeeChannel(state, u, final));
    const update: UpdateEmitter = (named, property, value, extra = {}) =>
      ctx.emit({ type: "stream", op: "update", channel: named, property, value, ...extra }, stayers);
    if (options.accessMayChange) emitAccessChanges(state, ctx, final, viewersBefore);
    const notices: string[] = [];
    for (const step of steps) {
      step.events(final, update, ctx);
      if (step.notice !== undefined) notices.push(step.notice);
    }
    if (notices.length === 0 || !sendsChannelEventsMessages(realm)) return;
    const bot = ensureNotificationBotInTxn(state, ctx, realm);
    let current = final;
    for (const content of notices) {
      const input = internalChannelMessage(state, bot, current, CHANNEL_EVENTS_TOPIC, content, []);
      const readBy = options.noticeReadBy.filter((id) => isSubscribed(state, id, current.id));
      const withReaders = { ...input, readBy };
      const { id } = storeMessage(state, ctx, withReaders, renderMessage(state, withReaders));
      // storeMessage records a channel's first message on the record it was given.
      if (current.firstMessageId === null) current = { ...current, firstMessageId: id };
    }
  });
}

/** Active bots of the channel's realm whose default sending or events channel it is. */
function botsDefaultingTo(state: StoreState, channel: Channel): User[] {
  const out: User[] = [];
  for (const id of state.usersOfRealm(channel.realmId)) {
    const user = state.users.get(id);
    const config = user?.botConfig;
    if (user?.isActive && config)
      if (config.defaultSendingChannelId === channel.id || config.defaultEventsRegisterChannelId === channel.id)
        out.push(user);
  }
  return out;
}

/** Who may see the channel now (its metadata): a snapshot, taken before a change. */
function viewersOf(state: StoreState, channel: Channel): Set<number> {
  const out = new Set<number>();
  for (const id of state.usersOfRealm(channel.realmId)) {
    const user = state.users.get(id);
    if (user?.isActive && canSeeChannel(state, user, channel)) out.add(id);
  }
  return out;
}

/**
 * Users who start seeing the channel get it whole (`stream create`) and its
 * subscribers (`peer_add`); users who stop seeing it get `stream delete`.
 */
function emitAccessChanges(state: StoreState, ctx: WriteContext, final: Channel, viewersBefore: ReadonlySet<number>) {
  const gainers = () =>
    realmAudience(state, final.realmId, (u) => !viewersBefore.has(u.id) && canSeeChannel(state, u, final));
  ctx.emit({ type: "stream", op: "create", channels: [final] }, gainers);
  const subscribers = [...(state.subscribers.get(final.id) ?? [])].filter((id) => state.users.get(id)?.isActive);
  if (subscribers.length > 0)
    ctx.emit(
      { type: "subscription", op: "peer_add", channelIds: [final.id], userIds: subscribers.sort((a, b) => a - b) },
      gainers,
    );
  ctx.emit({ type: "stream", op: "delete", channels: [final] }, () =>
    usersAudience(
      [...viewersBefore].filter((id) => {
        const user = state.users.get(id);
        return user !== undefined && user.isActive && !canSeeChannel(state, user, final);
      }),
    ),
  );
}

/** The realm's default channels, to non-guests (Zulip's notify_default_streams). */
function emitDefaultChannels(state: StoreState, ctx: WriteContext, changed: Channel): void {
  const ids = new Set<number>();
  for (const c of state.channels.values())
    if (c.realmId === changed.realmId && c.id !== changed.id && c.isDefault && !c.isArchived) ids.add(c.id);
  if (changed.isDefault && !changed.isArchived) ids.add(changed.id);
  ctx.emit({ type: "default_streams", realmId: changed.realmId, channelIds: [...ids].sort((a, b) => a - b) }, () =>
    realmAudience(state, changed.realmId, (u) => u.role !== ROLE.GUEST),
  );
}

/**
 * The group settings a PATCH changes, checked in Zulip's way: `old`, when given, must
 * be the current value; a value equal to the current one is no change; settings that
 * give content access need the caller to have it; can_delete_* need the realm's
 * can_set_delete_message_policy_group unless set to nobody.
 */
function checkGroupSettingChanges(
  state: StoreState,
  actor: User,
  channel: Channel,
  contentAccess: boolean,
  changes: Partial<Record<ChannelGroupField, GroupSettingChange>>,
): Map<ChannelGroupField, GroupSettingValue> {
  const out = new Map<ChannelGroupField, GroupSettingValue>();
  const realmId = channel.realmId;
  for (const spec of CHANNEL_GROUP_SETTINGS) {
    const change = changes[spec.field];
    if (change === undefined) continue;
    const current = channelPermission(state, channel, spec.field);
    const wanted = normalizeGroupSetting(state, realmId, change.new);
    if (change.old !== undefined && !sameGroupSetting(normalizeGroupSetting(state, realmId, change.old), current))
      throw new BadRequestError("'old' value does not match the expected value.");
    if (sameGroupSetting(wanted, current)) continue;
    if (SETTINGS_REQUIRING_CONTENT_ACCESS.has(spec.field) && !contentAccess)
      throw new BadRequestError("Channel content access is required.");
    const value = checkChannelGroupSetting(state, realmId, spec.field, wanted);
    if (
      DELETE_POLICY_SETTINGS.has(spec.field) &&
      value !== systemGroupId(state, realmId, "role:nobody") &&
      !canSetChannelDeletePolicy(state, actor)
    )
      throw new PermissionDeniedError("Insufficient permission");
    out.set(spec.field, value);
  }
  return out;
}

/** Zulip's get_users_string_with_permission: silent mentions of the groups, then the users, by ID. */
function describeSetting(state: StoreState, value: GroupSettingValue): string {
  const groupMention = (id: number) => `@_*${state.groups.get(id)?.name ?? id}*`;
  if (typeof value === "number") return groupMention(value);
  const groups = [...value.directSubgroups].sort((a, b) => a - b).map(groupMention);
  const users = [...value.directMembers]
    .sort((a, b) => a - b)
    .map((id) => state.users.get(id))
    .filter((u): u is User => u !== undefined)
    .map(silentMention);
  return [...groups, ...users].join(", ");
}

/**
 * POST and DELETE /default_streams (Zulip's add_default_stream, remove_default_stream):
 * administrators only; adding needs the channel's content and refuses private ones,
 * removing needs its metadata; archived channels are "Invalid channel ID". Setting
 * the current state again still tells clients the list (Zulip does too).
 */
export function setDefaultChannel(state: StoreState, actorId: number, channelId: number, isDefault: boolean): void {
  const actor = requireActiveUser(state, actorId);
  if (!canManageDefaultChannels(actor))
    throw new PermissionDeniedError("You do not have permission to change default channels.");
  const channel = accessChannelById(state, actor, channelId, { content: isDefault });
  if (isDefault && channel.inviteOnly) throw new BadRequestError("Private channels cannot be made default.");
  const next: Channel = { ...channel, isDefault };
  state.write((ctx) => {
    if (next.isDefault !== channel.isDefault) {
      state.tables.channels.putSync(next.id, next);
      ctx.afterCommit(() => state.indexChannel(next));
      ctx.changed({ kind: "channel", id: next.id, fields: ["isDefault"] });
    }
    emitDefaultChannels(state, ctx, next);
  });
}
