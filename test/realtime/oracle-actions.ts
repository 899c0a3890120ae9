/**
 * @module test/realtime/oracle-actions
 * The events oracle's world: a realm with every kind of user and channel, random
 * actions over it (fast-check arbitraries), and how each action is performed —
 * through HTTP where parley has the endpoint, through Store methods otherwise.
 * Actions name users and channels symbolically so a printed sequence reads plainly.
 */
import fc from "fast-check";
import { ROLE, type Role, type User } from "../../src/engine/index.js";
import { internals } from "../../src/engine/internal.js";
import type { TestServer } from "../support/http.js";

/** Users who register a queue and whose state is checked. */
export const OBSERVERS = ["owner", "admin", "alice", "bob", "guest", "bot"] as const;
/** Everyone the actions may name (carol and dave are never observers: they get deactivated). */
export const USERS = [...OBSERVERS, "carol", "dave"] as const;
export type UserName = (typeof USERS)[number];
/** Actors for actions a user performs on their own behalf. */
const ACTORS: readonly UserName[] = ["owner", "admin", "alice", "bob", "guest", "bot", "carol"];

/**
 * general: public; secret: private, protected history; shared: private, shared history; lobby: public with the guest;
 * new*: created by actions.
 */
export const CHANNELS = ["general", "secret", "shared", "lobby", "new-a", "new-b"] as const;
export type ChannelName = (typeof CHANNELS)[number];
const TOPICS = ["lunch", "plans", ""] as const;
const GROUPS = ["team", "crew"] as const;

export type Action =
  | {
      kind: "send_channel";
      sender: UserName;
      channel: ChannelName;
      topic: string;
      mention: Mention;
      readBySender: boolean;
    }
  | { kind: "send_dm"; sender: UserName; to: UserName[]; mention: Mention; readBySender: boolean }
  | { kind: "flags"; user: UserName; flag: "read" | "starred"; op: "add" | "remove"; picks: number[] }
  | { kind: "mark_topic_read"; user: UserName; channel: ChannelName; topic: string }
  | {
      kind: "subscribe";
      actor: UserName;
      channel: ChannelName;
      principals: UserName[] | null;
      inviteOnly: boolean;
      sharedHistory: boolean;
      isDefault: boolean;
    }
  | { kind: "unsubscribe"; actor: UserName; channel: ChannelName; principals: UserName[] | null }
  | { kind: "update_user"; target: UserName; change: { role: Role } | { fullName: string } | { newEmail: string } }
  | { kind: "reaction"; user: UserName; pick: number; op: "add" | "remove" }
  | { kind: "set_active"; target: "carol" | "dave"; active: boolean }
  | { kind: "create_group"; actor: UserName; name: (typeof GROUPS)[number]; members: UserName[] }
  | { kind: "group_members"; actor: UserName; name: (typeof GROUPS)[number]; add: UserName[]; remove: UserName[] }
  | { kind: "group_subgroups"; actor: UserName; name: (typeof GROUPS)[number]; add: boolean }
  | { kind: "topic_policy"; user: UserName; channel: ChannelName; topic: string; policy: 0 | 1 | 2 | 3 }
  | { kind: "mute_channel"; user: UserName; channel: ChannelName; muted: boolean }
  | { kind: "create_user"; n: number; role: Role; bot: boolean }
  | { kind: "settings"; user: UserName; change: SettingsChange }
  | {
      kind: "bulk_settings";
      actor: UserName;
      targets: UserName[];
      colorScheme: 1 | 2 | 3;
      skipIfAlreadyEdited: boolean;
    }
  | { kind: "realm_defaults"; actor: UserName; colorScheme: 1 | 2 | 3 }
  | { kind: "draft"; user: UserName; op: "create" | "edit" | "delete"; channel: ChannelName; pick: number }
  | { kind: "snippet"; user: UserName; op: "create" | "edit" | "delete"; pick: number }
  /** Own status (target null, with away) or an administrator's change of another's; never deactivated users. */
  | {
      kind: "user_status";
      actor: UserName;
      target: UserName | null;
      text: "" | "busy" | null;
      emoji: "" | "car" | "zulip" | null;
      away: boolean | null;
    }
  | { kind: "mute_user"; user: UserName; target: UserName; mute: boolean }
  | { kind: "alert_words"; user: UserName; op: "add" | "remove"; words: string[] }
  | { kind: "sub_property"; user: UserName; channel: ChannelName; property: SubProperty; pick: number }
  | { kind: "playground"; actor: UserName; op: "add" | "remove"; pick: number }
  | { kind: "realm_domain"; actor: UserName; op: "add" | "change" | "remove"; pick: number }
  | { kind: "linkifier"; actor: UserName; op: "add" | "update" | "remove" | "reorder"; pick: number }
  | { kind: "profile_field"; actor: UserName; op: "create" | "options" | "delete" | "set" | "clear"; pick: number }
  | { kind: "presence"; user: UserName; status: "active" | "idle" }
  | { kind: "device"; user: UserName; op: "add" | "remove" | "register" | "rotate_key"; pick: number }
  | { kind: "custom_emoji"; actor: UserName; op: "add" | "remove"; pick: number }
  | { kind: "api_create_user"; n: number }
  | { kind: "create_bot"; actor: UserName; botType: 1 | 2 | 3; channel: ChannelName | null; allPublic: boolean }
  | { kind: "update_bot"; actor: UserName; pick: number; change: BotChange }
  | { kind: "bot_active"; actor: UserName; pick: number; active: boolean }
  | { kind: "channel_settings"; actor: UserName; channel: ChannelName; change: ChannelChange }
  | { kind: "archive_channel"; actor: UserName; channel: ChannelName; archive: boolean }
  | { kind: "create_channel"; actor: UserName; name: "new-a" | "new-b"; subscribers: UserName[]; inviteOnly: boolean }
  | { kind: "default_channel"; actor: UserName; channel: ChannelName; add: boolean }
  | { kind: "patch_subscriptions"; user: UserName; add: ChannelName[]; remove: ChannelName[] }
  | { kind: "mark_read"; user: UserName; channel: ChannelName | null }
  | {
      kind: "channel_folder";
      actor: UserName;
      op: "create" | "rename" | "archive" | "unarchive" | "reorder" | "file";
      pick: number;
      channel: ChannelName;
    }
  | {
      kind: "edit";
      actor: UserName;
      bySender: boolean;
      pick: number;
      mention: Mention;
      topic: MoveTopic | null;
      mode: PropagateMode;
    }
  | {
      kind: "move";
      actor: UserName;
      pick: number;
      topic: MoveTopic | null;
      channel: ChannelName | null;
      mode: PropagateMode;
      notifyOld: boolean;
      notifyNew: boolean;
    }
  | { kind: "resolve"; actor: UserName; pick: number; mode: PropagateMode }
  | { kind: "delete"; actor: UserName; bySender: boolean; pick: number }
  | { kind: "delete_topic"; actor: UserName; channel: ChannelName; topic: MoveTopic };

/** One PATCH /streams/{id} change (a rename only flips the name's case: actions name channels by name). */
export type ChannelChange =
  | { readonly description: string }
  | { readonly access: "public" | "private_shared" | "private_protected" }
  | { readonly renameCase: true }
  | { readonly topicsPolicy: "inherit" | "allow_empty_topic" | "disable_empty_topic" }
  | { readonly isDefault: boolean }
  | { readonly retention: number | "unlimited" }
  | {
      readonly group: "can_administer_channel_group" | "can_subscribe_group" | "can_send_message_group";
      readonly to: "members" | "nobody" | "administrators" | UserName;
    };

