/**
 * @module realtime/wire
 * Engine events in Zulip's wire shapes (GET /events), per queue. One engine event
 * reaches queues that asked for different shapes (apply_markdown, client_gravatar,
 * empty_topic_name) and carries per-user parts (message flags, local_message_id):
 * each distinct payload is serialized once and shared by every queue that gets it.
 *
 * `recipient` is false for a queue that gets a message only through
 * all_public_streams (no row: flags read+historical).
 *
 * A queued event is kept as its JSON text without the closing brace, so a poll adds
 * `,"id":N}` without re-encoding.
 */
import type { EngineEvent, Realm, Store, User } from "../engine/index.js";
import {
  channelFolderToWire,
  channelToWire,
  defaultChannelGroupToWire,
  groupSettingToWire,
  subscriptionToWire,
} from "../wire/channel.js";
import { messageBody } from "../wire/message.js";
import { messagePolicyToWire } from "../wire/message-policy.js";
import { inaccessibleUserToWire, userToWire } from "../wire/user.js";
import { avatarSource, avatarUrl } from "../wire/avatar.js";
import { userTopicToWire } from "../wire/user-topic.js";
import { BOT_WIRE_FIELD, botFieldToWire, botToWire } from "../wire/bot.js";
import { groupToWire } from "../wire/group.js";
import { scheduledMessageToWire } from "../wire/scheduled-message.js";
import { reminderToWire } from "../wire/reminder.js";
import { deviceChangesToWire } from "../wire/device.js";
import { draftToWire, navigationViewToWire, savedSnippetToWire } from "../wire/personal.js";
import { attachmentToWire } from "../wire/attachment.js";
import { INACCESSIBLE_USER_NAME, languageName } from "../engine/index.js";
import type { EventQueue } from "./queue.js";
import { legacyClientPresence, presenceTimestamps } from "../wire/presence.js";
import { playgroundToWire } from "../wire/playground.js";
import { realmExportToWire } from "../wire/realm-export.js";
import { linkifierToWire, topicLinksToWire } from "../wire/linkifier.js";
import { profileFieldToWire } from "../wire/profile-field.js";
import { realmEmojiMapToWire, realmEmojiToWire } from "../wire/realm-emoji.js";

/** The JSON text of an event object, open at the end (see module comment). */
export function openJson(event: Record<string, unknown>): string {
  return JSON.stringify(event).slice(0, -1);
}

function brief(user: User): { user_id: number; email: string } {
  return { user_id: user.id, email: user.email };
}

const NONE: readonly string[] = [];

/** One engine event, rendered lazily per distinct variant for the queues it reaches. */
export class WireEvent {
  readonly #cache = new Map<string, readonly string[]>();

  constructor(
    readonly event: EngineEvent,
    readonly store: Store,
    readonly emailDomainOf: (realmId: number) => string = () => "localhost",
  ) {}

  /**
   * The queue's copies of the event (open JSON), in order: none when the queue must not
   * get it, several where Zulip splits one change for older clients (a deletion without
   * bulk_message_deletion is one event per message).
   */
  forQueue(queue: EventQueue, recipient = true): readonly string[] {
    const key = this.#variant(queue, recipient);
    let bodies = this.#cache.get(key);
    if (bodies === undefined) {
      const wire = this.#render(queue, recipient);
      bodies = wire === null ? NONE : Array.isArray(wire) ? wire.map(openJson) : [openJson(wire)];
      this.#cache.set(key, bodies);
    }
    return bodies;
  }

