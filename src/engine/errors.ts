/**
 * @module errors
 * The one typed error hierarchy of the engine. Every failure a caller can cause is an
 * EngineError carrying Zulip's error code, its message and its extra data fields.
 * The engine knows codes, never HTTP statuses: src/http/error-map.ts maps them once.
 */

/** Zulip's ErrorCode names that the engine raises. */
export type ErrorCode =
  | "BAD_REQUEST"
  | "REQUEST_VARIABLE_MISSING"
  | "REQUEST_CONFUSING_VAR"
  | "BAD_NARROW"
  | "STREAM_DOES_NOT_EXIST"
  | "UNAUTHORIZED_PRINCIPAL"
  | "UNAUTHORIZED"
  | "USER_DEACTIVATED"
  | "REALM_DEACTIVATED"
  | "AUTHENTICATION_FAILED"
  | "NONEXISTENT_SUBDOMAIN"
  | "RATE_LIMIT_HIT"
  | "BAD_EVENT_QUEUE_ID"
  | "REACTION_ALREADY_EXISTS"
  | "REACTION_DOES_NOT_EXIST"
  | "MOVE_MESSAGES_TIME_LIMIT_EXCEEDED"
  | "NOT_FOUND"
  | "ACCESS_DENIED"
  | "INTERNAL_SERVER_ERROR"
  | "DATA_DIRECTORY_LOCKED"
  | "CANNOT_DEACTIVATE_GROUP_IN_USE"
  | "CANNOT_DEACTIVATE_LAST_USER"
  | "PUSH_SERVICE_NOT_CONFIGURED"
  | "NO_ACTIVE_PUSH_DEVICE"
  | "INVALID_PUSH_DEVICE_TOKEN"
  | "INVALID_REMOTE_PUSH_DEVICE_TOKEN"
  // Push bouncer failures, raised by src/push when a request waits on the bouncer.
  | "ADMIN_ACTION_REQUIRED"
  | "FAILED_TO_CONNECT_BOUNCER"
  | "INTERNAL_SERVER_ERROR_ON_BOUNCER"
  | "BAD_IMAGE"
  | "INVITATION_FAILED"
  | "REALM_UPLOAD_QUOTA"
  | "EXPECTATION_MISMATCH"
  | "CANNOT_ADMINISTER_CHANNEL"
  | "CHANNEL_ALREADY_EXISTS"
  | "STREAM_WILDCARD_MENTION_NOT_ALLOWED"
  | "TOPIC_WILDCARD_MENTION_NOT_ALLOWED"
  // Transport failures, raised by the HTTP layer (src/http/errors.ts) and mapped in
  // the same registry (src/http/error-map.ts) as every engine error.
  | "UNKNOWN_ROUTE"
  | "METHOD_NOT_ALLOWED"
  | "BODY_TOO_LARGE"
  | "MALFORMED_BODY"
  | "UNSUPPORTED_MEDIA_TYPE"
  // The image proxy's upstream failed (src/http/endpoints/external-content).
  | "EXTERNAL_IMAGE_UNAVAILABLE"
  | "SERVER_BUSY"
  // Incoming webhooks (src/http/webhooks): their API key parameter and the services' payloads.
  | "INVALID_API_KEY"
  // Bot-only endpoints (/bot_storage) called by a person.
  | "PERMISSION_DENIED"
  | "UNSUPPORTED_WEBHOOK_EVENT_TYPE"
  | "MISSING_HTTP_EVENT_HEADER"
  // The web client's session requests (src/http/session.ts).
  | "CSRF_FAILED";

export type ErrorData = Readonly<
  Record<
    string,
    | string
    | number
    | boolean
    | null
    | readonly (string | number)[]
    | readonly Readonly<Record<string, unknown>>[]
    | readonly (readonly (string | boolean)[])[]
    /** Messages by field (Zulip's ValidationFailureError `errors`). */
    | Readonly<Record<string, readonly string[]>>
  >
>;

/** How much of a caller's input an error message may quote. */
export const MAX_ECHO_CHARS = 100;
/** Backstop for a whole message or data string, whatever was interpolated into it. */
const MAX_ERROR_TEXT_CHARS = 1000;

/**
 * `text`, cut to `max` UTF-16 units (never inside a surrogate pair) with "…" when cut.
 * Every error that quotes client input quotes it through this: an error must not
 * echo a megabyte back to the client that sent it.
 */
export function clip(text: string, max: number = MAX_ECHO_CHARS): string {
  if (text.length <= max) return text;
  let end = max;
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end--;
  return `${text.slice(0, end)}…`;
}

function clipData(data: ErrorData): ErrorData {
  let out: Record<string, ErrorData[string]> | null = null;
  for (const [k, v] of Object.entries(data)) {
    if (typeof v === "string" && v.length > MAX_ERROR_TEXT_CHARS)
      (out ??= { ...data })[k] = clip(v, MAX_ERROR_TEXT_CHARS);
  }
  return out ?? data;
}

