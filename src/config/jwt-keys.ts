/**
 * @module config/jwt-keys
 * How a JWT_AUTH_KEYS entry's `key` becomes the key jose verifies with, and the check
 * at start that every listed algorithm can use it. A shared secret serves the HS*
 * algorithms; a PEM public key the others. A PEM key is never used as an HMAC secret
 * (PyJWT refuses that too), so listing HS256 next to RS256 cannot let a token signed
 * with the public key pass.
 *
 * The check asks jose itself, with the key built exactly as logins build it: a token
 * with a wrong signature is verified for each listed algorithm, and anything but
 * "signature verification failed" means no login with that algorithm could ever pass.
 * A key that cannot be parsed would otherwise only show as "Bad JSON web token" on
 * every login.
 */
import { createPublicKey, createSecretKey, type KeyObject } from "node:crypto";
import type { JWSHeaderParameters } from "jose";
import { ConfigError } from "./load.js";
import type { ServerConfig } from "./schema.js";

function isPem(secret: string): boolean {
  return secret.trimStart().startsWith("-----BEGIN");
}

/** The key for a token's header, for jose's key-resolver argument; throws when this key cannot serve its alg. */
export function jwtKeyResolver(secret: string): (header: JWSHeaderParameters) => KeyObject {
  const pem = isPem(secret);
  return (header) => {
    if (header.alg?.startsWith("HS")) {
      if (pem) throw new Error("a PEM key is not an HMAC secret");
      return createSecretKey(Buffer.from(secret, "utf8"));
    }
    return createPublicKey(secret);
  };
}

/** Why `algorithm` cannot verify with `secret`, or null when it can. */
async function unusableFor(secret: string, algorithm: string): Promise<string | null> {
  const { jwtVerify, errors } = await import("jose");
  if (algorithm.startsWith("HS")) {
    if (isPem(secret))
      return `${algorithm} needs a shared secret, and 'key' is a PEM key (list only the algorithms this key is for)`;
  } else {
    try {
      createPublicKey(secret);
    } catch (error) {
      const detail = error instanceof Error ? error.message : String(error);
      return `${algorithm} needs a PEM public key ("-----BEGIN PUBLIC KEY-----"), and 'key' cannot be parsed as one (${detail})`;
    }
  }
  const part = (value: object) => Buffer.from(JSON.stringify(value)).toString("base64url");
  const token = `${part({ alg: algorithm })}.${part({})}.${Buffer.alloc(16).toString("base64url")}`;
  try {
    await jwtVerify(token, jwtKeyResolver(secret), { algorithms: [algorithm] });
  } catch (error) {
    if (error instanceof errors.JWSSignatureVerificationFailed) return null;
    return `jose cannot verify ${algorithm} tokens with this key (${error instanceof Error ? error.message : String(error)})`;
  }
  return `jose accepted a token with a forged signature for ${algorithm}`;
}

/**
 * Refuses, naming the setting, a JWT_AUTH_KEYS entry whose key no listed algorithm
 * could verify a token with: an unparsable public key, a key of another type or size
 * than the algorithm needs, a PEM key listed for an HMAC algorithm.
 */
export async function checkJwtKeys(config: ServerConfig, source: string): Promise<void> {
  const problems: string[] = [];
  for (const [subdomain, entry] of Object.entries(config.JWT_AUTH_KEYS)) {
    for (const algorithm of entry.algorithms) {
      const problem = await unusableFor(entry.key, algorithm);
      // The root realm's entry is keyed "", which a dotted path would hide.
      const setting = subdomain === "" ? `JWT_AUTH_KEYS[""]` : `JWT_AUTH_KEYS.${subdomain}`;
      if (problem !== null) problems.push(`'${setting}': ${problem}`);
    }
  }
  if (problems.length > 0) throw new ConfigError(`${source}: ${problems.join("; ")}`);
}
