/**
 * @module http/jwt
 * The email a realm's single sign-on vouches for in a JSON Web Token (Zulip's
 * get_email_and_realm_from_jwt_authentication_request): verified with jose against
 * the realm's JWT_AUTH_KEYS entry (by subdomain), its algorithms only. Every failure
 * is Zulip's 400 BAD_REQUEST with its message; whatever jose refuses (signature,
 * algorithm, `alg: none`, `exp`, `nbf`, malformed tokens) is "Bad JSON web token".
 *
 * A shared secret serves the HS* algorithms; a PEM public key the others. A PEM key
 * is never used as an HMAC secret (PyJWT refuses that too), so listing HS256 next to
 * RS256 cannot let a token signed with the public key pass.
 */
import { createPublicKey, createSecretKey, type KeyObject } from "node:crypto";
import type { JWSHeaderParameters } from "jose";
import { BadRequestError } from "../engine/index.js";
import type { ServerConfig } from "../config/index.js";

const BAD_TOKEN = "Bad JSON web token";

function keyFor(secret: string): (header: JWSHeaderParameters) => KeyObject {
  const isPem = secret.trimStart().startsWith("-----BEGIN");
  return (header) => {
    if (header.alg?.startsWith("HS")) {
      if (isPem) throw new Error("a PEM key is not an HMAC secret");
      return createSecretKey(Buffer.from(secret, "utf8"));
    }
    return createPublicKey(secret);
  };
}

/** The token's `email` claim, once the token is verified for the realm with subdomain `subdomain`. */
export async function emailFromJwt(config: ServerConfig, subdomain: string, token: string): Promise<string> {
  const entry = config.JWT_AUTH_KEYS[subdomain];
  if (entry === undefined) throw new BadRequestError("JWT authentication is not enabled for this organization");
  if (token === "") throw new BadRequestError("No JSON web token passed in request");
  // Loaded on the first JWT login: most servers never see one, and startup stays lean.
  const { jwtVerify } = await import("jose");
  let payload: Record<string, unknown>;
  try {
    ({ payload } = await jwtVerify(token, keyFor(entry.key), { algorithms: [...entry.algorithms] }));
  } catch {
    throw new BadRequestError(BAD_TOKEN);
  }
  const email = payload["email"];
  // Zulip reads a missing or null claim as none; any other non-string names no account.
  if (email === undefined || email === null) throw new BadRequestError("No email specified in JSON web token claims");
  return typeof email === "string" ? email : "";
}