/** One PATCH /bots change: a default channel ("" for none), all-public, a name, or a new owner. */
export type BotChange =
  | { readonly channel: ChannelName | "" }
  | { readonly allPublic: boolean }
  | { readonly fullName: string }
  | { readonly owner: UserName };
/** Owners a bot may be given: never carol or dave, whose deactivation would take an observer bot with them. */
const BOT_OWNERS: readonly UserName[] = ["owner", "admin", "alice", "bob", "guest"];

const MOVE_TOPICS = ["lunch", "plans", "", "Lunch", "dinner"] as const;
type MoveTopic = (typeof MOVE_TOPICS)[number];
const PROPAGATE_MODES = ["change_one", "change_later", "change_all"] as const;
type PropagateMode = (typeof PROPAGATE_MODES)[number];

const SUB_PROPERTIES = [
  "color",
  "pin_to_top",
  "desktop_notifications",
  "audible_notifications",
  "push_notifications",
  "email_notifications",
  "wildcard_mentions_notify",
  "in_home_view",
  "is_muted",
] as const;
type SubProperty = (typeof SUB_PROPERTIES)[number];

export type SettingsChange =
  | { readonly twentyFourHourTime: boolean }
  | { readonly colorScheme: 1 | 2 | 3 }
  | { readonly timezone: "" | "Europe/Berlin" | "America/New_York" }
  | { readonly fullName: string }
  | { readonly draftsSync: boolean };

export type Mention =
  | { kind: "none" }
  | { kind: "user"; who: UserName }
  | { kind: "silent"; who: UserName }
  | { kind: "all" }
  | { kind: "topic" }
  | { kind: "group"; name: (typeof GROUPS)[number] };

const user = fc.constantFrom(...USERS);
const actor = fc.constantFrom(...ACTORS);
const observer = fc.constantFrom(...OBSERVERS);
const channel = fc.constantFrom(...CHANNELS);
const topic = fc.constantFrom(...TOPICS);
const group = fc.constantFrom(...GROUPS);
const someUsers = fc.uniqueArray(user, { minLength: 1, maxLength: 3 });
const mention: fc.Arbitrary<Mention> = fc.oneof(
  { weight: 3, arbitrary: fc.constant({ kind: "none" } as const) },
  { weight: 2, arbitrary: user.map((who) => ({ kind: "user", who }) as const) },
  { weight: 1, arbitrary: user.map((who) => ({ kind: "silent", who }) as const) },
  { weight: 2, arbitrary: fc.constant({ kind: "all" } as const) },
  { weight: 2, arbitrary: fc.constant({ kind: "topic" } as const) },
  { weight: 1, arbitrary: group.map((name) => ({ kind: "group", name }) as const) },
);
const channelChange: fc.Arbitrary<ChannelChange> = fc.oneof(
  fc.constantFrom("About lunch", "", "**Plans**").map((description) => ({ description })),
  fc.constantFrom("public" as const, "private_shared" as const, "private_protected" as const).map((access) => ({
    access,
  })),
  fc.constant({ renameCase: true } as const),
  fc
    .constantFrom("inherit" as const, "allow_empty_topic" as const, "disable_empty_topic" as const)
    .map((topicsPolicy) => ({ topicsPolicy })),
  fc.boolean().map((isDefault) => ({ isDefault })),
  fc.constantFrom(30, "unlimited" as const).map((retention) => ({ retention })),
  fc.record({
    group: fc.constantFrom(
      "can_administer_channel_group" as const,
      "can_subscribe_group" as const,
      "can_send_message_group" as const,
    ),
    to: fc.oneof(
      fc.constantFrom("members" as const, "nobody" as const, "administrators" as const),
      fc.constantFrom(...USERS),
    ),
  }),
);
const roles = fc.constantFrom<Role>(ROLE.OWNER, ROLE.ADMINISTRATOR, ROLE.MODERATOR, ROLE.MEMBER, ROLE.GUEST);

const moveTopic = fc.constantFrom(...MOVE_TOPICS);
const propagateMode = fc.constantFrom(...PROPAGATE_MODES);

/** Edits, moves, resolves and deletions of messages sent earlier in the sequence. */
const mutationArbs: fc.WeightedArbitrary<Action>[] = [
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant("edit" as const),
      actor,
      bySender: fc.oneof({ weight: 4, arbitrary: fc.constant(true) }, { weight: 1, arbitrary: fc.constant(false) }),
      pick: fc.nat(),
      mention,
      topic: fc.option(moveTopic, { freq: 4, nil: null }),
      mode: propagateMode,
    }),
  },
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant("move" as const),
      actor,
      pick: fc.nat(),
      topic: fc.option(moveTopic, { freq: 3, nil: null }),
      channel: fc.option(channel, { freq: 2, nil: null }),
      mode: propagateMode,
      notifyOld: fc.boolean(),
      notifyNew: fc.boolean(),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({ kind: fc.constant("resolve" as const), actor, pick: fc.nat(), mode: propagateMode }),
  },
  {
    weight: 2,
    arbitrary: fc.record({ kind: fc.constant("delete" as const), actor, bySender: fc.boolean(), pick: fc.nat() }),
  },
  {
    weight: 1,
    arbitrary: fc.record({ kind: fc.constant("delete_topic" as const), actor, channel, topic: moveTopic }),
  },
];

