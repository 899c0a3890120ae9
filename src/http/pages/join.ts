/**
 * @module http/pages/join
 * GET/POST /join/{key}/: where an invitation link leads. GET shows a form (full name,
 * password, and the address for reusable links); POST checks it, hashes the
 * password off the event loop, and creates the account (the engine's acceptInvite
 * re-checks the link inside its write), then shows the API key, the email and the
 * server URL. Refusals re-render the form with the reason (400).
 */
import { BadRequestError, checkPasswordPolicy, hashPassword, InvalidLinkError, PASSWORD_MAX_LENGTH, type Invite, type Realm, type Store } from "../../engine/index.js";
import type { Reply } from "../respond.js";
import { escapeHtml, page } from "./html.js";
import { invalidLinkPage } from "./link-errors.js";

interface JoinContext {
  readonly store: Store;
  readonly realm: Realm;
  readonly realmUrl: string;
  readonly key: string;
}

function form(ctx: JoinContext, invite: Invite, values: { fullName: string; email: string }, error: string | null): string {
  const who = invite.kind === "email" ? `<p>You were invited to join <strong>${escapeHtml(ctx.realm.name)}</strong> as <strong>${escapeHtml(invite.email ?? "")}</strong>.</p>` : `<p>You were invited to join <strong>${escapeHtml(ctx.realm.name)}</strong>.</p>`;
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

export async function joinSubmit(ctx: JoinContext, fields: ReadonlyMap<string, string>): Promise<Reply> {
  let invite: Invite;
  try {
    invite = ctx.store.usableInvite(ctx.realm.id, ctx.key);
  } catch (error) {
    if (error instanceof InvalidLinkError) return invalidLinkPage(error);
    throw error;
  }
  const values = { fullName: fields.get("full_name") ?? "", email: fields.get("email") ?? "" };
  const password = fields.get("password") ?? "";
  try {
    checkPasswordPolicy(password, { email: values.email || (invite.email ?? ""), fullName: values.fullName });
    const hashed = await hashPassword(password);
    const user = ctx.store.acceptInvite({ realmId: ctx.realm.id, key: ctx.key, fullName: values.fullName, email: values.email, password: hashed });
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
