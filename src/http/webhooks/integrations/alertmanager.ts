/**
 * @module http/webhooks/integrations/alertmanager
 * Prometheus Alertmanager (zerver/webhooks/alertmanager): the alerts of a
 * notification grouped by a label (the `name` parameter, default `instance`), one
 * message per group and status: "FIRING" then "Resolved", each alert described by
 * another label or annotation (`desc`, default `alertname`) linking to its graph.
 */
import { BadRequestError } from "../../../engine/index.js";
import { jsonBody, type WebhookIntegration, type WebhookPost } from "../integration.js";
import type { Wild } from "../payload.js";

/** labels[field], else annotations[field], else the fallback (Zulip's nested .get). */
function field(labels: Wild | undefined, annotations: Wild | undefined, name: string, fallback: string): string {
  const value = labels?.opt(name) ?? annotations?.opt(name);
  return value === undefined ? fallback : value.str();
}

export const alertmanagerIntegration: WebhookIntegration = {
  name: "alertmanager",
  displayName: "Alertmanager",
  parse(request) {
    const payload = jsonBody(request);
    const nameField = request.params.get("name") ?? "instance";
    const descField = request.params.get("desc") ?? "alertname";
    const groups = new Map<string, { firing: string[]; resolved: string[] }>();
    for (const alert of payload.get("alerts").list()) {
      const labels = alert.opt("labels");
      const annotations = alert.opt("annotations");
      const name = field(labels, annotations, nameField, "(unknown)");
      const desc = field(labels, annotations, descField, `<missing field: ${descField}>`);
      const url = alert.get("generatorURL").str().replaceAll("tab=1", "tab=0");
      const status = alert.get("status");
      const state = status.str();
      if (state !== "firing" && state !== "resolved") throw new BadRequestError(`Invalid ${status.path}`);
      let group = groups.get(name);
      if (!group) groups.set(name, (group = { firing: [], resolved: [] }));
      group[state].push(`${desc} ([source](${url}))`);
    }
    const posts: WebhookPost[] = [];
    for (const [topic, group] of groups) {
      for (const [title, icon, lines] of [
        ["FIRING", ":alert:", group.firing],
        ["Resolved", ":squared_ok:", group.resolved],
      ] as const) {
        if (lines.length === 0) continue;
        const body =
          lines.length === 1
            ? `${icon} **${title}** ${lines[0]}`
            : `${icon} **${title}**\n${lines.map((line) => `* ${line}`).join("\n")}`;
        posts.push({ topic, body });
      }
    }
    return posts;
  },
};
