/**
 * @module wire/version
 * What we report as our Zulip API level. Clients parse zulip_version's major number
 * (12.0) and branch on zulip_feature_level.
 */
export const ZULIP_FEATURE_LEVEL = 496;
export const ZULIP_VERSION = "12.0";
export const ZULIP_MERGE_BASE = "12.0";