export const actionArb: fc.Arbitrary<Action> = fc.oneof(
  {
    weight: 8,
    arbitrary: fc.record({
      kind: fc.constant("send_channel" as const),
      sender: actor,
      channel,
      topic,
      mention,
      readBySender: fc.boolean(),
    }),
  },
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant("send_dm" as const),
      sender: actor,
      to: someUsers,
      mention,
      readBySender: fc.boolean(),
    }),
  },
  {
    weight: 10,
    arbitrary: fc.record({
      kind: fc.constant("flags" as const),
      user: observer,
      flag: fc.constantFrom("read" as const, "starred" as const),
      op: fc.constantFrom("add" as const, "remove" as const, "remove" as const),
      picks: fc.array(fc.nat(), { minLength: 1, maxLength: 4 }),
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({ kind: fc.constant("mark_topic_read" as const), user: observer, channel, topic }),
  },
  {
    weight: 5,
    arbitrary: fc.record({
      kind: fc.constant("subscribe" as const),
      actor,
      channel,
      principals: fc.option(someUsers, { nil: null }),
      inviteOnly: fc.boolean(),
      sharedHistory: fc.boolean(),
      isDefault: fc.boolean(),
    }),
  },
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant("unsubscribe" as const),
      actor,
      channel,
      principals: fc.option(someUsers, { nil: null }),
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant("update_user" as const),
      target: user,
      change: fc.oneof(
        roles.map((role) => ({ role })),
        fc.constantFrom("Renamed One", "Renamed Two").map((fullName) => ({ fullName })),
        fc.constantFrom("moved-a@test.dev", "moved-b@test.dev").map((newEmail) => ({ newEmail })),
      ),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant("reaction" as const),
      user: actor,
      pick: fc.nat(),
      op: fc.constantFrom("add" as const, "remove" as const),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant("set_active" as const),
      target: fc.constantFrom("carol" as const, "dave" as const),
      active: fc.boolean(),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("create_group" as const),
      actor,
      name: group,
      members: fc.uniqueArray(user, { maxLength: 3 }),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant("group_members" as const),
      actor,
      name: group,
      add: fc.uniqueArray(user, { maxLength: 2 }),
      remove: fc.uniqueArray(user, { maxLength: 2 }),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({ kind: fc.constant("group_subgroups" as const), actor, name: group, add: fc.boolean() }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant("topic_policy" as const),
      user: observer,
      channel,
      topic,
      policy: fc.constantFrom(0 as const, 1 as const, 2 as const, 3 as const),
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({ kind: fc.constant("mute_channel" as const), user: observer, channel, muted: fc.boolean() }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("create_user" as const),
      n: fc.nat({ max: 1000 }),
      role: fc.constantFrom<Role>(ROLE.MEMBER, ROLE.GUEST),
      bot: fc.boolean(),
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant("settings" as const),
      user: actor,
      change: fc.oneof(
        fc.boolean().map((twentyFourHourTime) => ({ twentyFourHourTime })),
        fc.constantFrom(1 as const, 2 as const, 3 as const).map((colorScheme) => ({ colorScheme })),
        fc
          .constantFrom("" as const, "Europe/Berlin" as const, "America/New_York" as const)
          .map((timezone) => ({ timezone })),
        fc.constantFrom("Renamed Three", "Renamed Four").map((fullName) => ({ fullName })),
        fc.boolean().map((draftsSync) => ({ draftsSync })),
      ),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("bulk_settings" as const),
      actor,
      targets: someUsers,
      colorScheme: fc.constantFrom(1 as const, 2 as const, 3 as const),
      skipIfAlreadyEdited: fc.boolean(),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("realm_defaults" as const),
      actor,
      colorScheme: fc.constantFrom(1 as const, 2 as const, 3 as const),
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant("draft" as const),
      user: actor,
      op: fc.constantFrom("create" as const, "create" as const, "edit" as const, "delete" as const),
      channel,
      pick: fc.nat(),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant("user_status" as const),
      actor: observer,
      target: fc.option(observer, { nil: null }),
      text: fc.constantFrom("" as const, "busy" as const, null),
      emoji: fc.constantFrom("" as const, "car" as const, "zulip" as const, null),
      away: fc.option(fc.boolean(), { nil: null }),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({ kind: fc.constant("mute_user" as const), user: actor, target: user, mute: fc.boolean() }),
  },
  {
    // Words the oracle's messages hold ("hello", "hi", "hey"), one they never do, and one
    // past Zulip's 100 characters (refused, changing nothing).
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant("alert_words" as const),
      user: actor,
      op: fc.constantFrom("add" as const, "remove" as const),
      words: fc.uniqueArray(fc.constantFrom("hello", "HEY", "hi there", "zebra", "x".repeat(101)), {
        minLength: 1,
        maxLength: 3,
      }),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant("snippet" as const),
      user: actor,
      op: fc.constantFrom("create" as const, "edit" as const, "delete" as const),
      pick: fc.nat(),
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant("sub_property" as const),
      user: observer,
      channel,
      property: fc.constantFrom(...SUB_PROPERTIES),
      pick: fc.nat(),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("playground" as const),
      actor,
      op: fc.constantFrom("add" as const, "add" as const, "remove" as const),
      pick: fc.nat(),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant("profile_field" as const),
      // Administrators define fields; anyone sets values.
      actor: fc.constantFrom<UserName>("owner", "owner", "admin", "alice", "bob", "guest"),
      op: fc.constantFrom(...(["create", "create", "options", "delete", "set", "set", "set", "clear"] as const)),
      pick: fc.nat(),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("realm_domain" as const),
      // Owners change domains: mostly the owner, so that the changes happen.
      actor: fc.constantFrom<UserName>("owner", "owner", "owner", "admin", "bob"),
      op: fc.constantFrom("add" as const, "change" as const, "remove" as const),
      pick: fc.nat(),
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant("linkifier" as const),
      // Mostly administrators, so that most of these change something.
      actor: fc.oneof(
        { weight: 3, arbitrary: fc.constantFrom<UserName>("owner", "admin") },
        { weight: 1, arbitrary: actor },
      ),
      op: fc.constantFrom("add" as const, "add" as const, "update" as const, "remove" as const, "reorder" as const),
      pick: fc.nat(),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant("presence" as const),
      user: actor,
      status: fc.constantFrom("active" as const, "idle" as const),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant("device" as const),
      user: actor,
      op: fc.constantFrom(
        "add" as const,
        "add" as const,
        "remove" as const,
        "register" as const,
        "rotate_key" as const,
      ),
      pick: fc.nat(),
    }),
  },
  {
    weight: 4,
    arbitrary: fc.record({ kind: fc.constant("channel_settings" as const), actor, channel, change: channelChange }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant("create_channel" as const),
      actor,
      name: fc.constantFrom("new-a" as const, "new-b" as const),
      subscribers: fc.uniqueArray(user, { maxLength: 3 }),
      inviteOnly: fc.boolean(),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({ kind: fc.constant("default_channel" as const), actor, channel, add: fc.boolean() }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant("patch_subscriptions" as const),
      user: observer,
      add: fc.uniqueArray(channel, { maxLength: 2 }),
      remove: fc.uniqueArray(channel, { maxLength: 2 }),
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant("channel_folder" as const),
      actor,
      op: fc.constantFrom(
        "create" as const,
        "create" as const,
        "rename" as const,
        "archive" as const,
        "unarchive" as const,
        "reorder" as const,
        "file" as const,
        "file" as const,
      ),
      pick: fc.nat(),
      channel,
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant("mark_read" as const),
      user: observer,
      channel: fc.option(channel, { nil: null }),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant("archive_channel" as const),
      actor,
      channel,
      archive: fc.boolean(),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("custom_emoji" as const),
      actor,
      op: fc.constantFrom("add" as const, "add" as const, "remove" as const),
      pick: fc.nat(),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("api_create_user" as const), n: fc.nat({ max: 1000 }) }) },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant("create_bot" as const),
      actor,
      botType: fc.constantFrom(1 as const, 2 as const, 3 as const),
      channel: fc.option(channel, { nil: null }),
      allPublic: fc.boolean(),
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant("update_bot" as const),
      actor,
      pick: fc.nat(),
      change: fc.oneof(
        fc.constantFrom<ChannelName | "">("", ...CHANNELS).map((c) => ({ channel: c })),
        fc.boolean().map((allPublic) => ({ allPublic })),
        fc.constantFrom("Bot Renamed", "Bot Again").map((fullName) => ({ fullName })),
        fc.constantFrom(...BOT_OWNERS).map((owner) => ({ owner })),
      ),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant("bot_active" as const),
      // Mostly those who may (administrators); sometimes anyone, to be refused.
      actor: fc.oneof(
        { weight: 3, arbitrary: fc.constantFrom<UserName>("owner", "admin") },
        { weight: 1, arbitrary: actor },
      ),
      pick: fc.nat(),
      active: fc.boolean(),
    }),
  },
  ...mutationArbs,
);

