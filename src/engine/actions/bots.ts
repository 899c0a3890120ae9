/**
 * @module actions/bots
 * Bots as Zulip's API manages them (zerver/views/users.py add_bot_backend,
 * patch_bot_backend and the bot API key views; zerver/actions/bots.py):
 * - creating one (POST /bots) takes a member or above (never a bot or a guest) in the
 *   realm's can_create_bots_group, or, for an incoming webhook bot, in
 *   can_create_write_only_bots_group (both role:members unless changed). Its address is
 *   `<short_name>-bot@<the realm's bot domain>`; generic, incoming webhook and outgoing
 *   webhook bots (embedded bots are off, as on a default Zulip server);
 * - changing one, deactivating it, and reading or regenerating its API key take its
 *   owner or an administrator (Zulip's access_bot_by_id); a bot holding
 *   can_create_users takes an owner.
 * Reactivating is actions/user-lifecycle's (POST /users/{id}/reactivate).
 *
 * Outgoing webhook bots store their service (URL, interface, token); the messages that
 * call it are decided at send (outgoing-webhooks/triggers.ts) and src/outgoing-webhooks
 * makes the calls.
 */
import { canAccessChannelContent, canAdminUser, isAdmin, isAllowedBy } from "../access.js";
import { BadRequestError, PermissionDeniedError, clip } from "../errors.js";
import { botManagersAudience, userAudience } from "../events/audience.js";
import type { RealmBotField } from "../events/types.js";
import { emailKey, type StoreState, type WriteContext } from "../state.js";
import {
  ROLE,
  ROLES,
  type BotConfig,
  type BotService,
  type BotType,
  type Channel,
  type GroupSettingValue,
  type Role,
  type ServiceInterface,
  type User,
} from "../types.js";
import { writeNewApiKeyInTxn } from "./accounts.js";
import { findChannelByName, isValidEmail, requireMemberOrAdmin } from "./lookups.js";
import { systemGroupId } from "./realms.js";
import { unsubscribeInTxn } from "./subscriptions.js";
import {
  checkChosenFullName,
  createUserInTxn,
  emitUserUpdates,
  emitVisibilityChanges,
  generateApiKey,
} from "./users.js";

/** Zulip's UserProfile bot types. */
export const BOT_TYPE = { GENERIC: 1, INCOMING_WEBHOOK: 2, OUTGOING_WEBHOOK: 3, EMBEDDED: 4 } as const;
/** Zulip's Service.ALLOWED_INTERFACE_TYPES: GENERIC and SLACK. */
const INTERFACE_TYPES: readonly number[] = [1, 2];
const BAD_NAME = "Bad name or username";

/** A bot's settings, Zulip's defaults where its record has none (bots made before they were stored). */
export function botConfigOf(bot: User): BotConfig {
  return (
    bot.botConfig ?? {
      defaultSendingChannelId: null,
      defaultEventsRegisterChannelId: null,
      defaultAllPublicChannels: false,
      service: null,
      configData: {},
    }
  );
}

/** The realm's can_create_bots_group (Zulip's default: role:members). */
export function canCreateBotsGroup(state: StoreState, realmId: number): GroupSettingValue {
  return state.realms.get(realmId)?.canCreateBotsGroup ?? systemGroupId(state, realmId, "role:members");
}

/** The realm's can_create_write_only_bots_group (Zulip's default: role:members). */
export function canCreateWriteOnlyBotsGroup(state: StoreState, realmId: number): GroupSettingValue {
  return state.realms.get(realmId)?.canCreateWriteOnlyBotsGroup ?? systemGroupId(state, realmId, "role:members");
}

/** Zulip's UserProfile.allowed_bot_types (embedded bots disabled). */
function allowedBotTypes(state: StoreState, user: User): readonly number[] {
  if (isAllowedBy(state, canCreateBotsGroup(state, user.realmId), user))
    return [BOT_TYPE.GENERIC, BOT_TYPE.INCOMING_WEBHOOK, BOT_TYPE.OUTGOING_WEBHOOK];
  if (isAllowedBy(state, canCreateWriteOnlyBotsGroup(state, user.realmId), user)) return [BOT_TYPE.INCOMING_WEBHOOK];
  return [];
}

/**
 * Zulip's check_bot_creation_policy: any bot for can_create_bots_group, incoming
 * webhooks also for can_create_write_only_bots_group. (Its text for a refusal since
 * these groups replaced bot_creation_policy is inferred: "Insufficient permission".)
 */
function checkBotCreationPolicy(state: StoreState, user: User, botType: number): void {
  if (isAllowedBy(state, canCreateBotsGroup(state, user.realmId), user)) return;
  const writeOnly = isAllowedBy(state, canCreateWriteOnlyBotsGroup(state, user.realmId), user);
  if (botType === BOT_TYPE.INCOMING_WEBHOOK && writeOnly) return;
  throw new BadRequestError("Insufficient permission");
}

