/**
 * @module config/schema
 * The server configuration file: a JSON object whose keys are Zulip's setting names
 * (from its /etc/zulip/settings.py and zproject/default_settings.py) wherever Zulip
 * has one, so an operator's Zulip knowledge carries over. Unknown keys are refused
 * (a typo must not silently fall back to a default). Every key is optional; the
 * defaults are Zulip's.
 */
import { z } from "zod";

/** A host name with an optional port, as Zulip's EXTERNAL_HOST ("chat.example.com", "localhost:9991"). */
const hostWithPort = z
  .string()
  .regex(/^[A-Za-z0-9.-]+(:\d{1,5})?$/, "expected a host name with an optional :port, such as chat.example.com");

/** The JWT algorithms jose verifies with a shared secret or a public key ("none" is never accepted). */
export const JWT_ALGORITHMS = [
  "HS256",
  "HS384",
  "HS512",
  "RS256",
  "RS384",
  "RS512",
  "ES256",
  "ES384",
  "ES512",
  "PS256",
  "PS384",
  "PS512",
  "EdDSA",
] as const;

const jwtKey = z
  .object({
    key: z.string().min(1, "the key must not be empty"),
    algorithms: z.array(z.enum(JWT_ALGORITHMS)).min(1, 'list at least one algorithm, such as ["HS256"]'),
  })
  .strict();

