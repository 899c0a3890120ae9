/**
 * @module http/webhooks/registry
 * The incoming webhook integrations served at /api/v1/external/<name>, by name.
 */
import type { WebhookIntegration } from "./integration.js";
import { alertmanagerIntegration } from "./integrations/alertmanager.js";
import { githubIntegration } from "./integrations/github.js";
import { gitlabIntegration } from "./integrations/gitlab.js";
import { jsonIntegration } from "./integrations/json.js";
import { slackIncomingIntegration } from "./integrations/slack-incoming.js";

export const WEBHOOK_INTEGRATIONS: readonly WebhookIntegration[] = [
  jsonIntegration,
  slackIncomingIntegration,
  githubIntegration,
  alertmanagerIntegration,
  gitlabIntegration,
];

const byName = new Map(WEBHOOK_INTEGRATIONS.map((integration) => [integration.name, integration]));

export function findIntegration(name: string): WebhookIntegration | undefined {
  return byName.get(name);
}