/**
 * Zulip's check_bot_name_available: no active user of the realm has exactly this
 * name (a guard against confusion, not a uniqueness rule).
 */
function checkBotNameAvailable(state: StoreState, realmId: number, fullName: string, isActivation: boolean): void {
  const name = fullName.trim();
  const taken = (state.usersByName.get(`${realmId}:${name.toLowerCase()}`) ?? []).some((id) => {
    const user = state.users.get(id);
    return user !== undefined && user.isActive && user.fullName === name;
  });
  if (!taken) return;
  if (isActivation)
    throw new BadRequestError(
      `There is already an active bot named "${clip(fullName)}" in this organization. To reactivate this bot, you must rename or deactivate the other one first.`,
    );
  throw new BadRequestError("Name is already in use!");
}

/** Whether `actor` may create a bot of `bot`'s type now (reactivating one asks the same). */
export function checkMayHaveBot(state: StoreState, actor: User, bot: User): void {
  checkBotCreationPolicy(state, actor, bot.botType ?? BOT_TYPE.GENERIC);
  checkBotNameAvailable(state, bot.realmId, bot.fullName, true);
}

/**
 * Zulip's access_stream_by_name for a bot's default channel: one the actor may read,
 * not archived; any other is "Invalid channel name".
 */
function defaultChannel(state: StoreState, actor: User, name: string): Channel {
  const channel = findChannelByName(state, actor.realmId, name);
  if (!channel || channel.isArchived || !canAccessChannelContent(state, actor, channel))
    throw new BadRequestError(`Invalid channel name '${clip(name)}'`);
  return channel;
}

/**
 * Zulip's access_bot_by_id: a bot of the actor's realm (deactivated ones too) that the
 * actor owns or administers; "No such bot" for anything else, whatever exists.
 */
export function accessBot(state: StoreState, actor: User, botId: number): User {
  const bot = state.users.get(botId);
  if (!bot || bot.realmId !== actor.realmId || !bot.isBot) throw new BadRequestError("No such bot");
  if (!canAdminUser(actor, bot)) throw new BadRequestError("Insufficient permission");
  if (bot.canCreateUsers === true && actor.role !== ROLE.OWNER)
    throw new PermissionDeniedError("Must be an organization owner", "UNAUTHORIZED_PRINCIPAL");
  return bot;
}

export interface CreateBotInput {
  readonly fullName: string;
  readonly shortName: string;
  /** Zulip's bot_type; default 1 (generic). */
  readonly botType?: number;
  /** An outgoing webhook's URL; default "". */
  readonly payloadUrl?: string;
  /** An outgoing webhook's service name (default: the short name); an incoming webhook's integration. */
  readonly serviceName?: string | null;
  /** Zulip's BotConfigData for an incoming webhook bot. */
  readonly configData?: Readonly<Record<string, string>>;
  /** The incoming webhook integrations the server serves (their URL names), which `serviceName` must be one of. */
  readonly integrations?: readonly string[];
  /** An outgoing webhook's payload format: 1 Zulip's, 2 Slack's; default 1. */
  readonly interfaceType?: number;
  /** Channel names (Zulip sends and takes names here). */
  readonly defaultSendingChannel?: string | null;
  readonly defaultEventsRegisterChannel?: string | null;
  readonly defaultAllPublicChannels?: boolean | null;
  /** Zulip's realm.get_bot_domain(): the host the realm is served at (the engine does not know it). */
  readonly botDomain: string;
}