export const CONFIG_SCHEMA = z
  .object({
    /** Host (and port) clients use; realms are its subdomains. Zulip: EXTERNAL_HOST. */
    EXTERNAL_HOST: hostWithPort.optional(),
    /** Per-realm JWT keys, by subdomain ("" for the root realm). Zulip: JWT_AUTH_KEYS. */
    JWT_AUTH_KEYS: z.record(z.string(), jwtKey).default({}),
    /** SMTP server for outgoing mail; without it mail is written to DATA/outbox/. */
    EMAIL_HOST: z.string().min(1).optional(),
    EMAIL_PORT: z.number().int().min(1).max(65535).default(25),
    EMAIL_HOST_USER: z.string().optional(),
    EMAIL_HOST_PASSWORD: z.string().optional(),
    /** STARTTLS after connecting (Zulip's EMAIL_USE_TLS). */
    EMAIL_USE_TLS: z.boolean().default(false),
    /** TLS from the first byte, usually port 465 (Zulip's EMAIL_USE_SSL). */
    EMAIL_USE_SSL: z.boolean().default(false),
    /** Sender of automated mail. Zulip's default is noreply@EXTERNAL_HOST. */
    NOREPLY_EMAIL_ADDRESS: z.string().email().optional(),
    /** Where users are told to ask for help (Zulip's ZULIP_ADMINISTRATOR): zulip-admin@EXTERNAL_HOST when absent. */
    ZULIP_ADMINISTRATOR: z.string().email().optional(),
    /** How long an invitation link stays valid by default (10 days, Zulip's default). */
    INVITATION_LINK_VALIDITY_MINUTES: z.number().int().min(1).default(14_400),
    /** Invitation mails a realm may send per 24 hours (Zulip's INVITES_DEFAULT_REALM_DAILY_MAX). */
    INVITES_DEFAULT_REALM_DAILY_MAX: z.number().int().min(0).default(100),
    /** Base URL of the push notification bouncer; push is off without it. Requests go to its /api/v1/remotes/... */
    PUSH_NOTIFICATION_BOUNCER_URL: z
      .string()
      .url()
      .refine((url) => /^https?:/i.test(url), "expected an http or https URL")
      .optional(),
    /**
     * This server's registration with the bouncer (Zulip keeps it as zulip_org_id in zulip-secrets.conf): the Basic-
     * auth user.
     */
    ZULIP_ORG_ID: z.string().min(1).optional(),
    /** The registration's secret (Zulip's zulip_org_key): the Basic-auth password. */
    ZULIP_ORG_KEY: z.string().min(1).optional(),
    /**
     * Largest custom emoji image one may upload, in MiB (Zulip's default 5). At most 25
     * here: the upload route reads its body whole, with a fixed ceiling.
     */
    MAX_EMOJI_FILE_SIZE_MIB: z.number().int().min(0).max(25).default(5),
    /** Largest avatar image one may upload, in MiB (Zulip's default 5); at most 25, as for emoji. */
    MAX_AVATAR_FILE_SIZE_MIB: z.number().int().min(0).max(25).default(5),
    /** Largest file a user may upload, in MiB (Zulip's default 100). */
    MAX_FILE_UPLOAD_SIZE: z.number().int().min(0).max(1_000_000).default(100),
    /**
     * Upload space per realm, in MiB; null (the default) for none. Zulip has no setting
     * for this (its quota comes from Zulip Cloud plans, and self-hosted servers have
     * none): parley's own key, reported in register as realm_upload_quota_mib.
     */
    REALM_UPLOAD_QUOTA_MIB: z.number().int().min(0).nullable().default(null),
    /**
     * Key of the signed /external_content/ URLs external images in messages are shown
     * through (Zulip's camo_key secret). Without it, `parley serve` generates one into
     * DATA/secrets.json on first start. Changing it breaks the image URLs of messages
     * already sent.
     */
    CAMO_KEY: z.string().min(16, "use at least 16 characters (a generated key has 64)").optional(),
    /** How long an outgoing webhook bot's service may take to answer (Zulip's default 10). */
    OUTGOING_WEBHOOK_TIMEOUT_SECONDS: z.number().int().min(1).max(600).default(10),
    /**
     * parley's own: let outgoing webhook bots call loopback addresses (127.0.0.0/8, ::1), for
     * a bot server on this machine and for tests. Other private and internal addresses stay
     * refused (Zulip refuses them through its Smokescreen proxy).
     */
    OUTGOING_WEBHOOK_ALLOW_LOOPBACK: z.boolean().default(false),
    /**
     * parley's own: serve POST /dev_fetch_api_key and GET /dev_list_users, which log anyone
     * of a realm in by email alone. For development servers only (Zulip enables its
     * DevAuthBackend only in development); off, they answer "Endpoint not available in production.".
     */
    DEV_AUTH_BACKEND: z.boolean().default(false),
    /** Turns the per-user API rate limit off when false (Zulip: RATE_LIMITING). */
    RATE_LIMITING: z.boolean().default(true),
    /**
     * Event queues one realm may hold (parley's own key; Zulip has no limit): a new one
     * past it collects the realm's least recently polled. Each user holds at most 100.
     */
    MAX_EVENT_QUEUES_PER_REALM: z.number().int().min(1).default(20_000),
    /**
     * parley's own (src/http/load-limits): requests in progress per client address (0: no cap;
     * 127.0.0.1 and ::1 are never capped).
     */
    MAX_REQUESTS_PER_ADDRESS: z.number().int().min(0).default(256),
    /** parley's own: requests in progress in all, and connections to the compatibility listener (0: no cap). */
    MAX_OPEN_REQUESTS: z.number().int().min(0).default(10_000),
    /** parley's own: MiB of request bodies held in memory in all before requests are refused with 503. */
    BODY_MEMORY_MIB: z.number().int().min(1).max(65_536).default(64),
    /**
     * parley's own: processes serving the data directory (`parley serve --workers`, src/workers): one writer and
     * WORKERS-1 readers on one port; "auto" for one per core. 1 serves from one process, as before.
     */
    WORKERS: z.union([z.literal("auto"), z.number().int().min(1).max(256)]).default(1),
    /** parley's own: serve as a node of a cluster (docs/cluster.md): the NATS server's nats://HOST:PORT. */
    CLUSTER_NATS_URL: z
      .string()
      .regex(/^nats:\/\/[^\s/]+$/, "nats://HOST:PORT")
      .optional(),
    /** parley's own: this node's name in its cluster (letters, digits, - and _). */
    CLUSTER_NODE: z
      .string()
      .regex(/^[A-Za-z0-9_-]{1,64}$/)
      .optional(),
    /** parley's own: messages the cluster's log keeps; a node further behind must bootstrap from a backup. */
    CLUSTER_MAX_LOG: z.number().int().min(1000).default(1_000_000),
  })
  .strict()
  .superRefine((config, ctx) => {
    // Django's SMTP backend refuses both at once: STARTTLS inside a TLS connection is not a mode.
    if (config.EMAIL_USE_TLS && config.EMAIL_USE_SSL) {
      ctx.addIssue({
        code: "custom",
        path: ["EMAIL_USE_SSL"],
        message:
          "EMAIL_USE_TLS and EMAIL_USE_SSL are both true; set only one: EMAIL_USE_TLS for STARTTLS " +
          "(usually port 587), EMAIL_USE_SSL for TLS from the first byte (usually port 465)",
      });
    }
    // Zulip's bouncer authenticates every request with the registration: without it each would be refused.
    if (config.PUSH_NOTIFICATION_BOUNCER_URL === undefined) return;
    for (const key of ["ZULIP_ORG_ID", "ZULIP_ORG_KEY"] as const) {
      if (config[key] === undefined)
        ctx.addIssue({
          code: "custom",
          path: [key],
          message: "required when PUSH_NOTIFICATION_BOUNCER_URL is set (the server's registration with the bouncer)",
        });
    }
  });

/** The configuration as the server uses it: every default filled in. */
export type ServerConfig = z.infer<typeof CONFIG_SCHEMA>;

/** Zulip's defaults, for servers started without a file (tests, embedders). */
export const DEFAULT_CONFIG: ServerConfig = CONFIG_SCHEMA.parse({});
