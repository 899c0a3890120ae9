/**
 * @module http/pages/confirm-email
 * GET /accounts/confirm_new_email/{key}/: opening the link mailed by PATCH /settings
 * `email` applies the change (as Zulip's confirm_email_change does on GET).
 */
import { BadRequestError, InvalidLinkError, type Realm, type Store } from "../../engine/index.js";
import type { Reply } from "../respond.js";
import { escapeHtml, page } from "./html.js";
import { invalidLinkPage } from "./link-errors.js";

export function confirmEmailChange(store: Store, realm: Realm, realmUrl: string, key: string): Reply {
  try {
    const user = store.confirmEmailChange(realm.id, key, realmUrl);
    return page(
      200,
      "Email address changed",
      `<p>The email address of your account on ${escapeHtml(realm.name)} is now <strong id="new-email">${escapeHtml(user.deliveryEmail)}</strong>.</p>`,
    );
  } catch (error) {
    if (error instanceof InvalidLinkError) return invalidLinkPage(error);
    if (error instanceof BadRequestError)
      return page(400, "Email address not changed", `<p>${escapeHtml(error.message)}</p>`);
    throw error;
  }
}