/** POST /bots: the new bot, owned by the actor, with Zulip's checks in Zulip's order. */
export function createBot(state: StoreState, actorId: number, input: CreateBotInput): User {
  const actor = requireMemberOrAdmin(state, actorId);
  const realm = state.realms.get(actor.realmId)!;
  const botType = input.botType ?? BOT_TYPE.GENERIC;
  const shortName = input.shortName.trim();
  if (shortName === "") throw new BadRequestError(BAD_NAME);
  const serviceName =
    botType === BOT_TYPE.INCOMING_WEBHOOK ? (input.serviceName ?? null) : input.serviceName || shortName;
  const fullName = checkChosenFullName(state, realm.id, input.fullName, null);
  const email = `${shortName}-bot@${input.botDomain}`;
  if (!isValidEmail(email)) throw new BadRequestError(BAD_NAME);
  if (botType === BOT_TYPE.EMBEDDED) throw new BadRequestError("Embedded bots are not enabled.");
  if (state.userByEmail.has(emailKey(realm.id, email))) throw new BadRequestError("Username already in use");
  checkBotNameAvailable(state, realm.id, fullName, false);
  checkBotCreationPolicy(state, actor, botType);
  if (!allowedBotTypes(state, actor).includes(botType)) throw new BadRequestError("Invalid bot type");
  const interfaceType = input.interfaceType ?? 1;
  if (!INTERFACE_TYPES.includes(interfaceType)) throw new BadRequestError("Invalid interface type");
  const sending =
    input.defaultSendingChannel == null ? null : defaultChannel(state, actor, input.defaultSendingChannel);
  const events =
    input.defaultEventsRegisterChannel == null
      ? null
      : defaultChannel(state, actor, input.defaultEventsRegisterChannel);
  // Zulip checks the integration against its list of incoming webhooks (the HTTP layer's registry here).
  if (botType === BOT_TYPE.INCOMING_WEBHOOK && serviceName && !(input.integrations ?? []).includes(serviceName))
    throw new BadRequestError(`Invalid integration '${clip(serviceName)}'.`);
  const service: BotService | null =
    botType === BOT_TYPE.OUTGOING_WEBHOOK
      ? {
          name: serviceName ?? shortName,
          baseUrl: input.payloadUrl ?? "",
          interface: interfaceType as ServiceInterface,
          token: generateApiKey(),
        }
      : null;
  const config: BotConfig = {
    defaultSendingChannelId: sending?.id ?? null,
    defaultEventsRegisterChannelId: events?.id ?? null,
    defaultAllPublicChannels: input.defaultAllPublicChannels ?? false,
    service,
    configData: botType === BOT_TYPE.INCOMING_WEBHOOK ? { ...input.configData } : {},
  };
  return state.write((ctx) =>
    createUserInTxn(
      state,
      ctx,
      { realmId: realm.id, email, fullName, bot: { type: botType as BotType, ownerId: actor.id, config } },
      realm,
    ),
  );
}

export interface UpdateBotInput {
  readonly fullName?: string;
  readonly role?: number;
  readonly botOwnerId?: number;
  /** Merged into the bot's BotConfigData. */
  readonly configData?: Readonly<Record<string, string>>;
  /** An outgoing webhook bot's new URL, with serviceInterface (default 1). */
  readonly servicePayloadUrl?: string;
  readonly serviceInterface?: number;
  /** A channel name, or "" for none. */
  readonly defaultSendingChannel?: string;
  readonly defaultEventsRegisterChannel?: string;
  readonly defaultAllPublicChannels?: boolean;
}

/**
 * PATCH /bots/{bot_id}. Checked in Zulip's order, then written in one transaction
 * (Zulip writes each change as it checks the next). A new owner may not see the
 * bot's private channels: the bot leaves those the owner is not subscribed to.
 */
export function updateBot(state: StoreState, actorId: number, botId: number, input: UpdateBotInput): User {
  const actor = requireMemberOrAdmin(state, actorId);
  const bot = accessBot(state, actor, botId);
  const config = botConfigOf(bot);
  const next: User = { ...bot, botConfig: { ...config, configData: { ...config.configData } } };
  const nextConfig = next.botConfig!;
  const fields: RealmBotField[] = [];
  if (input.fullName !== undefined) {
    const name = checkChosenFullName(state, bot.realmId, input.fullName, bot.id);
    // Zulip's web app sends the name unchanged with every save: that is not a rename.
    if (name !== bot.fullName) {
      checkBotNameAvailable(state, bot.realmId, name, false);
      next.fullName = name;
    }
  }
  if (input.role !== undefined && input.role !== bot.role) {
    if (!ROLES.includes(input.role as Role)) throw new BadRequestError("Invalid role");
    if ((input.role === ROLE.OWNER || bot.role === ROLE.OWNER) && actor.role !== ROLE.OWNER)
      throw new PermissionDeniedError("Must be an organization owner", "UNAUTHORIZED_PRINCIPAL");
    if (!isAdmin(actor))
      throw new PermissionDeniedError("Must be an organization administrator", "UNAUTHORIZED_PRINCIPAL");
    next.role = input.role as Role;
  }
  let newOwner: User | null = null;
  if (input.botOwnerId !== undefined) {
    const owner = state.users.get(input.botOwnerId);
    if (!owner || owner.realmId !== bot.realmId) throw new BadRequestError("Failed to change owner, no such user");
    if (!owner.isActive) throw new BadRequestError("Failed to change owner, user is deactivated");
    if (owner.isBot) throw new BadRequestError("Failed to change owner, bots can't own other bots");
    if (owner.id !== bot.botOwnerId) {
      newOwner = owner;
      next.botOwnerId = owner.id;
    }
  }
  const channelSetting = (name: string): number | null => (name === "" ? null : defaultChannel(state, actor, name).id);
  if (input.defaultSendingChannel !== undefined) {
    nextConfig.defaultSendingChannelId = channelSetting(input.defaultSendingChannel);
    fields.push("defaultSendingChannelId");
  }
  if (input.defaultEventsRegisterChannel !== undefined) {
    nextConfig.defaultEventsRegisterChannelId = channelSetting(input.defaultEventsRegisterChannel);
    fields.push("defaultEventsRegisterChannelId");
  }
  if (input.defaultAllPublicChannels !== undefined) {
    nextConfig.defaultAllPublicChannels = input.defaultAllPublicChannels;
    fields.push("defaultAllPublicChannels");
  }
  if (input.servicePayloadUrl !== undefined) {
    const iface = input.serviceInterface ?? 1;
    if (!INTERFACE_TYPES.includes(iface)) throw new BadRequestError("Invalid interface type");
    // Zulip fails with a server error for a bot without a service; refused here.
    if (config.service === null) throw new BadRequestError("This bot has no outgoing webhook service");
    nextConfig.service = { ...config.service, baseUrl: input.servicePayloadUrl, interface: iface as ServiceInterface };
    fields.push("service");
  }
  // Stored, not announced: Zulip's realm_bot update would show it as a service only
  // embedded bots list (register's realm_bots has none for other bots).
  if (input.configData !== undefined) Object.assign(nextConfig.configData, input.configData);
  return state.write((ctx) => {
    state.tables.users.putSync(next.id, next);
    ctx.afterCommit(() => state.indexUser(next));
    emitUserUpdates(state, ctx, bot, next);
    emitVisibilityChanges(state, ctx, bot, next);
    if (newOwner !== null) changeOwnerInTxn(state, ctx, bot, next);
    for (const field of fields)
      ctx.emit({ type: "realm_bot", op: "update", bot: next, fields: [field] }, () => botManagersAudience(state, next));
    return next;
  });
}