/** Base class: a caller-visible failure. Nothing has been changed when it is thrown. */
export class EngineError extends Error {
  readonly code: ErrorCode;
  readonly data: ErrorData;
  constructor(code: ErrorCode, message: string, data: ErrorData = {}, options?: { cause?: unknown }) {
    super(clip(message, MAX_ERROR_TEXT_CHARS), options);
    this.name = new.target.name;
    this.code = code;
    this.data = clipData(data);
  }
}

/** Invalid input that is not one of the more specific cases (Zulip's JsonableError). */
export class BadRequestError extends EngineError {
  constructor(message: string, data: ErrorData = {}) {
    super("BAD_REQUEST", message, data);
  }
}

/** The old password of a password change does not match (Zulip's "Wrong password!"). */
export class WrongPasswordError extends BadRequestError {
  constructor() {
    super("Wrong password!");
  }
}

/** A required parameter was not given. */
export class MissingArgumentError extends EngineError {
  constructor(varName: string) {
    super("REQUEST_VARIABLE_MISSING", `Missing '${varName}' argument`, { var_name: varName });
  }
}

/** A parameter was sent under two of its names (Zulip's RequestConfusingParamsError). */
export class ConfusingParamsError extends EngineError {
  constructor(varName1: string, varName2: string) {
    super("REQUEST_CONFUSING_VAR", `Can't decide between '${varName1}' and '${varName2}' arguments`, {
      var_name1: varName1,
      var_name2: varName2,
    });
  }
}

/** A narrow that cannot be evaluated: unknown operator/operand or impossible combination. */
export class BadNarrowError extends EngineError {
  /** `desc` is Zulip's extra field: the part after "Invalid narrow operator: ". */
  constructor(rawDesc: string, kind: "operator" | "combination" = "operator") {
    const desc = clip(rawDesc, MAX_ECHO_CHARS * 2);
    super(
      "BAD_NARROW",
      kind === "operator" ? `Invalid narrow operator: ${desc}` : `Invalid narrow operator combination: ${desc}`,
      { desc },
    );
  }
}

/** A channel named by ID or by name does not exist (or is not visible to the caller). */
export class ChannelNotFoundError extends EngineError {
  constructor(ref: { id: number } | { name: string }) {
    if ("id" in ref)
      super("STREAM_DOES_NOT_EXIST", `Channel with ID '${ref.id}' does not exist`, { stream_id: ref.id });
    else super("STREAM_DOES_NOT_EXIST", `Channel '${clip(ref.name)}' does not exist`, { stream: clip(ref.name) });
  }
}

/** Authentication failures. The HTTP layer reports them all as 401 UNAUTHORIZED, like Zulip's Basic-auth path. */
export class AuthError extends EngineError {
  constructor(message: string) {
    super("UNAUTHORIZED", message);
  }
}

/**
 * A login (password or JWT) refused: Zulip's AuthenticationFailedError,
 * UserDeactivatedError and RealmDeactivatedError, which keep their own codes on the
 * wire because no Basic-auth decorator converts them on the login endpoints.
 */
export class LoginError extends EngineError {
  constructor(kind: "failed" | "user_deactivated" | "realm_deactivated") {
    if (kind === "failed") super("AUTHENTICATION_FAILED", "Your username or password is incorrect");
    else if (kind === "user_deactivated") super("USER_DEACTIVATED", "Account is deactivated");
    else super("REALM_DEACTIVATED", "This organization has been deactivated");
  }
}

/** The Host names no realm. */
export class NoSuchRealmError extends EngineError {
  constructor() {
    super("NONEXISTENT_SUBDOMAIN", "Invalid subdomain");
  }
}

/** The caller may not do this (Zulip answers 400 BAD_REQUEST for most of these; a few are 403). */
export class PermissionDeniedError extends EngineError {
  constructor(message: string, code: "BAD_REQUEST" | "ACCESS_DENIED" | "UNAUTHORIZED_PRINCIPAL" = "BAD_REQUEST") {
    super(code, message);
  }
}

/** A bot-only endpoint (/bot_storage) called by a person (Zulip's feature level 494). */
export class BotRequiredError extends EngineError {
  constructor() {
    super("PERMISSION_DENIED", "Must be a bot user");
  }
}

/** Zulip's OrganizationOwnerRequiredError. */
export class OrganizationOwnerRequiredError extends EngineError {
  constructor() {
    super("UNAUTHORIZED_PRINCIPAL", "Must be an organization owner");
  }
}

/** Zulip's IncompatibleParametersError: parameters that may not be given together. */
export class IncompatibleParametersError extends EngineError {
  constructor(parameters: readonly string[]) {
    const list = parameters.join(", ");
    super("BAD_REQUEST", `Unsupported parameter combination: ${list}`, { parameters: list });
  }
}

