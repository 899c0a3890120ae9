/**
 * @module actions/realm-deactivation
 * POST /realm/deactivate (Zulip's deactivate_realm view and do_deactivate_realm): an
 * organization owner deactivates their organization. Authentication reads the realm's
 * flag, so every API key of the realm is refused from the commit on; the realtime layer
 * collects the realm's event queues once the `realm deactivated` event reached them.
 * Nothing is deleted: parley keeps a deactivated organization's data whatever delay was
 * asked, and the operator can reactivate it (`parley realm reactivate`).
 */
import { BadRequestError, PermissionDeniedError } from "../errors.js";
import { enqueueMailInTxn } from "../mail/outbox.js";
import type { StoreState } from "../state.js";
import { ROLE, type Realm } from "../types.js";
import { setRealmDeactivated } from "./realms.js";
import { requireActiveUser } from "./users.js";

/**
 * Zulip's MIN_DEACTIVATED_REALM_DELETION_DAYS default: a delay shorter than this is
 * refused, so that a stolen owner account cannot have an organization deleted at once.
 */
export const MIN_DEACTIVATED_REALM_DELETION_DAYS = 14;
/** Zulip's MAX_DEACTIVATED_REALM_DELETION_DAYS default: no upper bound (null: never delete). */
export const MAX_DEACTIVATED_REALM_DELETION_DAYS: number | null = null;

export interface DeactivateRealmInput {
  /** Days before the data may be deleted; null: never. Validated as Zulip does, then kept only as a fact. */
  readonly deletionDelayDays: number | null;
  /** The organization's URL, for the owners' mail. */
  readonly realmUrl: string;
}

export function deactivateRealmByOwner(state: StoreState, actorId: number, input: DeactivateRealmInput): void {
  const actor = requireActiveUser(state, actorId);
  if (actor.role !== ROLE.OWNER)
    throw new PermissionDeniedError("Must be an organization owner", "UNAUTHORIZED_PRINCIPAL");
  checkDeletionDelay(input.deletionDelayDays);
  const realm = state.realms.get(actor.realmId)!;
  setRealmDeactivated(state, realm.id, true, (ctx) => {
    // Zulip mails the owners (email_owners=True for an owner's request).
    const owners = [...state.usersOfRealm(realm.id)]
      .map((id) => state.users.get(id))
      .filter((u) => u !== undefined && u.isActive && !u.isBot && u.role === ROLE.OWNER)
      .map((u) => u!.deliveryEmail);
    if (owners.length > 0) enqueueMailInTxn(state, ctx, deactivationMail(realm, owners, input.realmUrl));
  });
}

function checkDeletionDelay(days: number | null): void {
  const max = MAX_DEACTIVATED_REALM_DELETION_DAYS;
  if (max !== null && (days === null || days > max))
    throw new BadRequestError(`Data deletion time must be at most ${max} days in the future.`);
  const min = MIN_DEACTIVATED_REALM_DELETION_DAYS;
  if (days !== null && days < min)
    throw new BadRequestError(`Data deletion time must be at least ${min} days in the future.`);
}

function deactivationMail(realm: Realm, to: string[], realmUrl: string) {
  return {
    to,
    subject: `Your organization, ${realm.name}, has been deactivated`,
    text: [
      "Hi,",
      "",
      `Your Zulip organization ${realm.name} (${realmUrl}) has been deactivated by an organization owner.`,
      "Its data is kept: the server's operator can reactivate it.",
    ].join("\n"),
  };
}