/**
 * Inside an open write, after `after` (the bot with its new owner) was stored: the
 * previous owner stops and the new one starts managing it (Zulip's
 * send_bot_owner_update_events; administrators list every bot already), and the bot
 * leaves private channels its new owner is not subscribed to.
 */
export function changeOwnerInTxn(state: StoreState, ctx: WriteContext, before: User, after: User): void {
  const previous = before.botOwnerId === null ? undefined : state.users.get(before.botOwnerId);
  if (previous && !isAdmin(previous))
    ctx.emit({ type: "realm_bot", op: "delete", botId: after.id }, () => userAudience(previous.id));
  const owner = after.botOwnerId === null ? undefined : state.users.get(after.botOwnerId);
  if (!owner) return;
  if (!isAdmin(owner)) ctx.emit({ type: "realm_bot", op: "add", bot: after }, () => userAudience(owner.id));
  const leave: Channel[] = [];
  for (const sub of state.subsByUser.get(after.id)?.values() ?? []) {
    const channel = state.channels.get(sub.channelId);
    if (sub.active && channel?.inviteOnly && state.subsByUser.get(owner.id)?.get(channel.id)?.active !== true)
      leave.push(channel);
  }
  if (leave.length > 0) unsubscribeInTxn(state, ctx, [after], leave);
}

/**
 * What a POST /register leaves out, a bot's settings fill in (Zulip's
 * _default_all_public_streams and _default_narrow): all public channels, and a narrow
 * to its default events channel. People have neither. A guest bot never gets all
 * public channels (Zulip would give them to its queue: it checks only an explicit request).
 */
export function queueDefaults(
  state: StoreState,
  user: User,
): { readonly allPublicChannels: boolean; readonly channelName: string | null; readonly channelId: number | null } {
  const config = user.botConfig;
  const channelId = config?.defaultEventsRegisterChannelId ?? null;
  const channel = channelId === null ? undefined : state.channels.get(channelId);
  const allPublicChannels = (config?.defaultAllPublicChannels ?? false) && user.role !== ROLE.GUEST;
  return { allPublicChannels, channelName: channel?.name ?? null, channelId: channel?.id ?? null };
}

/** GET /bots/{bot_id}/api_key (feature level 463). */
export function botApiKey(state: StoreState, actorId: number, botId: number): string {
  const actor = requireMemberOrAdmin(state, actorId);
  return accessBot(state, actor, botId).apiKey;
}

/** POST /bots/{bot_id}/api_key/regenerate: the old key fails from the commit on; no event since feature level 474. */
export function regenerateBotApiKey(state: StoreState, actorId: number, botId: number): string {
  const actor = requireMemberOrAdmin(state, actorId);
  const bot = accessBot(state, actor, botId);
  return state.write((ctx) => writeNewApiKeyInTxn(state, ctx, bot));
}
