/**
 * @module mail/templates
 * The plain-text mails the engine enqueues. Links are built from the realm's URL,
 * which the caller (the HTTP layer) knows; the engine does not.
 */
import type { MailInput } from "./outbox.js";

/** Where a confirmation key is used: the join page and the email-change page (served by src/http/pages). */
export function joinLink(realmUrl: string, key: string): string {
  return `${realmUrl}/join/${key}/`;
}

export function emailChangeLink(realmUrl: string, key: string): string {
  return `${realmUrl}/accounts/confirm_new_email/${key}/`;
}

function expiryLine(expiresAt: number | null): string {
  if (expiresAt === null) return "This invitation does not expire.";
  return `This invitation expires on ${new Date(expiresAt * 1000).toUTCString()}.`;
}

export function invitationMail(input: {
  to: string;
  referrerName: string;
  referrerEmail: string;
  realmName: string;
  realmUrl: string;
  key: string;
  expiresAt: number | null;
}): MailInput {
  const link = joinLink(input.realmUrl, input.key);
  return {
    to: [input.to],
    subject: `${input.referrerName} invited you to join ${input.realmName}`,
    fromName: `${input.referrerName} (via parley)`,
    text: [
      "Hi there,",
      "",
      `${input.referrerName} (${input.referrerEmail}) wants you to join them on ${input.realmName}, a team chat at ${input.realmUrl}.`,
      "",
      "To accept, open this link, choose your name and a password:",
      "",
      `    ${link}`,
      "",
      expiryLine(input.expiresAt),
      "",
      "If you were not expecting this invitation, you can ignore this mail.",
    ].join("\n"),
  };
}

export function emailChangeConfirmationMail(input: {
  to: string;
  oldEmail: string;
  realmName: string;
  realmUrl: string;
  key: string;
}): MailInput {
  return {
    to: [input.to],
    subject: `Confirm your new email address for ${input.realmName}`,
    text: [
      "Hi,",
      "",
      `We received a request to change the email address of the account ${input.oldEmail} on ${input.realmName} (${input.realmUrl}) to ${input.to}.`,
      "",
      "To confirm the change, open this link (valid for one day):",
      "",
      `    ${emailChangeLink(input.realmUrl, input.key)}`,
      "",
      "If you did not ask for this, ignore this mail: nothing changes until the link is opened.",
    ].join("\n"),
  };
}

export function emailChangedNoticeMail(input: {
  to: string;
  newEmail: string;
  realmName: string;
  realmUrl: string;
}): MailInput {
  return {
    to: [input.to],
    subject: `Your email address on ${input.realmName} has changed`,
    text: [
      "Hi,",
      "",
      `The email address of your account on ${input.realmName} (${input.realmUrl}) is now ${input.newEmail}.`,
      "",
      "If you did not make this change, contact your organization's administrators at once.",
    ].join("\n"),
  };
}

/** The mail a new account gets when the realm's send_welcome_emails is on (Zulip's account_registered). */
export function welcomeMail(input: { to: string; fullName: string; realmName: string }): MailInput {
  return {
    to: [input.to],
    subject: `Welcome to ${input.realmName}`,
    text: [
      `Hi ${input.fullName},`,
      "",
      `Your account on ${input.realmName} is ready: sign in with ${input.to}.`,
      "",
      "Conversations happen in channels, each split into topics. The Welcome Bot has sent you a first message there.",
    ].join("\n"),
  };
}