/** A valid 2×2 PNG, for custom emoji uploads. */
const EMOJI_PNG = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAYAAABytg0kAAAACXBIWXMAAAPoAAAD6AG1e1JrAAAAEUlEQVQImWNgZGL+D8IMMAYAHtAEFYRc9U8AAAAASUVORK5CYII=",
  "base64",
);

/** The realm the actions run in, with handles by symbolic name. */
export class World {
  readonly users = new Map<UserName, User>();
  readonly sent: number[] = [];
  /** Who sent each message of `sent` (edits and deletions by the sender are the permitted ones). */
  readonly senders = new Map<number, UserName>();
  readonly groupIds = new Map<string, number>();
  readonly outcomes: string[] = [];
  /** Draft and snippet IDs each user created (some may be gone: editing those is a refused action). */
  readonly drafts = new Map<UserName, number[]>();
  readonly snippets = new Map<UserName, number[]>();
  /** Playgrounds added so far (removed ones stay: removing one again is refused). */
  readonly playgrounds: number[] = [];
  /** Client devices each user registered (removed ones stay: removing one again is refused). */
  readonly devices = new Map<UserName, number[]>();
  /** Bots created by actions (the observer bot is never deactivated: its queue would go). */
  readonly bots: number[] = [];
  #created = 0;

  /** `limitedGuests`: the realm's can_access_all_users_group is role:members (Zulip's limited guests). */
  constructor(
    readonly server: TestServer,
    options: { readonly limitedGuests?: boolean } = {},
  ) {
    const { store } = server.t;
    const seed = server.seed;
    const realmId = seed.realm.id;
    if (options.limitedGuests === true) {
      const members = store.systemGroupId(realmId, "role:members");
      store.updateRealm(seed.owner.id, { groups: { can_access_all_users_group: { new: members } } });
    }
    // The owner may change emails (update_user newEmail) and create users (POST /users), as an operator can allow.
    store.setCanChangeUserEmails(seed.owner.id, true);
    this.users.set("owner", store.setCanCreateUsers(seed.owner.id, true));
    this.users.set("alice", seed.alice);
    this.users.set("bob", seed.bob);
    this.users.set("guest", seed.guest);
    this.users.set(
      "admin",
      store.createUser({ realmId, email: "admin@test.dev", fullName: "Ada Admin", role: ROLE.ADMINISTRATOR }),
    );
    this.users.set(
      "bot",
      store.createUser({
        realmId,
        email: "bot-bot@test.dev",
        fullName: "Botty",
        bot: { type: 1, ownerId: seed.alice.id },
      }),
    );
    this.users.set("carol", store.createUser({ realmId, email: "carol@test.dev", fullName: "Carol" }));
    this.users.set(
      "dave",
      store.createUser({ realmId, email: "dave@test.dev", fullName: "Dave", role: ROLE.MODERATOR }),
    );
    const id = (n: UserName) => this.user(n).id;
    store.subscribe(seed.owner.id, {
      channels: [{ name: "shared" }],
      principals: [id("owner"), id("bob"), id("guest"), id("carol")],
      newChannel: { inviteOnly: true, historyPublicToSubscribers: true },
    });
    store.subscribe(seed.owner.id, {
      channels: [{ name: "lobby" }],
      principals: [id("owner"), id("alice"), id("guest"), id("bot"), id("dave")],
    });
    store.subscribe(seed.owner.id, {
      channels: [{ name: "general" }],
      principals: [id("bot"), id("carol"), id("admin")],
    });
    this.groupIds.set(
      "team",
      store.createGroup(seed.owner.id, { name: "team", members: [id("alice"), id("guest"), id("carol")] }).id,
    );
    // A few messages from the start (in every kind of channel, and a DM), so that edits,
    // moves and deletions early in a sequence have something to act on.
    const seedMessages: [UserName, ChannelName | UserName, string][] = [
      ["owner", "general", "lunch"],
      ["alice", "lobby", "plans"],
      ["bob", "shared", ""],
      ["alice", "secret", "lunch"],
      ["carol", "bob", ""],
    ];
    for (const [sender, where, topic] of seedMessages) {
      const to = (CHANNELS as readonly string[]).includes(where)
        ? ({ type: "channel", channel: where, topic } as const)
        : ({ type: "direct", users: [this.user(where as UserName).id] } as const);
      this.#sent(store.sendMessage({ senderId: id(sender), to, content: `hello from ${sender}` }).id, sender);
    }
  }

  user(name: UserName): User {
    const u = this.users.get(name);
    if (!u) throw new Error(`no user ${name}`);
    return u;
  }

  /** The user as the store has them now (role and name change during a run). */
  current(name: UserName): User {
    return this.server.t.store.getUser(this.user(name).id);
  }

  channelId(name: string): number | undefined {
    const state = internals(this.server.t.store);
    return state.channelByName.get(`${this.server.seed.realm.id}:${name.toUpperCase()}`);
  }

  /** The distinct messages a flags action names: among those the user may read, so most change something. */
  pickIds(user: UserName, picks: readonly number[]): number[] {
    const { store } = this.server.t;
    const readable = this.sent.filter((id) => {
      try {
        store.getMessage(this.user(user).id, id);
        return true;
      } catch {
        return false;
      }
    });
    return [...new Set(picks.map((p) => this.#pick(p, readable)).filter((x): x is number => x !== undefined))];
  }

  /**
   * The message a move names: three times in four a channel message `actor` can read
   * (so that most moves are allowed), else any message sent (refusals).
   */
  #pickToMove(actor: UserName, n: number): number | undefined {
    if (n % 4 === 0) return this.#pick(n >> 2);
    const inChannels = this.pickIds(
      actor,
      [...this.sent.keys()].map((i) => 2 * i + 1),
    ).filter((id) => this.#location(id) !== undefined);
    return this.#pick(n >> 2, inChannels) ?? this.#pick(n >> 2);
  }

  #sent(id: number, sender: UserName): void {
    this.sent.push(id);
    this.senders.set(id, sender);
  }

  /** The acting user of an edit or deletion: the message's sender when asked, else `actor`. */
  #editor(actor: UserName, bySender: boolean, id: number): UserName {
    return bySender ? (this.senders.get(id) ?? actor) : actor;
  }

  /** The message's current channel and topic, as the store has them (undefined: a DM or gone). */
  #location(id: number): { channelId: number; topic: string } | undefined {
    const m = this.server.t.store.findMessageRecord(id);
    if (!m || m.recipient.type !== "channel") return undefined;
    return { channelId: m.recipient.channelId, topic: m.topic };
  }

