/**
 * @module http/pages/link-errors
 * What a page says when its link cannot be used: unknown (404), or expired, revoked
 * or already used (410 Gone): an explanation, never a stack trace.
 */
import type { InvalidLinkError } from "../../engine/index.js";
import type { Reply } from "../respond.js";
import { escapeHtml, page } from "./html.js";

const ADVICE: Record<InvalidLinkError["reason"], string> = {
  unknown: "Check that you copied the whole link from the mail.",
  expired: "Ask the person who sent it for a new one.",
  revoked: "Ask the organization's administrators for a new one if you still need it.",
  used: "If you created your account with it, you can log in with your email address and password.",
};

export function invalidLinkPage(error: InvalidLinkError): Reply {
  return page(error.reason === "unknown" ? 404 : 410, error.message, `<p>${escapeHtml(ADVICE[error.reason])}</p>`);
}

export function notFoundPage(): Reply {
  return page(404, "Page not found", "<p>There is nothing at this address.</p>");
}
