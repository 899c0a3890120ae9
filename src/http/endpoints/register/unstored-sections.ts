/**
 * @module http/endpoints/register/unstored-sections
 * Register sections for features parley does not store yet. Each returns the value
 * Zulip returns for a user or organization that has none of the thing: clients
 * decode them and show nothing, and the later issue that adds a feature replaces
 * its placeholder here with engine data.
 */

/** A state section keyed by the event type that gates it (Zulip's fetch_initial_state_data). */
export type SectionBuilder = () => Record<string, unknown>;

export const UNSTORED_SECTIONS = {
  onboarding_steps: () => ({ onboarding_steps: [], navigation_tour_video_url: null }),
  // Zulip always sends an empty legacy list.
  realm_filters: () => ({ realm_filters: [] }),
  // No embedded bots or incoming-webhook integrations are offered.
  realm_embedded_bots: () => ({ realm_embedded_bots: [] }),
  realm_incoming_webhook_bots: () => ({ realm_incoming_webhook_bots: [] }),
  video_calls: () => ({ has_zoom_token: false, has_webex_token: false }),
  giphy: () => ({ giphy_api_key: "" }),
  tenor: () => ({ tenor_api_key: "" }),
  klipy: () => ({ klipy_api_key: "" }),
  realm_billing: () => ({ realm_billing: { has_pending_sponsorship_request: false } }),
} as const satisfies Record<string, SectionBuilder>;

export type UnstoredSection = keyof typeof UNSTORED_SECTIONS;
