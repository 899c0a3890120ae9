/**
 * @module http/endpoints/settings/update-settings
 * PATCH /settings — https://zulip.com/api/update-settings
 * Every personal setting by its Zulip name and wire kind, plus full_name, timezone
 * and an administrator's target_users. The engine checks the values (allowed
 * choices, languages, sounds, time zones, names) and who may do what; a new `email`
 * is mailed a confirmation link (src/http/pages/confirm-email.ts) and changes
 * nothing until it is opened, at most as often as Zulip's email_change_by_user rule
 * allows (429 RATE_LIMIT_HIT beyond). A password change (old_password + new_password) is
 * limited like a login: Zulip checks the old password through its rate-limited
 * authenticate(), so too many attempts give "You're making too many attempts!".
 */
import { z } from "zod";
import { RateLimitError } from "../../../engine/index.js";
import {
  BadRequestError,
  PERSONAL_SETTING_NAMES,
  WrongPasswordError,
  settingKind,
  type SettingChanges,
  type SettingName,
} from "../../../engine/index.js";
import { LoginGuard } from "../../auth.js";
import { defineEndpoint } from "../../endpoint.js";
import { compoundRef, j, p, type Param } from "../../params.js";
import { realmUrl } from "../../realm-url.js";

/** A parameter per setting, parsed by its kind (Zulip's Json[bool], Json[int] or str). */
export function settingParams(names: readonly SettingName[]): Record<SettingName, Param> {
  const out: Partial<Record<SettingName, Param>> = {};
  for (const name of names) {
    const kind = settingKind(name);
    out[name] = (kind === "bool" ? p.bool() : kind === "int" ? p.int() : p.str()).optional();
  }
  return out as Record<SettingName, Param>;
}

/** Setting names that read like references to the sweep's check (test/support/reference-probes.ts). */
export const SETTING_NOT_REFS = { demote_inactive_streams: "a setting's value (1-3), not a channel" } as const;

/** The settings a request named, with their parsed values. */
export function namedSettings(names: readonly SettingName[], input: Readonly<Record<string, unknown>>): SettingChanges {
  const out: Record<string, unknown> = {};
  for (const name of names) if (input[name] !== undefined) out[name] = input[name];
  return out as SettingChanges;
}

const targetUsers = z.strictObject({
  user_ids: j.intList().optional(),
  group_ids: j.intList().optional(),
  skip_if_already_edited: z.boolean(),
});

const targets = (ids: Record<string, unknown>) => JSON.stringify({ ...ids, skip_if_already_edited: false });

const own = {
  full_name: p.str().optional(),
  email: p.str().optional(),
  old_password: p.str().optional(),
  new_password: p.str().optional(),
  timezone: p.str().optional(),
  target_users: compoundRef(p.json(targetUsers), ["user", "group"]).optional(),
};

export default defineEndpoint({
  method: "PATCH",
  path: "/settings",
  auth: "user",
  params: { ...settingParams(PERSONAL_SETTING_NAMES), ...own },
  testing: {
    notRefs: {
      ...SETTING_NOT_REFS,
      email: "the caller's own new address: addresses are unique per realm, so no other realm is consulted",
    },
    probes: {
      target_users: [
        { names: "user", label: "user_ids", encode: (id) => targets({ user_ids: [id] }) },
        { names: "group", label: "group_ids", encode: (id) => targets({ group_ids: [id] }) },
      ],
    },
    sweepBases: [{ params: { color_scheme: "2" } }],
  },
  async handler(ctx, input) {
    const values = input as Readonly<Record<string, unknown>>;
    const target = input.target_users;
    const admitEmailChange = (): void => {
      const decision = ctx.server.emailChanges?.take(ctx.user.id);
      if (decision !== undefined && !decision.allowed) throw new RateLimitError(decision.retryAfter);
    };
    const change = () =>
      ctx.store.updateSettingsWithPassword(
        ctx.user.id,
        {
          settings: namedSettings(PERSONAL_SETTING_NAMES, values),
          ...(input.full_name !== undefined ? { fullName: input.full_name } : {}),
          ...(input.timezone !== undefined ? { timezone: input.timezone } : {}),
          ...(input.email !== undefined
            ? { email: input.email, realmUrl: realmUrl(ctx.server, ctx.realm), admitEmailChange }
            : {}),
          ...(input.old_password !== undefined ? { oldPassword: input.old_password } : {}),
          ...(input.new_password !== undefined ? { newPassword: input.new_password } : {}),
          ...(target !== undefined
            ? {
                targetUsers: {
                  userIds: target.user_ids ?? [],
                  groupIds: target.group_ids ?? [],
                  skipIfAlreadyEdited: target.skip_if_already_edited,
                },
              }
            : {}),
        },
        ctx.server.passwordHashCost,
      );
    if (target !== undefined || input.new_password === undefined || input.new_password === "") {
      await change();
      return {};
    }
    const account = LoginGuard.account(ctx.realm.id, ctx.user.deliveryEmail);
    const wrong = (error: unknown) => error instanceof WrongPasswordError;
    const outcome = await ctx.server.logins.attempt(account, null, change, wrong);
    if ("waitSeconds" in outcome)
      throw new BadRequestError(
        `You're making too many attempts! Try again in ${Math.ceil(outcome.waitSeconds)} seconds.`,
      );
    return {};
  },
});
