/** @module config The server configuration file (Zulip's setting names), its schema and loader. */
export { CONFIG_SCHEMA, DEFAULT_CONFIG, JWT_ALGORITHMS, type ServerConfig } from "./schema.js";
export { ConfigError, DEFAULT_CONFIG_FILE, loadConfigFile, parseConfig, resolveConfig } from "./load.js";
export { camoKeyFor, dataDirSecret, SECRETS_FILE } from "./secrets.js";
export { checkJwtKeys, jwtKeyResolver } from "./jwt-keys.js";
