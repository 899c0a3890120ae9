/**
 * @module http/jwt
 * The email a realm's single sign-on vouches for in a JSON Web Token (Zulip's
 * get_email_and_realm_from_jwt_authentication_request): verified with jose against
 * the realm's JWT_AUTH_KEYS entry (by subdomain), its algorithms only. Every failure
 * is Zulip's 400 BAD_REQUEST with its message; whatever jose refuses (signature,
 * algorithm, `alg: none`, `exp`, `nbf`, malformed tokens) is "Bad JSON web token".
 * Keys: src/config/jwt-keys.ts (a shared secret for HS*, a PEM public key for the
 * others, checked against the algorithms when the server starts).
 */
import { BadRequestError } from "../engine/index.js";
import { jwtKeyResolver, type ServerConfig } from "../config/index.js";

const BAD_TOKEN = "Bad JSON web token";

/** The token's `email` claim, once the token is verified for the realm with subdomain `subdomain`. */
export async function emailFromJwt(config: ServerConfig, subdomain: string, token: string): Promise<string> {
  const entry = config.JWT_AUTH_KEYS[subdomain];
  if (entry === undefined) throw new BadRequestError("JWT authentication is not enabled for this organization");
  if (token === "") throw new BadRequestError("No JSON web token passed in request");
  // Loaded on the first JWT login: most servers never see one, and startup stays lean.
  const { jwtVerify } = await import("jose");
  let payload: Record<string, unknown>;
  try {
    ({ payload } = await jwtVerify(token, jwtKeyResolver(entry.key), { algorithms: [...entry.algorithms] }));
  } catch {
    throw new BadRequestError(BAD_TOKEN);
  }
  const email = payload["email"];
  // Zulip reads a missing or null claim as none; any other non-string names no account.
  if (email === undefined || email === null) throw new BadRequestError("No email specified in JSON web token claims");
  return typeof email === "string" ? email : "";
}
