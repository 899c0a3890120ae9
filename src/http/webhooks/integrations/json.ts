/**
 * @module http/webhooks/integrations/json
 * Zulip's generic JSON webhook (zerver/webhooks/json): any JSON object, posted as an
 * indented JSON code block under the topic "JSON".
 */
import { jsonBody, type WebhookIntegration } from "../integration.js";
import { pythonJson } from "../python-json.js";

export const jsonIntegration: WebhookIntegration = {
  name: "json",
  displayName: "JSON",
  parse(request) {
    const payload = jsonBody(request);
    payload.keys();
    return [{ topic: "JSON", body: "```json\n" + pythonJson(payload.value) + "\n```" }];
  },
};