/**
 * Zulip's CannotAdministerChannelError: the caller may see the channel's content but
 * not administer it (callers who may not see it get "Invalid channel ID").
 */
export class CannotAdministerChannelError extends EngineError {
  constructor() {
    super("CANNOT_ADMINISTER_CHANNEL", "You do not have permission to administer this channel.");
  }
}

/** Zulip's ChannelExistsError (a rename or creation to a name in use). */
export class ChannelExistsError extends EngineError {
  constructor(name: string) {
    super("CHANNEL_ALREADY_EXISTS", `Channel '${clip(name)}' already exists`, { channel_name: clip(name) });
  }
}

/**
 * Zulip's StreamWildcardMentionNotAllowedError / TopicWildcardMentionNotAllowedError:
 * a wildcard mention in a large channel or topic by someone outside the realm's
 * can_mention_many_users_group.
 */
export class WildcardMentionNotAllowedError extends EngineError {
  constructor(kind: "stream" | "topic") {
    super(
      kind === "stream" ? "STREAM_WILDCARD_MENTION_NOT_ALLOWED" : "TOPIC_WILDCARD_MENTION_NOT_ALLOWED",
      kind === "stream"
        ? "You do not have permission to use channel wildcard mentions in this channel."
        : "You do not have permission to use topic wildcard mentions in this topic.",
    );
  }
}

/** A resource addressed by a path parameter does not exist (404 in Zulip). */
export class NotFoundError extends EngineError {
  constructor(message: string) {
    super("NOT_FOUND", message);
  }
}

/** Too many requests; retryAfter in seconds. */
export class RateLimitError extends EngineError {
  readonly retryAfter: number;
  constructor(retryAfter: number, message = "API usage exceeded rate limit") {
    super("RATE_LIMIT_HIT", message, { "retry-after": retryAfter });
    this.retryAfter = retryAfter;
  }
}

/**
 * Password hashing is at capacity (accounts/hash-pool.ts): the request was refused
 * before its password was looked at, so it says nothing about the credentials; the
 * client may retry after `retryAfter` seconds. Same wire code as a rate limit, which
 * Zulip clients already back off from.
 */
export class HashingBusyError extends RateLimitError {
  constructor(retryAfter: number) {
    super(retryAfter, "The server is busy checking passwords; try again in a moment.");
  }
}

/** Storage corruption or an invariant broken inside the engine: a 500, never echoed to clients. */
export class StorageError extends EngineError {
  constructor(message: string, cause?: unknown) {
    super("INTERNAL_SERVER_ERROR", message, {}, { cause });
  }
}

/**
 * A write (or an event, or a presence ping held in memory) asked of a follower store
 * (openFollower): it only reads the data directory its writer writes. A bug in the
 * server's routing, so a 500 like StorageError; the message names the operation.
 */
export class FollowerWriteError extends StorageError {
  constructor(operation: string) {
    super(`this store is a follower: it reads only, and ${operation} must go to the writer of its data directory`);
  }
}

/**
 * The data directory is held by another live process (or by another Store in this
 * one), or its lock file cannot be judged. Raised by openStore, never by a request.
 */
export class DataDirectoryLockedError extends EngineError {
  constructor(message: string, holder: { pid: number; command: string; host: string; since: number } | null) {
    super(
      "DATA_DIRECTORY_LOCKED",
      message,
      holder === null ? {} : { pid: holder.pid, command: holder.command, host: holder.host, since: holder.since },
    );
  }
}

/** A user group still used as a subgroup or in a setting (Zulip's CannotDeactivateGroupInUseError). */
export class GroupInUseError extends EngineError {
  constructor(objections: readonly Readonly<Record<string, unknown>>[]) {
    super("CANNOT_DEACTIVATE_GROUP_IN_USE", "Cannot deactivate user group in use.", { objections });
  }
}

/**
 * DELETE /users/me by the realm's only active user or only owner (Zulip's
 * CannotDeactivateLastUserError, with its `is_last_owner` and `entity` fields).
 */
export class CannotDeactivateLastUserError extends EngineError {
  constructor(isLastOwner: boolean) {
    const entity = isLastOwner ? "organization owner" : "user";
    super("CANNOT_DEACTIVATE_LAST_USER", `Cannot deactivate the only ${entity}.`, {
      is_last_owner: isLastOwner,
      entity,
    });
  }
}

/** Mobile push needs a bouncer (PUSH_NOTIFICATION_BOUNCER_URL); Zulip's PushServiceNotConfiguredError. */
export class PushServiceNotConfiguredError extends EngineError {
  constructor() {
    super("PUSH_SERVICE_NOT_CONFIGURED", "Server is not configured to use push notification service.");
  }
}