  /** Whether the message event's sender is hidden from the queue's (limited guest) owner. */
  #senderHidden(queue: EventQueue): boolean {
    if (this.event.type !== "message") return false;
    const sender = this.store.findUser(this.event.message.senderId);
    return sender !== undefined && !this.store.canAccessUser(queue.userId, sender);
  }

  /** What the rendering depends on, for this event type. */
  #variant(queue: EventQueue, recipient: boolean): string {
    const e = this.event;
    const o = queue.options;
    switch (e.type) {
      case "message": {
        const flags = recipient ? e.flagsFor(queue.userId).join(",") : "";
        const local = e.origin !== null && e.origin.queueId === queue.id ? e.origin.localId : "";
        const hidden = this.#senderHidden(queue) ? "h" : "";
        return `${o.applyMarkdown ? 1 : 0}${o.clientGravatar ? 1 : 0}${o.emptyTopicName ? 1 : 0}${hidden}|${flags}|${local}|${recipient ? 1 : 0}`;
      }
      case "update_message":
        return `${e.flagsFor(queue.userId).join(",")}|${o.emptyTopicName ? "e" : ""}`;
      case "realm_user":
        if (e.op === "add" && !this.store.canAccessUser(queue.userId, e.person))
          return o.userListIncomplete === true ? "hidden-skip" : "hidden";
        return o.clientGravatar ? "g" : "";
      case "subscription":
        return e.op === "add" ? String(queue.userId) : "";
      case "user_topic":
      case "update_message_flags":
        return o.emptyTopicName ? "e" : "";
      case "delete_message":
        return `${o.emptyTopicName ? "e" : ""}${o.bulkMessageDeletion === true ? "b" : ""}`;
      case "typing":
        return `${o.emptyTopicName ? "e" : ""}${o.streamTypingNotifications ? "s" : ""}`;
      case "typing_edit_message":
        return o.emptyTopicName ? "e" : "";
      case "user_group":
        return o.includeDeactivatedGroups ? "d" : "";
      case "scheduled_messages":
        return o.emptyTopicName ? "e" : "";
      case "presence":
        return o.presenceFormat;
      case "realm_emoji":
        return o.individualEmojiChanges === true ? "i" : "";
      case "realm_linkifiers":
        return o.linkifierUrlTemplate === true ? "l" : "";
      case "stream":
        return o.archivedChannels === true ? "a" : "";
      case "muted_topics":
        return `${o.emptyTopicName ? "e" : ""}${o.eventTypes?.includes("user_topic") === true ? "u" : ""}`;
      default:
        return "";
    }
  }

  #topic(queue: EventQueue, realm: Realm | undefined, topic: string): string {
    return topic === "" && !queue.options.emptyTopicName ? (realm?.emptyTopicDisplayName ?? topic) : topic;
  }

  #render(queue: EventQueue, recipient: boolean): Record<string, unknown> | Record<string, unknown>[] | null {
    const e = this.event;
    const store = this.store;
    const realm = store.findRealm(queue.realmId);
    switch (e.type) {
      case "message": {
        if (!realm) return null;
        const o = queue.options;
        const message = messageBody(store, realm, e.message, {
          applyMarkdown: o.applyMarkdown,
          clientGravatar: o.clientGravatar,
          allowEmptyTopicName: o.emptyTopicName,
          ...(this.#senderHidden(queue)
            ? { hiddenSenders: { has: () => true, emailDomain: this.emailDomainOf(realm.id) } }
            : {}),
        });
        // Queues that get the message only through all_public_streams have no row for it.
        const flags = recipient ? e.flagsFor(queue.userId) : ["read", "historical"];
        const out: Record<string, unknown> = { type: "message", message, flags };
        if (e.origin !== null && e.origin.queueId === queue.id) out["local_message_id"] = e.origin.localId;
        return out;
      }
      case "update_message": {
        const out: Record<string, unknown> = {
          type: "update_message",
          user_id: e.userId,
          edit_timestamp: e.editTimestamp,
          message_id: e.messageId,
          message_ids: [...e.messageIds],
          rendering_only: false,
          flags: [...e.flagsFor(queue.userId)],
        };
        if (e.channelId !== null) {
          out["stream_name"] = store.getChannel(e.channelId)?.name ?? "";
          out["stream_id"] = e.channelId;
        }
        if (e.move !== null) {
          out["propagate_mode"] = e.move.propagateMode;
          out["orig_subject"] = this.#topic(queue, realm, e.move.origTopic);
          if (e.move.newTopic !== undefined) {
            out["subject"] = this.#topic(queue, realm, e.move.newTopic);
            out["topic_links"] = topicLinksToWire(store.topicLinks(queue.realmId, e.move.newTopic));
          }
          if (e.move.newChannelId !== undefined) out["new_stream_id"] = e.move.newChannelId;
        }
        if (e.content !== null) {
          out["orig_content"] = e.content.origContent;
          out["orig_rendered_content"] = e.content.origRenderedContent;
          out["content"] = e.content.content;
          out["rendered_content"] = e.content.renderedContent;
          out["is_me_message"] = e.content.isMeMessage;
        }
        return out;
      }
      case "update_message_flags": {
        const out: Record<string, unknown> = {
          type: "update_message_flags",
          op: e.op,
          operation: e.op,
          flag: e.flag,
          messages: [...e.messages],
          all: false,
        };
        if (e.messageDetails !== null) {
          const details: Record<string, Record<string, unknown>> = {};
          for (const [id, d] of e.messageDetails) {
            details[String(id)] =
              d.recipient.type === "channel"
                ? {
                    type: "stream",
                    stream_id: d.recipient.channelId,
                    topic: this.#topic(queue, realm, d.topic),
                    ...(d.mentioned ? { mentioned: true } : {}),
                  }
                : {
                    type: "private",
                    user_ids: (d.userIds ?? []).filter((u) => u !== queue.userId),
                    ...(d.mentioned ? { mentioned: true } : {}),
                  };
          }
          out["message_details"] = details;
        }
        return out;
      }
      case "delete_message": {
        const where: Record<string, unknown> =
          e.channel === null
            ? { message_type: "private" }
            : {
                message_type: "stream",
                stream_id: e.channel.channelId,
                topic: this.#topic(queue, realm, e.channel.topic),
              };
        if (queue.options.bulkMessageDeletion === true)
          return { type: "delete_message", message_ids: [...e.messageIds], ...where };
        return e.messageIds.map((id) => ({ type: "delete_message", message_id: id, ...where }));
      }
      case "reaction":
        return {
          type: "reaction",
          op: e.op,
          message_id: e.messageId,
          user_id: e.reaction.userId,
          emoji_name: e.reaction.emojiName,
          emoji_code: e.reaction.emojiCode,
          reaction_type: e.reaction.reactionType,
        };
      case "submessage":
        return {
          type: "submessage",
          msg_type: e.submessage.msgType,
          message_id: e.messageId,
          submessage_id: e.submessage.id,
          sender_id: e.submessage.senderId,
          content: e.submessage.content,
        };
      case "subscription":
        switch (e.op) {
          case "add": {
            const viewer = store.findUser(queue.userId);
            if (!viewer) return null;
            return {
              type: "subscription",
              op: "add",
              subscriptions: e.subscriptions.map((s) =>
                subscriptionToWire(store, viewer, s.subscription, store.getChannel(s.channel.id) ?? s.channel, true),
              ),
            };
          }
          case "remove":
            return {
              type: "subscription",
              op: "remove",
              subscriptions: e.channels.map((c) => ({ stream_id: c.id, name: c.name })),
            };
          case "update":
            return { type: "subscription", op: "update", stream_id: e.channelId, property: e.property, value: e.value };
          default:
            return { type: "subscription", op: e.op, stream_ids: [...e.channelIds], user_ids: [...e.userIds] };
        }
      case "stream": {
        // Zulip (FL 378): archiving is an is_archived update for clients that declared
        // archived_channels, and a delete (unarchiving a create) for the others.
        const archivedChannels = queue.options.archivedChannels === true;
        if (e.op === "update") {
          if (e.property === "is_archived" && !archivedChannels) return null;
          const value = e.value;
          return {
            type: "stream",
            op: "update",
            stream_id: e.channel.id,
            name: e.channel.name,
            property: e.property,
            value: value !== null && typeof value === "object" ? groupSettingToWire(value) : value,
            ...(e.renderedDescription !== undefined ? { rendered_description: e.renderedDescription } : {}),
            ...(e.historyPublicToSubscribers !== undefined
              ? { history_public_to_subscribers: e.historyPublicToSubscribers }
              : {}),
            ...(e.isWebPublic !== undefined ? { is_web_public: e.isWebPublic } : {}),
          };
        }
        if ((e.op === "create" ? e.forUnarchiving : e.forArchiving) === true && archivedChannels) return null;
        if (e.op === "create") {
          // Each channel as it stands at delivery, a BasicChannel exactly (Zulip's schema
          // has no subscribers here: a revealed channel's subscribers follow as peer_add,
          // or in the subscription add of a user who joined it).
          return {
            type: "stream",
            op: "create",
            streams: e.channels.map((c) => channelToWire(store, store.getChannel(c.id) ?? c)),
          };
        }
        return {
          type: "stream",
          op: "delete",
          streams: e.channels.map((c) => ({ stream_id: c.id, name: c.name })),
          stream_ids: e.channels.map((c) => c.id),
        };
      }
      case "default_streams":
        return { type: "default_streams", default_streams: [...e.channelIds] };
      case "default_stream_groups":
        return {
          type: "default_stream_groups",
          default_stream_groups: e.groups.map((g) => defaultChannelGroupToWire(store, g)),
        };
      case "channel_folder":
        if (e.op === "add") return { type: "channel_folder", op: "add", channel_folder: channelFolderToWire(e.folder) };
        if (e.op === "reorder") return { type: "channel_folder", op: "reorder", order: [...e.order] };
        return {
          type: "channel_folder",
          op: "update",
          channel_folder_id: e.folder.id,
          data: {
            ...(e.fields.includes("name") ? { name: e.folder.name } : {}),
            ...(e.fields.includes("description")
              ? { description: e.folder.description, rendered_description: e.folder.renderedDescription }
              : {}),
            ...(e.fields.includes("isArchived") ? { is_archived: e.folder.isArchived } : {}),
          },
        };
      case "realm_bot": {
        if (e.op === "delete") return { type: "realm_bot", op: "delete", bot: { user_id: e.botId } };
        if (e.op === "add") return { type: "realm_bot", op: "add", bot: botToWire(store, e.bot) };
        const bot: Record<string, unknown> = { user_id: e.bot.id };
        for (const field of e.fields) bot[BOT_WIRE_FIELD[field]] = botFieldToWire(store, e.bot, BOT_WIRE_FIELD[field]);
        return { type: "realm_bot", op: "update", bot };
      }
      case "realm_user": {
        // Zulip's notify_created_user: a limited guest who may not see the new user gets a
        // placeholder, or nothing when the client keeps an incomplete user list.
        if (e.op === "add" && !store.canAccessUser(queue.userId, e.person)) {
          if (queue.options.userListIncomplete === true) return null;
          return {
            type: "realm_user",
            op: "add",
            person: inaccessibleUserToWire(e.person.id, this.emailDomainOf(e.person.realmId)),
          };
        }
        if (e.op === "remove")
          return { type: "realm_user", op: "remove", person: { user_id: e.userId, full_name: INACCESSIBLE_USER_NAME } };
        if (e.op === "add")
          return {
            type: "realm_user",
            op: "add",
            person: userToWire(e.person, {
              clientGravatar: queue.options.clientGravatar,
              includeCustomProfileFields: true,
            }),
          };
        const c = e.changes;
        const person: Record<string, unknown> = { user_id: e.userId };
        if ("fullName" in c) person["full_name"] = c.fullName;
        else if ("role" in c) person["role"] = c.role;
        else if ("isActive" in c) person["is_active"] = c.isActive;
        else if ("timezone" in c) person["timezone"] = c.timezone;
        else if ("deliveryEmail" in c) person["delivery_email"] = c.deliveryEmail;
        else if ("newEmail" in c) person["new_email"] = c.newEmail;
        else if ("botOwnerId" in c) person["bot_owner_id"] = c.botOwnerId;
        else if ("avatarOf" in c) {
          // Zulip's notify_avatar_url_change: an uploaded avatar ("U") or a Gravatar ("G");
          // parley keeps one size, so avatar_url_medium is the same URL. Null for Gravatars
          // on client_gravatar queues, as in realm_user add events (the client computes them).
          const url = avatarUrl(c.avatarOf, queue.options.clientGravatar);
          Object.assign(person, {
            avatar_source: avatarSource(c.avatarOf),
            avatar_url: url,
            avatar_url_medium: url,
            avatar_version: c.avatarOf.avatarVersion,
          });
        } else {
          const { id, value, renderedValue } = c.customProfileField;
          // Zulip leaves rendered_value out when it is empty or there is none.
          person["custom_profile_field"] = renderedValue ? { id, value, rendered_value: renderedValue } : { id, value };
        }
        return { type: "realm_user", op: "update", person };
      }
      case "realm":
        if (e.op === "update_announcements_channel") {
          const value = e.realm.newChannelAnnouncementsChannelId ?? -1;
          return { type: "realm", op: "update", property: "new_stream_announcements_stream_id", value };
        }
        if (e.op === "update_message_policy") {
          const data = messagePolicyToWire(store.realmMessagePolicy(e.realm.id), e.settings);
          return { type: "realm", op: "update_dict", property: "default", data };
        }
        if (e.op === "update_property") {
          const value = store.realmPropertyValue(e.realm, e.property);
          return { type: "realm", op: "update", property: e.property, value };
        }
        if (e.op === "update_group_setting") {
          const data = { [e.setting]: groupSettingToWire(store.realmGroupSetting(e.realm.id, e.setting)) };
          return { type: "realm", op: "update_dict", property: "default", data };
        }
        return { type: "realm", op: "deactivated", realm_id: e.realm.id };
      case "invites_changed":
        return { type: "invites_changed" };
      case "user_group":
        switch (e.op) {
          case "add": {
            // A reactivated group reaches only clients that dropped it (Zulip's include_deactivated_groups).
            if (e.forReactivation && queue.options.includeDeactivatedGroups) return null;
            const out: Record<string, unknown> = {
              type: "user_group",
              op: "add",
              group: groupToWire(store, e.group, e.group.members),
            };
            if (e.forReactivation) out["for_reactivation"] = true;
            return out;
          }
          case "remove":
            return queue.options.includeDeactivatedGroups
              ? null
              : { type: "user_group", op: "remove", group_id: e.groupId };
          case "update": {
            const data: Record<string, unknown> = {};
            if (e.data.name !== undefined) data["name"] = e.data.name;
            if (e.data.description !== undefined) data["description"] = e.data.description;
            if (e.data.deactivated !== undefined) data["deactivated"] = e.data.deactivated;
            if (e.data.canManageGroup !== undefined)
              data["can_manage_group"] = groupSettingToWire(e.data.canManageGroup);
            if (e.data.canMentionGroup !== undefined)
              data["can_mention_group"] = groupSettingToWire(e.data.canMentionGroup);
            if (e.data.canAddMembersGroup !== undefined)
              data["can_add_members_group"] = groupSettingToWire(e.data.canAddMembersGroup);
            if (e.data.canJoinGroup !== undefined) data["can_join_group"] = groupSettingToWire(e.data.canJoinGroup);
            if (e.data.canLeaveGroup !== undefined) data["can_leave_group"] = groupSettingToWire(e.data.canLeaveGroup);
            if (e.data.canRemoveMembersGroup !== undefined)
              data["can_remove_members_group"] = groupSettingToWire(e.data.canRemoveMembersGroup);
            // (Re)activation reaches the other clients as a remove (add) event.
            if (
              e.data.deactivated !== undefined &&
              !queue.options.includeDeactivatedGroups &&
              Object.keys(data).length === 1
            )
              return null;
            return { type: "user_group", op: "update", group_id: e.groupId, data };
          }
          case "add_members":
          case "remove_members":
            return { type: "user_group", op: e.op, group_id: e.groupId, user_ids: [...e.userIds] };
          default:
            return { type: "user_group", op: e.op, group_id: e.groupId, direct_subgroup_ids: [...e.subgroupIds] };
        }
      case "user_topic":
        return {
          type: "user_topic",
          ...userTopicToWire({ ...e.userTopic, topic: this.#topic(queue, realm, e.userTopic.topic) }),
        };
      case "scheduled_messages":
        if (e.op === "remove")
          return { type: "scheduled_messages", op: "remove", scheduled_message_id: e.scheduledMessageId };
        if (e.op === "add")
          return {
            type: "scheduled_messages",
            op: "add",
            scheduled_messages: [scheduledMessageToWire(e.scheduled, realm, queue.options.emptyTopicName)],
          };
        return {
          type: "scheduled_messages",
          op: "update",
          scheduled_message: scheduledMessageToWire(e.scheduled, realm, queue.options.emptyTopicName),
        };
      case "muted_topics": {
        // Zulip's accepts_event: a client that asked for user_topic does not get the old list.
        if (queue.options.eventTypes?.includes("user_topic") === true) return null;
        const muted: [string, string, number][] = [];
        for (const t of store.userTopics(e.userId)) {
          const channel = store.getChannel(t.channelId);
          if (t.policy === 1 && channel) muted.push([channel.name, this.#topic(queue, realm, t.topic), t.lastUpdated]);
        }
        return { type: "muted_topics", muted_topics: muted };
      }
      case "presence": {
        const timestamps = presenceTimestamps(e.user, e.presence);
        if (queue.options.presenceFormat === "modern")
          return { type: "presence", presences: { [String(e.user.id)]: timestamps } };
        const out: Record<string, unknown> = { type: "presence", user_id: e.user.id };
        if (queue.options.presenceFormat === "legacy") out["email"] = e.user.email;
        out["server_timestamp"] = e.serverTimestamp;
        out["presence"] = { website: legacyClientPresence(timestamps) };
        return out;
      }
      case "realm_emoji": {
        if (queue.options.individualEmojiChanges !== true)
          return { type: "realm_emoji", op: "update", realm_emoji: realmEmojiMapToWire(e.all) };
        if (e.op === "add") return { type: "realm_emoji", op: "add", emoji: realmEmojiToWire(e.emoji) };
        return {
          type: "realm_emoji",
          op: "update_one",
          emoji_id: String(e.emoji.id),
          data: { deactivated: e.emoji.deactivated },
        };
      }
      case "custom_profile_fields":
        return { type: "custom_profile_fields", fields: e.fields.map(profileFieldToWire) };
      case "realm_domains":
        if (e.op === "remove") return { type: "realm_domains", op: "remove", domain: e.domain };
        return {
          type: "realm_domains",
          op: e.op,
          realm_domain: { domain: e.domain, allow_subdomains: e.allowSubdomains },
        };
      case "realm_playgrounds":
        return { type: "realm_playgrounds", realm_playgrounds: e.playgrounds.map(playgroundToWire) };
      case "realm_export":
        return { type: "realm_export", exports: e.exports.map(realmExportToWire) };
      case "realm_linkifiers":
        // Zulip sends linkifiers (URL templates since feature level 176) only to clients that say they read them.
        if (queue.options.linkifierUrlTemplate !== true) return null;
        return { type: "realm_linkifiers", realm_linkifiers: e.linkifiers.map(linkifierToWire) };
      case "user_settings": {
        const out: Record<string, unknown> = {
          type: "user_settings",
          op: "update",
          property: e.property,
          value: e.value,
        };
        if (e.property === "default_language") out["language_name"] = languageName(String(e.value));
        return out;
      }
      case "realm_user_settings_defaults":
        return { type: "realm_user_settings_defaults", op: "update", property: e.property, value: e.value };
      case "drafts":
        if (e.op === "add") return { type: "drafts", op: "add", drafts: e.drafts.map(draftToWire) };
        if (e.op === "update") return { type: "drafts", op: "update", draft: draftToWire(e.draft) };
        return { type: "drafts", op: "remove", draft_id: e.draftId };
      case "attachment":
        // A removed file is named by its ID alone, as Zulip sends it.
        return {
          type: "attachment",
          op: e.op,
          attachment: e.op === "remove" ? { id: e.attachment.id } : attachmentToWire(e.attachment),
          upload_space_used: e.uploadSpaceUsed,
        };
      case "saved_snippets":
        if (e.op === "remove") return { type: "saved_snippets", op: "remove", saved_snippet_id: e.snippetId };
        return { type: "saved_snippets", op: e.op, saved_snippet: savedSnippetToWire(e.snippet) };
      case "user_status":
        return {
          type: "user_status",
          user_id: e.userId,
          ...(e.away === undefined ? {} : { away: e.away }),
          ...(e.statusText === undefined ? {} : { status_text: e.statusText }),
          ...(e.emoji === undefined
            ? {}
            : { emoji_name: e.emoji.name, emoji_code: e.emoji.code, reaction_type: e.emoji.reactionType }),
        };
      case "alert_words":
        return { type: "alert_words", alert_words: e.words };
      case "reminders":
        return e.op === "add"
          ? { type: "reminders", op: "add", reminders: [reminderToWire(e.reminder)] }
          : { type: "reminders", op: "remove", reminder_id: e.reminderId };
      case "muted_users":
        return { type: "muted_users", muted_users: e.muted.map((m) => ({ id: m.id, timestamp: m.dateMuted })) };
      case "navigation_view":
        if (e.op === "add")
          return { type: "navigation_view", op: "add", navigation_view: navigationViewToWire(e.view) };
        if (e.op === "remove") return { type: "navigation_view", op: "remove", fragment: e.fragment };
        return {
          type: "navigation_view",
          op: "update",
          fragment: e.fragment,
          data: {
            ...(e.name === undefined ? {} : { name: e.name }),
            ...(e.isPinned === undefined ? {} : { is_pinned: e.isPinned }),
          },
        };
      case "device":
        if (e.op === "update")
          return { type: "device", op: "update", device_id: e.deviceId, ...deviceChangesToWire(e.changes) };
        return { type: "device", op: e.op, device_id: e.deviceId };
      case "typing": {
        if (e.recipients !== null) {
          return {
            type: "typing",
            op: e.op,
            message_type: "direct",
            sender: brief(e.sender),
            recipients: e.recipients.map(brief),
          };
        }
        if (!queue.options.streamTypingNotifications) return null;
        return {
          type: "typing",
          op: e.op,
          message_type: "stream",
          sender: brief(e.sender),
          stream_id: e.channelId,
          topic: this.#topic(queue, realm, e.topic ?? ""),
        };
      }
      case "typing_edit_message": {
        const r = e.recipient;
        return {
          type: "typing_edit_message",
          op: e.op,
          sender_id: e.senderId,
          message_id: e.messageId,
          recipient:
            r.type === "channel"
              ? { type: "channel", channel_id: r.channelId, topic: this.#topic(queue, realm, r.topic) }
              : { type: "direct", user_ids: r.userIds },
        };
      }
    }
  }
}