  /** A message of `from`: half the picks among the newest few, where unread ones are. */
  #pick(n: number, from: readonly number[] = this.sent): number | undefined {
    if (from.length === 0) return undefined;
    if (n % 2 === 0) return from[from.length - 1 - ((n >> 1) % Math.min(from.length, 6))];
    return from[(n >> 1) % from.length];
  }

  #mentionText(m: Mention): string {
    switch (m.kind) {
      case "none":
        // Every third message a poll, so that votes (reaction actions below) have widgets to act on.
        return this.sent.length % 3 === 0 ? "/poll Lunch?\nPizza\nSushi" : "hello";
      case "user": {
        const u = this.current(m.who);
        return `hi @**${u.fullName}|${u.id}**`;
      }
      case "silent": {
        const u = this.current(m.who);
        return `hi @_**${u.fullName}|${u.id}**`;
      }
      case "all":
        return "hey @**all**";
      case "topic":
        return "hey @**topic**";
      case "group":
        return `hey @*${m.name}*`;
    }
  }

  #channelParams(channelId: number, change: ChannelChange): Record<string, unknown> {
    const { store } = this.server.t;
    if ("description" in change) return { description: change.description };
    if ("access" in change)
      return {
        is_private: change.access !== "public",
        history_public_to_subscribers: change.access !== "private_protected",
      };
    if ("renameCase" in change) {
      const name = store.getChannel(channelId)!.name;
      const flipped = name[0] === name[0]!.toUpperCase() ? name.toLowerCase() : name[0]!.toUpperCase() + name.slice(1);
      return { new_name: flipped };
    }
    if ("topicsPolicy" in change) return { topics_policy: change.topicsPolicy };
    if ("isDefault" in change) return { is_default_stream: change.isDefault };
    if ("retention" in change) return { message_retention_days: change.retention };
    const realmId = this.server.seed.realm.id;
    const value =
      change.to === "members" || change.to === "nobody" || change.to === "administrators"
        ? store.systemGroupId(realmId, `role:${change.to}`)
        : { direct_members: [this.user(change.to).id], direct_subgroups: [] };
    return { [change.group]: { new: value } };
  }

  /** Performs one action; failures (refusals) are recorded, not thrown. */
  async perform(requested: Action): Promise<void> {
    let action = requested;
    let prefix = "";
    const { store } = this.server.t;
    for (const bug of KNOWN_BUGS) {
      const avoided = bug.avoid(this, action);
      if (avoided === "skip") {
        this.outcomes.push(`skipped (known bug: ${bug.name})`);
        return;
      }
      if (avoided !== undefined) {
        prefix += `[changed to ${JSON.stringify(avoided)} (known bug: ${bug.name})] `;
        action = avoided;
      }
    }
    const call = async (who: UserName, method: string, path: string, params: Record<string, unknown>) => {
      const r = await this.server.call(this.user(who), method, path, params);
      if (r.status >= 500) throw new Error(`${method} ${path} answered ${r.status}: ${JSON.stringify(r.body)}`);
      return r;
    };
    const note = (ok: boolean, detail: string): void => {
      this.outcomes.push(`${prefix}${ok ? "ok" : "refused"}: ${detail}`);
    };
    const engine = (fn: () => void) => {
      try {
        fn();
        note(true, action.kind);
      } catch (e) {
        note(false, `${action.kind}: ${(e as Error).message}`);
      }
    };
    switch (action.kind) {
      case "send_channel": {
        const r = await call(action.sender, "POST", "/messages", {
          type: "stream",
          to: action.channel,
          topic: action.topic,
          content: this.#mentionText(action.mention),
          read_by_sender: action.readBySender,
        });
        if (r.status === 200) this.#sent(r.body["id"] as number, action.sender);
        return note(r.status === 200, `send_channel ${String(r.body["msg"] ?? "")}`);
      }
      case "send_dm": {
        const to = action.to.map((n) => this.user(n).id);
        const r = await call(action.sender, "POST", "/messages", {
          type: "direct",
          to,
          content: this.#mentionText(action.mention),
          read_by_sender: action.readBySender,
        });
        if (r.status === 200) this.#sent(r.body["id"] as number, action.sender);
        return note(r.status === 200, `send_dm ${String(r.body["msg"] ?? "")}`);
      }
      case "flags": {
        const ids = this.pickIds(action.user, action.picks);
        if (ids.length === 0) return note(false, "flags: nothing sent yet");
        const r = await call(action.user, "POST", "/messages/flags", {
          messages: ids,
          op: action.op,
          flag: action.flag,
        });
        return note(r.status === 200, `flags ${String(r.body["msg"] ?? "")}`);
      }
      case "mark_topic_read": {
        const channelId = this.channelId(action.channel);
        if (channelId === undefined) return note(false, "mark_topic_read: no such channel yet");
        const r = await call(action.user, "POST", "/mark_topic_as_read", {
          stream_id: channelId,
          topic_name: action.topic,
        });
        return note(r.status === 200, `mark_topic_read ${String(r.body["msg"] ?? "")}`);
      }
      case "channel_settings": {
        const channelId = this.channelId(action.channel);
        if (channelId === undefined) return note(false, "channel_settings: no such channel yet");
        const r = await call(
          action.actor,
          "PATCH",
          `/streams/${channelId}`,
          this.#channelParams(channelId, action.change),
        );
        return note(r.status === 200, `channel_settings ${String(r.body["msg"] ?? "")}`);
      }
      case "create_channel": {
        const r = await call(action.actor, "POST", "/channels/create", {
          name: action.name,
          subscribers: action.subscribers.map((n) => this.user(n).id),
          invite_only: action.inviteOnly,
        });
        return note(r.status === 200, `create_channel ${String(r.body["msg"] ?? "")}`);
      }
      case "default_channel": {
        const channelId = this.channelId(action.channel);
        if (channelId === undefined) return note(false, "default_channel: no such channel yet");
        const r = await call(action.actor, action.add ? "POST" : "DELETE", "/default_streams", {
          stream_id: channelId,
        });
        return note(r.status === 200, `default_channel ${String(r.body["msg"] ?? "")}`);
      }
      case "patch_subscriptions": {
        const remove = action.remove.filter((c) => !action.add.includes(c));
        const r = await call(action.user, "PATCH", "/users/me/subscriptions", {
          add: action.add.map((name) => ({ name })),
          delete: remove,
        });
        return note(r.status === 200, `patch_subscriptions ${String(r.body["msg"] ?? "")}`);
      }
      case "channel_folder": {
        const folders = store.channelFolders(this.user("owner").id, true);
        const folder = folders.length === 0 ? undefined : folders[action.pick % folders.length];
        if (action.op === "create") {
          const r = await call(action.actor, "POST", "/channel_folders/create", { name: `folder ${action.pick % 5}` });
          return note(r.status === 200, `channel_folder ${String(r.body["msg"] ?? "")}`);
        }
        if (action.op === "reorder") {
          const order = folders.map((f) => f.id).reverse();
          const r = await call(action.actor, "PATCH", "/channel_folders", { order });
          return note(r.status === 200, `channel_folder ${String(r.body["msg"] ?? "")}`);
        }
        if (action.op === "file") {
          const channelId = this.channelId(action.channel);
          if (channelId === undefined) return note(false, "channel_folder: no such channel yet");
          const folderId = folder === undefined || action.pick % 3 === 0 ? null : folder.id;
          const r = await call(action.actor, "PATCH", `/streams/${channelId}`, { folder_id: folderId });
          return note(r.status === 200, `channel_folder ${String(r.body["msg"] ?? "")}`);
        }
        if (folder === undefined) return note(false, "channel_folder: none yet");
        const params =
          action.op === "rename" ? { name: `renamed ${action.pick % 7}` } : { is_archived: action.op === "archive" };
        const r = await call(action.actor, "PATCH", `/channel_folders/${folder.id}`, params);
        return note(r.status === 200, `channel_folder ${String(r.body["msg"] ?? "")}`);
      }
      case "mark_read": {
        if (action.channel === null) {
          const r = await call(action.user, "POST", "/mark_all_as_read", {});
          return note(r.status === 200, `mark_read ${String(r.body["msg"] ?? "")}`);
        }
        const channelId = this.channelId(action.channel);
        if (channelId === undefined) return note(false, "mark_read: no such channel yet");
        const r = await call(action.user, "POST", "/mark_stream_as_read", { stream_id: channelId });
        return note(r.status === 200, `mark_read ${String(r.body["msg"] ?? "")}`);
      }
      case "archive_channel": {
        const channelId = this.channelId(action.channel);
        if (channelId === undefined) return note(false, "archive_channel: no such channel yet");
        const r = action.archive
          ? await call(action.actor, "DELETE", `/streams/${channelId}`, {})
          : await call(action.actor, "PATCH", `/streams/${channelId}`, { is_archived: false });
        return note(r.status === 200, `archive_channel ${String(r.body["msg"] ?? "")}`);
      }
      case "subscribe": {
        const params: Record<string, unknown> = {
          subscriptions: [{ name: action.channel }],
          invite_only: action.inviteOnly,
          history_public_to_subscribers: action.sharedHistory,
        };
        if (action.principals) params["principals"] = action.principals.map((n) => this.user(n).id);
        if (action.isDefault && !action.inviteOnly) params["is_default_stream"] = true;
        const r = await call(action.actor, "POST", "/users/me/subscriptions", params);
        return note(r.status === 200, `subscribe ${String(r.body["msg"] ?? "")}`);
      }
      case "unsubscribe": {
        const params: Record<string, unknown> = { subscriptions: [action.channel] };
        if (action.principals) params["principals"] = action.principals.map((n) => this.user(n).id);
        const r = await call(action.actor, "DELETE", "/users/me/subscriptions", params);
        return note(r.status === 200, `unsubscribe ${String(r.body["msg"] ?? "")}`);
      }
      case "update_user": {
        const params =
          "role" in action.change
            ? { role: action.change.role }
            : "fullName" in action.change
              ? { full_name: action.change.fullName }
              : { new_email: action.change.newEmail };
        const r = await call("owner", "PATCH", `/users/${this.user(action.target).id}`, params);
        return note(r.status === 200, `update_user ${String(r.body["msg"] ?? "")}`);
      }
      case "reaction": {
        const id = this.#pick(action.pick);
        if (id === undefined) return note(false, "reaction: nothing sent yet");
        // Derived from the action, not drawn: a new kind of action would shift every generated sequence.
        if (action.op === "add" && action.pick % 2 === 0) {
          // Half of them by the message's sender, who may attach to any message of theirs.
          const voter = action.pick % 4 === 0 ? (this.senders.get(id) ?? action.user) : action.user;
          const r = await call(voter, "POST", "/submessage", {
            message_id: id,
            msg_type: "widget",
            content: JSON.stringify({ type: "vote", key: "canned,0", vote: 1 }),
          });
          return note(r.status === 200, `submessage ${String(r.body["msg"] ?? "")}`);
        }
        const r = await call(action.user, action.op === "add" ? "POST" : "DELETE", `/messages/${id}/reactions`, {
          emoji_name: "octopus",
        });
        return note(r.status === 200, `reaction ${String(r.body["msg"] ?? "")}`);
      }
      case "set_active": {
        const id = this.user(action.target).id;
        const r = action.active
          ? await call("admin", "POST", `/users/${id}/reactivate`, {})
          : await call("admin", "DELETE", `/users/${id}`, {});
        return note(r.status === 200, `set_active ${String(r.body["msg"] ?? "")}`);
      }
      case "create_group":
        return engine(() => {
          if (this.groupIds.has(action.name)) throw new Error("exists");
          const g = store.createGroup(this.user(action.actor).id, {
            name: action.name,
            members: action.members.map((n) => this.user(n).id),
          });
          this.groupIds.set(action.name, g.id);
        });
      case "group_members":
        return engine(() => {
          const gid = this.groupIds.get(action.name);
          if (gid === undefined) throw new Error("no such group yet");
          const remove = action.remove.filter((n) => !action.add.includes(n));
          store.updateGroupMembers(
            this.user(action.actor).id,
            gid,
            action.add.map((n) => this.user(n).id),
            remove.map((n) => this.user(n).id),
          );
        });
      case "group_subgroups":
        return engine(() => {
          const team = this.groupIds.get("team");
          const crew = this.groupIds.get("crew");
          if (team === undefined || crew === undefined) throw new Error("needs both groups");
          store.updateGroupSubgroups(
            this.user(action.actor).id,
            crew,
            action.add ? [team] : [],
            action.add ? [] : [team],
          );
        });
      case "topic_policy":
        return engine(() => {
          const channelId = this.channelId(action.channel);
          if (channelId === undefined) throw new Error("no such channel yet");
          store.setTopicPolicy(this.user(action.user).id, channelId, action.topic, action.policy);
        });
      case "mute_channel":
        return engine(() => {
          const channelId = this.channelId(action.channel);
          if (channelId === undefined) throw new Error("no such channel yet");
          store.setChannelMuted(this.user(action.user).id, channelId, action.muted);
        });
      case "create_user":
        return engine(() => {
          this.#created++;
          const bot = action.bot ? { bot: { type: 1 as const, ownerId: this.user("bob").id } } : {};
          store.createUser({
            realmId: this.server.seed.realm.id,
            email: `new${this.#created}-${action.n}@test.dev`,
            fullName: `Newcomer ${this.#created}`,
            role: action.role,
            ...bot,
          });
        });
      case "settings": {
        const c = action.change;
        const params =
          "twentyFourHourTime" in c
            ? { twenty_four_hour_time: c.twentyFourHourTime }
            : "colorScheme" in c
              ? { color_scheme: c.colorScheme }
              : "timezone" in c
                ? { timezone: c.timezone }
                : "fullName" in c
                  ? { full_name: c.fullName }
                  : { enable_drafts_synchronization: c.draftsSync };
        const r = await call(action.user, "PATCH", "/settings", params);
        return note(r.status === 200, `settings ${String(r.body["msg"] ?? "")}`);
      }
      case "bulk_settings": {
        const target_users = {
          user_ids: action.targets.map((n) => this.user(n).id),
          skip_if_already_edited: action.skipIfAlreadyEdited,
        };
        const r = await call(action.actor, "PATCH", "/settings", { target_users, color_scheme: action.colorScheme });
        return note(r.status === 200, `bulk_settings ${String(r.body["msg"] ?? "")}`);
      }
      case "realm_defaults": {
        const r = await call(action.actor, "PATCH", "/realm/user_settings_defaults", {
          color_scheme: action.colorScheme,
        });
        return note(r.status === 200, `realm_defaults ${String(r.body["msg"] ?? "")}`);
      }
      case "draft": {
        const mine = this.drafts.get(action.user) ?? [];
        const channelId = this.channelId(action.channel);
        const draft =
          channelId === undefined
            ? { type: "", to: [], topic: "", content: "draft" }
            : { type: "stream", to: [channelId], topic: "plans", content: `draft ${action.pick}` };
        if (action.op === "create") {
          const r = await call(action.user, "POST", "/drafts", { drafts: [draft] });
          if (r.status === 200) this.drafts.set(action.user, [...mine, ...(r.body["ids"] as number[])]);
          return note(r.status === 200, `draft create ${String(r.body["msg"] ?? "")}`);
        }
        const id = mine[action.pick % Math.max(1, mine.length)];
        if (id === undefined) return note(false, "draft: none created yet");
        const r =
          action.op === "edit"
            ? await call(action.user, "PATCH", `/drafts/${id}`, { draft })
            : await call(action.user, "DELETE", `/drafts/${id}`, {});
        return note(r.status === 200, `draft ${action.op} ${String(r.body["msg"] ?? "")}`);
      }
      case "user_status": {
        const params = {
          ...(action.text === null ? {} : { status_text: action.text }),
          ...(action.emoji === null ? {} : { emoji_name: action.emoji }),
        };
        const r =
          action.target === null
            ? await call(action.actor, "POST", "/users/me/status", {
                ...params,
                ...(action.away === null ? {} : { away: action.away }),
              })
            : await call(action.actor, "POST", `/users/${this.user(action.target).id}/status`, params);
        return note(r.status === 200, `user_status ${String(r.body["msg"] ?? "")}`);
      }
      case "alert_words": {
        const r = await call(action.user, action.op === "add" ? "POST" : "DELETE", "/users/me/alert_words", {
          alert_words: JSON.stringify(action.words),
        });
        return note(r.status === 200, `alert_words ${String(r.body["msg"] ?? "")}`);
      }
      case "mute_user": {
        const path = `/users/me/muted_users/${this.user(action.target).id}`;
        const r = await call(action.user, action.mute ? "POST" : "DELETE", path, {});
        return note(r.status === 200, `mute_user ${String(r.body["msg"] ?? "")}`);
      }
      case "snippet": {
        const mine = this.snippets.get(action.user) ?? [];
        if (action.op === "create") {
          const r = await call(action.user, "POST", "/saved_snippets", {
            title: `Snippet ${action.pick}`,
            content: "Hello",
          });
          if (r.status === 200) this.snippets.set(action.user, [...mine, r.body["saved_snippet_id"] as number]);
          return note(r.status === 200, `snippet create ${String(r.body["msg"] ?? "")}`);
        }
        const id = mine[action.pick % Math.max(1, mine.length)];
        if (id === undefined) return note(false, "snippet: none created yet");
        const r =
          action.op === "edit"
            ? await call(action.user, "PATCH", `/saved_snippets/${id}`, { content: `Edited ${action.pick}` })
            : await call(action.user, "DELETE", `/saved_snippets/${id}`, {});
        return note(r.status === 200, `snippet ${action.op} ${String(r.body["msg"] ?? "")}`);
      }
      case "sub_property": {
        const channelId = this.channelId(action.channel);
        if (channelId === undefined) return note(false, "sub_property: no such channel yet");
        const value =
          action.property === "color" ? ["#76ce90", "#abc", "#e79ab5"][action.pick % 3] : action.pick % 2 === 0;
        const r = await call(action.user, "POST", "/users/me/subscriptions/properties", {
          subscription_data: [{ stream_id: channelId, property: action.property, value }],
        });
        return note(r.status === 200, `sub_property ${action.property} ${String(r.body["msg"] ?? "")}`);
      }
      case "playground": {
        if (action.op === "add") {
          const r = await call(action.actor, "POST", "/realm/playgrounds", {
            name: `Playground ${action.pick % 5}`,
            pygments_language: "Python",
            url_template: "https://play.test/{code}",
          });
          if (r.status === 200) this.playgrounds.push(r.body["id"] as number);
          return note(r.status === 200, `playground add ${String(r.body["msg"] ?? "")}`);
        }
        const id = this.playgrounds[action.pick % Math.max(1, this.playgrounds.length)];
        if (id === undefined) return note(false, "playground: none added yet");
        const r = await call(action.actor, "DELETE", `/realm/playgrounds/${id}`, {});
        return note(r.status === 200, `playground remove ${String(r.body["msg"] ?? "")}`);
      }
      case "profile_field": {
        const fields = store.profileFields(this.user("owner").id);
        const field = fields.length === 0 ? undefined : fields[action.pick % fields.length];
        const OPTIONS = { a: { text: "A", order: "1" }, b: { text: "B", order: "2" } };
        let r;
        // Without a field yet, any operation creates one (so that values get set early in a run).
        if (action.op === "create" || field === undefined) {
          // A text field, a select field and a user field, by turns.
          const type = [2, 3, 6][action.pick % 3]!;
          r = await call(action.actor, "POST", "/realm/profile_fields", {
            name: `Field ${action.pick % 4}`,
            field_type: type,
            ...(type === 3 ? { field_data: OPTIONS } : {}),
          });
        } else if (action.op === "options")
          r = await call(action.actor, "PATCH", `/realm/profile_fields/${field.id}`, {
            ...(field.type === 3 ? { field_data: { b: OPTIONS.b } } : { hint: `hint ${action.pick % 3}` }),
          });
        else if (action.op === "delete")
          r = await call(action.actor, "DELETE", `/realm/profile_fields/${field.id}`, {});
        else if (action.op === "clear")
          r = await call(action.actor, "DELETE", "/users/me/profile_data", { data: [field.id] });
        else {
          const value =
            field.type === 3
              ? ["a", "b"][action.pick % 2]!
              : field.type === 6
                ? [this.user("alice").id]
                : `**about** ${action.pick % 3}`;
          r = await call(action.actor, "PATCH", "/users/me/profile_data", { data: [{ id: field.id, value }] });
        }
        return note(r.status === 200, `profile_field ${action.op} ${String(r.body["msg"] ?? "")}`);
      }
      case "realm_domain": {
        // Three names, so that adds meet duplicates and removals meet missing ones.
        const domain = `d${action.pick % 3}.test`;
        const r =
          action.op === "add"
            ? await call(action.actor, "POST", "/realm/domains", { domain, allow_subdomains: action.pick % 2 === 0 })
            : action.op === "change"
              ? await call(action.actor, "PATCH", `/realm/domains/${domain}`, {
                  allow_subdomains: action.pick % 2 === 0,
                })
              : await call(action.actor, "DELETE", `/realm/domains/${domain}`, {});
        return note(r.status === 200, `realm_domain ${action.op} ${String(r.body["msg"] ?? "")}`);
      }
      case "linkifier": {
        const ids = this.server.t.store.linkifiers(this.user("owner").id).map((l) => l.id);
        const params = {
          pattern: `L${action.pick % 7}-(?P<id>[0-9]+)`,
          url_template: `https://l.test/${action.pick}/{id}`,
        };
        let r: { status: number; body: Record<string, unknown> };
        if (action.op === "add") r = await call(action.actor, "POST", "/realm/filters", params);
        else if (action.op === "reorder") {
          const rotated = [
            ...ids.slice(action.pick % Math.max(1, ids.length)),
            ...ids.slice(0, action.pick % Math.max(1, ids.length)),
          ];
          r = await call(action.actor, "PATCH", "/realm/linkifiers", { ordered_linkifier_ids: rotated });
        } else {
          const id = ids[action.pick % Math.max(1, ids.length)];
          if (id === undefined) return note(false, "linkifier: none yet");
          r =
            action.op === "update"
              ? await call(action.actor, "PATCH", `/realm/filters/${id}`, params)
              : await call(action.actor, "DELETE", `/realm/filters/${id}`, {});
        }
        return note(r.status === 200, `linkifier ${action.op} ${String(r.body["msg"] ?? "")}`);
      }
      case "presence": {
        const r = await call(action.user, "POST", "/users/me/presence", { status: action.status, ping_only: true });
        return note(r.status === 200, `presence ${String(r.body["msg"] ?? "")}`);
      }
      case "device": {
        const mine = this.devices.get(action.user) ?? [];
        if (action.op === "add") {
          const r = await call(action.user, "POST", "/register_client_device", {});
          if (r.status === 200) this.devices.set(action.user, [...mine, r.body["device_id"] as number]);
          return note(r.status === 200, `device add ${String(r.body["msg"] ?? "")}`);
        }
        const id = mine[action.pick % Math.max(1, mine.length)];
        if (id === undefined) return note(false, "device: none registered yet");
        if (action.op === "remove") {
          const r = await call(action.user, "POST", "/remove_client_device", { device_id: id });
          return note(r.status === 200, `device remove ${String(r.body["msg"] ?? "")}`);
        }
        // The server's bouncer is never reached here: registrations stay pending.
        const key = Buffer.concat([Buffer.from([0x31]), Buffer.alloc(32, action.pick % 251)]).toString("base64");
        const token =
          action.op === "register"
            ? {
                token_kind: "fcm",
                token_id: Buffer.alloc(8, action.pick % 251).toString("base64"),
                bouncer_public_key: "a2V5",
                encrypted_push_registration: "cmVn",
              }
            : {};
        const r = await call(action.user, "POST", "/mobile_push/register", {
          device_id: id,
          push_key: key,
          push_key_id: action.pick % 1000,
          ...token,
        });
        return note(r.status === 200, `device ${action.op} ${String(r.body["msg"] ?? "")}`);
      }
      case "api_create_user": {
        this.#created++;
        const r = await call("owner", "POST", "/users", {
          email: `made${this.#created}-${action.n}@test.dev`,
          password: "correct horse battery",
          full_name: `Made ${this.#created}`,
        });
        return note(r.status === 200, `api_create_user ${String(r.body["msg"] ?? "")}`);
      }
      case "create_bot": {
        this.#created++;
        const params: Record<string, unknown> = {
          full_name: `Made Bot ${this.#created}`,
          short_name: `made${this.#created}`,
          bot_type: action.botType,
          default_all_public_streams: action.allPublic,
        };
        if (action.botType === 3) params["payload_url"] = JSON.stringify("https://hooks.test/x");
        if (action.channel !== null) params["default_sending_stream"] = action.channel;
        const r = await call(action.actor, "POST", "/bots", params);
        if (r.status === 200) this.bots.push(r.body["user_id"] as number);
        return note(r.status === 200, `create_bot ${String(r.body["msg"] ?? "")}`);
      }
      case "update_bot": {
        const targets = [this.user("bot").id, ...this.bots];
        const id = targets[action.pick % targets.length]!;
        const c = action.change;
        const params =
          "channel" in c
            ? { default_events_register_stream: c.channel }
            : "allPublic" in c
              ? { default_all_public_streams: c.allPublic }
              : "fullName" in c
                ? { full_name: c.fullName }
                : { bot_owner_id: this.user(c.owner).id };
        const r = await call(action.actor, "PATCH", `/bots/${id}`, params);
        return note(r.status === 200, `update_bot ${String(r.body["msg"] ?? "")}`);
      }
      case "bot_active": {
        const id = this.bots[action.pick % Math.max(1, this.bots.length)];
        if (id === undefined) return note(false, "bot_active: no bot created yet");
        const r = action.active
          ? await call(action.actor, "POST", `/users/${id}/reactivate`, {})
          : await call(action.actor, "DELETE", `/bots/${id}`, {});
        return note(r.status === 200, `bot_active ${String(r.body["msg"] ?? "")}`);
      }
      case "edit": {
        const id = this.#pick(action.pick);
        if (id === undefined) return note(false, "edit: nothing sent yet");
        const who = this.#editor(action.actor, action.bySender, id);
        const params: Record<string, unknown> = { content: this.#mentionText(action.mention) };
        if (action.topic !== null) Object.assign(params, { topic: action.topic, propagate_mode: action.mode });
        const r = await call(who, "PATCH", `/messages/${id}`, params);
        return note(r.status === 200, `edit ${String(r.body["msg"] ?? "")}`);
      }
      case "move": {
        const id = this.#pickToMove(action.actor, action.pick);
        if (id === undefined) return note(false, "move: nothing sent yet");
        const params: Record<string, unknown> = {
          propagate_mode: action.mode,
          send_notification_to_old_thread: action.notifyOld,
          send_notification_to_new_thread: action.notifyNew,
        };
        if (action.topic !== null) params["topic"] = action.topic;
        if (action.channel !== null) {
          const channelId = this.channelId(action.channel);
          if (channelId === undefined) return note(false, "move: no such channel yet");
          params["stream_id"] = channelId;
        }
        const r = await call(action.actor, "PATCH", `/messages/${id}`, params);
        return note(r.status === 200, `move ${String(r.body["msg"] ?? "")}`);
      }
      case "resolve": {
        const id = this.#pickToMove(action.actor, action.pick);
        if (id === undefined) return note(false, "resolve: nothing sent yet");
        const current = this.#location(id)?.topic ?? "lunch";
        const topic = current.startsWith("✔ ") ? current.replace(/^[✔ ]+/, "") : `✔ ${current}`;
        const r = await call(action.actor, "PATCH", `/messages/${id}`, { topic, propagate_mode: action.mode });
        return note(r.status === 200, `resolve ${String(r.body["msg"] ?? "")}`);
      }
      case "delete": {
        const id = this.#pick(action.pick);
        if (id === undefined) return note(false, "delete: nothing sent yet");
        const r = await call(this.#editor(action.actor, action.bySender, id), "DELETE", `/messages/${id}`, {});
        return note(r.status === 200, `delete ${String(r.body["msg"] ?? "")}`);
      }
      case "delete_topic": {
        const channelId = this.channelId(action.channel);
        if (channelId === undefined) return note(false, "delete_topic: no such channel yet");
        const r = await call(action.actor, "POST", `/streams/${channelId}/delete_topic`, { topic_name: action.topic });
        return note(r.status === 200 && r.body["complete"] === true, `delete_topic ${String(r.body["msg"] ?? "")}`);
      }
      case "custom_emoji": {
        const name = `emoji_${action.pick % 3}`;
        if (action.op === "remove") {
          const r = await call(action.actor, "DELETE", `/realm/emoji/${name}`, {});
          return note(r.status === 200, `custom emoji remove ${String(r.body["msg"] ?? "")}`);
        }
        const body = new FormData();
        body.append("file", new Blob([EMOJI_PNG], { type: "image/png" }), "emoji.png");
        const r = await this.server.call(this.user(action.actor), "POST", `/realm/emoji/${name}`, {}, { body });
        return note(r.status === 200, `custom emoji add ${String(r.body["msg"] ?? "")}`);
      }
    }
  }
}

/**
 * Divergences the oracle found in src/ and that are not fixed yet: actions that would
 * trigger one are skipped (and listed as skipped in a failure report), so the test
 * stays green while still covering everything else. Remove an entry once fixed.
 */
export const KNOWN_BUGS: readonly {
  readonly name: string;
  avoid(world: World, action: Action): Action | "skip" | undefined;
}[] = [];