/** A legacy push token the caller has not registered (Zulip's InvalidPushDeviceTokenError). */
export class InvalidPushDeviceTokenError extends EngineError {
  constructor() {
    super("INVALID_PUSH_DEVICE_TOKEN", "Device not recognized");
  }
}

/** The bouncer does not know a legacy token (Zulip's InvalidRemotePushDeviceTokenError). */
export class InvalidRemotePushDeviceTokenError extends EngineError {
  constructor() {
    super("INVALID_REMOTE_PUSH_DEVICE_TOKEN", "Device not recognized by the push bouncer");
  }
}

/** No device of the user is registered with the bouncer (Zulip's NoActivePushDeviceError). */
export class NoActivePushDeviceError extends EngineError {
  constructor() {
    super("NO_ACTIVE_PUSH_DEVICE", "No active registered push device");
  }
}

/** The push bouncer could not take a request the client waits on (the E2EE test notification). */
export class PushBouncerError extends EngineError {
  constructor(
    code: "ADMIN_ACTION_REQUIRED" | "FAILED_TO_CONNECT_BOUNCER" | "INTERNAL_SERVER_ERROR_ON_BOUNCER",
    options?: { cause?: unknown },
  ) {
    const messages = {
      ADMIN_ACTION_REQUIRED:
        "Push notification configuration issue on server, contact the server administrator or retry later.",
      FAILED_TO_CONNECT_BOUNCER: "Network error while connecting to Zulip push notification service.",
      INTERNAL_SERVER_ERROR_ON_BOUNCER: "Internal server error on Zulip push notification service, retry later.",
    } as const;
    super(code, messages[code], {}, options);
  }
}

/** An uploaded image that cannot be used (Zulip's BadImageError). */
export class BadImageError extends EngineError {
  constructor(message: string) {
    super("BAD_IMAGE", message);
  }
}

/** One refused invitee: [address, reason, whether the address belongs to a deactivated account] (Zulip's triples). */
export type InviteeError = readonly [email: string, reason: string, deactivated: boolean];

/**
 * Some or all invitations were not sent (Zulip's InvitationError). With
 * sentInvitations the others were sent, and the write that sent them stands.
 */
export class InvitationError extends EngineError {
  constructor(
    message: string,
    errors: readonly InviteeError[],
    flags: { sentInvitations: boolean; dailyLimitReached?: boolean },
  ) {
    super("INVITATION_FAILED", message, {
      errors: errors.map(([email, reason, deactivated]) => [clip(email), reason, deactivated]),
      sent_invitations: flags.sentInvitations,
      license_limit_reached: false,
      daily_limit_reached: flags.dailyLimitReached ?? false,
    });
  }
}

/**
 * A confirmation link (invitation or email change) that cannot be used: unknown,
 * expired, revoked or already used. Only the HTML pages raise it; they render the reason.
 */
export class InvalidLinkError extends EngineError {
  readonly reason: "unknown" | "expired" | "revoked" | "used";
  constructor(reason: "unknown" | "expired" | "revoked" | "used") {
    const text = {
      unknown: "This link is not valid.",
      expired: "This link has expired.",
      revoked: "This invitation has been revoked.",
      used: "This link has already been used.",
    }[reason];
    super("NOT_FOUND", text);
    this.reason = reason;
  }
}

/** An upload that would take the realm past its upload quota (Zulip's RealmUploadQuotaError). */
export class UploadQuotaError extends EngineError {
  constructor() {
    super("REALM_UPLOAD_QUOTA", "Upload would exceed your organization's upload quota.");
  }
}

/**
 * A request made against state the client no longer sees (Zulip's
 * PreviousMessageContentMismatchedError: an edit whose prev_content_sha256 is not the
 * stored content's).
 */
export class ExpectationMismatchError extends EngineError {
  constructor(fieldName: string) {
    super("EXPECTATION_MISMATCH", `'${fieldName}' value does not match the expected value.`, { field_name: fieldName });
  }
}

/**
 * A change_all move of a topic some of whose messages are past the caller's time limit
 * (Zulip's MessageMoveError): the client may retry with the newest ones only.
 */
export class MessageMoveError extends EngineError {
  constructor(firstMessageIdAllowedToMove: number, totalMessagesInTopic: number, totalMessagesAllowedToMove: number) {
    super(
      "MOVE_MESSAGES_TIME_LIMIT_EXCEEDED",
      `You only have permission to move the ${totalMessagesAllowedToMove}/${totalMessagesInTopic} most recent messages in this topic.`,
      {
        first_message_id_allowed_to_move: firstMessageIdAllowedToMove,
        total_messages_in_topic: totalMessagesInTopic,
        total_messages_allowed_to_move: totalMessagesAllowedToMove,
      },
    );
  }
}
