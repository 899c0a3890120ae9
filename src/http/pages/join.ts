/**
 * @module http/pages/join
 * GET/POST /join/{key}/: where an invitation link leads. GET shows a form (full name,
 * password, and the address for reusable links); POST, within the join limits
 * (join-limits.ts), checks the whole form first (link, address, name, password
 * strength), and only then hashes the password (on the bounded hash pool) and creates
 * the account (the engine's acceptInvite re-checks the link inside its write), then
 * shows the API key, the email and the server URL. Refusals re-render the form with
 * the reason (400); limits and a full hash pool answer 429 with Retry-After.
 */
import {
  BadRequestError,
  hashPassword,
  HashingBusyError,
  InvalidLinkError,
  PASSWORD_MAX_LENGTH,
  type Invite,
  type Realm,
  type ScryptCost,
  type Store,
} from "../../engine/index.js";
import type { Reply } from "../respond.js";
import { escapeHtml, page } from "./html.js";
import { JoinGuard } from "./join-limits.js";
import { invalidLinkPage } from "./link-errors.js";

interface JoinContext {
  readonly store: Store;
  readonly realm: Realm;
  readonly realmUrl: string;
  readonly key: string;
}

/** What a submission needs beyond the page's context: who sends it, the limits, the hash cost. */
export interface JoinSubmitContext extends JoinContext {
  readonly remoteAddress: string;
  readonly guard: JoinGuard;
  readonly cost: ScryptCost;
}

function form(
  ctx: JoinContext,
  invite: Invite,
  values: { fullName: string; email: string },
  error: string | null,
): string {
  const who =
    invite.kind === "email"
      ? `<p>You were invited to join <strong>${escapeHtml(ctx.realm.name)}</strong> as <strong>${escapeHtml(invite.email ?? "")}</strong>.</p>`
      : `<p>You were invited to join <strong>${escapeHtml(ctx.realm.name)}</strong>.</p>`;
  const email =
    invite.kind === "multiuse"
      ? `<label for="email">Email address</label><input id="email" name="email" type="email" required maxlength="254" autocomplete="email" value="${escapeHtml(values.email)}">`
      : "";
  return `${who}
${error === null ? "" : `<p class="error" role="alert">${escapeHtml(error)}</p>`}
<form method="post" action="/join/${escapeHtml(ctx.key)}/">
${email}
<label for="full_name">Full name</label><input id="full_name" name="full_name" required maxlength="100" autocomplete="name" value="${escapeHtml(values.fullName)}">
<label for="password">Password</label><input id="password" name="password" type="password" required maxlength="${PASSWORD_MAX_LENGTH}" autocomplete="new-password">
<button type="submit">Create account</button>
</form>`;
}

function title(realm: Realm): string {
  return `Join ${realm.name}`;
}

export function joinForm(ctx: JoinContext): Reply {
  try {
    const invite = ctx.store.usableInvite(ctx.realm.id, ctx.key);
    return page(200, title(ctx.realm), form(ctx, invite, { fullName: "", email: "" }, null));
  } catch (error) {
    if (error instanceof InvalidLinkError) return invalidLinkPage(error);
    throw error;
  }
}

/** 429 with Retry-After (whole seconds, for browsers) and what to do. */
function tryLaterPage(realm: Realm, seconds: number, reason: string): Reply {
  const wait = Math.max(1, Math.ceil(seconds));
  const when = wait < 120 ? `${wait} seconds` : `${Math.ceil(wait / 60)} minutes`;
  const body = `<p class="error" role="alert">${escapeHtml(reason)} Please try again in ${when}.</p>`;
  return page(429, title(realm), body, [["Retry-After", String(wait)]]);
}

export async function joinSubmit(ctx: JoinSubmitContext, fields: ReadonlyMap<string, string>): Promise<Reply> {
  const addressWait = ctx.guard.admitSubmission(ctx.remoteAddress);
  if (addressWait > 0) return tryLaterPage(ctx.realm, addressWait, "Too many sign-up attempts from your network.");
  let invite: Invite;
  try {
    invite = ctx.store.usableInvite(ctx.realm.id, ctx.key);
  } catch (error) {
    if (error instanceof InvalidLinkError) return invalidLinkPage(error);
    throw error;
  }
  const values = { fullName: fields.get("full_name") ?? "", email: fields.get("email") ?? "" };
  const password = fields.get("password") ?? "";
  const link = JoinGuard.link(ctx.realm.id, ctx.key);
  try {
    const details = { realmId: ctx.realm.id, key: ctx.key, fullName: values.fullName, email: values.email };
    ctx.store.checkJoinForm({ ...details, password });
    const linkWait = ctx.guard.admitAccount(link);
    if (linkWait > 0) return tryLaterPage(ctx.realm, linkWait, "Too many accounts are being created with this link.");
    const hashed = await hashPassword(password, ctx.cost).catch((error: unknown) => {
      if (error instanceof HashingBusyError) return error;
      throw error;
    });
    if (hashed instanceof HashingBusyError) {
      ctx.guard.refundAccount(link);
      return tryLaterPage(ctx.realm, hashed.retryAfter, "The server is busy.");
    }
    const user = ctx.store.acceptInvite({ ...details, password: hashed });
    return page(
      200,
      `Welcome to ${ctx.realm.name}`,
      `<p>Your account is ready. Use these with any Zulip client (the mobile and terminal apps, or the API):</p>
<dl>
<dt>Server URL</dt><dd><code id="server-url">${escapeHtml(ctx.realmUrl)}</code></dd>
<dt>Email</dt><dd><code id="email">${escapeHtml(user.email)}</code></dd>
<dt>API key</dt><dd><code id="api-key">${escapeHtml(user.apiKey)}</code></dd>
</dl>
<p>Keep the API key secret: it works like your password.</p>`,
    );
  } catch (error) {
    // The link may have been used or revoked while the password was being hashed.
    if (error instanceof InvalidLinkError) return invalidLinkPage(error);
    if (error instanceof BadRequestError) return page(400, title(ctx.realm), form(ctx, invite, values, error.message));
    throw error;
  }
}
