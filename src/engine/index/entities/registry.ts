/**
 * @module index/entities/registry
 * The entity registry: one in-memory index per entity table of storage/tables.ts.
 * StoreState loads every table through it at open, and after a failed batch clears
 * every index and loads it again; its type is keyed by the entity table names, so an
 * entity table without an index (or with an index of another record type) does not
 * compile.
 */
import type {
  Attachment,
  Channel,
  Device,
  Draft,
  EmailChange,
  Invite,
  Linkifier,
  OutboxMail,
  Playground,
  ChannelFolder,
  RealmDomain,
  ProfileField,
  PresenceRecord,
  Realm,
  RealmEmoji,
  SavedSnippet,
  ScheduledMessage,
  Subscription,
  User,
  UserGroup,
  UserStatusRecord,
  MutedUsersRecord,
  AlertWordsRecord,
  NavigationViewsRecord,
} from "../../types.js";
import type { RealmSettingDefaultsRecord, UserSettingsRecord } from "../../settings/defaults.js";
import type { EntityTableName } from "../../storage/tables.js";
import { AlertWordsIndex } from "./alert-words.js";
import { AttachmentIndex } from "./attachments.js";
import { ChannelIndex, SubscriptionIndex } from "./channels.js";
import { DeviceIndex } from "./devices.js";
import { KeyedIndex, OwnedIndex, type EntityIndex } from "./entity-index.js";
import { GroupIndex } from "./groups.js";
import { InviteIndex } from "./invites.js";
import { MutedUsersIndex } from "./muted-users.js";
import { PresenceIndex } from "./presence.js";
import { RealmIndex } from "./realms.js";
import { UserIndex } from "./users.js";

/** The record type each entity table holds (what its index takes). */
export interface EntityRecords {
  realms: Realm;
  users: User;
  channels: Channel;
  subscriptions: Subscription;
  groups: UserGroup;
  userSettings: UserSettingsRecord;
  realmSettingDefaults: RealmSettingDefaultsRecord;
  scheduledMessages: ScheduledMessage;
  presence: PresenceRecord;
  playgrounds: Playground;
  linkifiers: Linkifier;
  channelFolders: ChannelFolder;
  realmDomains: RealmDomain;
  profileFields: ProfileField;
  drafts: Draft;
  savedSnippets: SavedSnippet;
  devices: Device;
  realmEmoji: RealmEmoji;
  invites: Invite;
  emailChanges: EmailChange;
  outbox: OutboxMail;
  attachments: Attachment;
  userStatus: UserStatusRecord;
  mutedUsers: MutedUsersRecord;
  alertWords: AlertWordsRecord;
  navigationViews: NavigationViewsRecord;
}

export type EntityIndexes = { readonly [T in EntityTableName]: EntityIndex<EntityRecords[T]> };

/** What derived caches (kept by StoreState) must hear of: the changes that make them stale. */
export interface EntityHooks {
  userChanged(user: User, previous: User | undefined): void;
  subscriptionChanged(sub: Subscription): void;
  groupChanged(): void;
}

export function createEntityIndexes(hooks: EntityHooks) {
  const subscriptions = new SubscriptionIndex((sub) => hooks.subscriptionChanged(sub));
  return {
    realms: new RealmIndex(),
    users: new UserIndex((user, previous) => hooks.userChanged(user, previous)),
    channels: new ChannelIndex(subscriptions),
    subscriptions,
    groups: new GroupIndex(() => hooks.groupChanged()),
    /** Only users who differ from Zulip's defaults. */
    userSettings: new KeyedIndex((record: UserSettingsRecord) => record.userId),
    /** Only realms that set any. */
    realmSettingDefaults: new KeyedIndex((record: RealmSettingDefaultsRecord) => record.realmId),
    /** Pending, failed or delivered. */
    scheduledMessages: new KeyedIndex((record: ScheduledMessage) => record.id),
    presence: new PresenceIndex(),
    playgrounds: new KeyedIndex((record: Playground) => record.id),
    linkifiers: new KeyedIndex((record: Linkifier) => record.id),
    /** Archived ones too. */
    channelFolders: new KeyedIndex((record: ChannelFolder) => record.id),
    realmDomains: new KeyedIndex((record: RealmDomain) => record.id),
    profileFields: new KeyedIndex((record: ProfileField) => record.id),
    drafts: new OwnedIndex((record: Draft) => record.userId),
    savedSnippets: new OwnedIndex((record: SavedSnippet) => record.userId),
    devices: new DeviceIndex(),
    /** Deactivated ones too. */
    realmEmoji: new KeyedIndex((record: RealmEmoji) => record.id),
    invites: new InviteIndex(),
    /** By confirmation key. */
    emailChanges: new KeyedIndex((record: EmailChange) => record.key),
    /** Mail not yet delivered (pending or failed). */
    outbox: new KeyedIndex((record: OutboxMail) => record.id),
    attachments: new AttachmentIndex(),
    /** Users who ever set a status (cleared ones too: Zulip keeps the row). */
    userStatus: new KeyedIndex((record: UserStatusRecord) => record.userId),
    mutedUsers: new MutedUsersIndex(),
    alertWords: new AlertWordsIndex(),
    navigationViews: new KeyedIndex((record: NavigationViewsRecord) => record.userId),
  } satisfies EntityIndexes;
}

export type EntityRegistry = ReturnType<typeof createEntityIndexes>;
