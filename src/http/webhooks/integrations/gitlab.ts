/**
 * @module http/webhooks/integrations/gitlab
 * GitLab (zerver/webhooks/gitlab): the event is the X-Gitlab-Event header ("Push
 * Hook", "Issue Hook", ...; a "System Hook" is named from the payload's event_name or
 * object_kind), refined by the action ("Issue Hook close") or the commented object
 * ("Note Hook MergeRequest"); those names are what only_events / exclude_events match.
 * Topics: "<project> / <branch>" for pushes, "<project> / MR #<n> <title>" (the title
 * left out with use_merge_request_title=false) and "<project> / issue #<n> <title>";
 * with a `topic` parameter the titles move into the messages, which then start with a
 * link to the project.
 *
 * Served: pushes (commits, deleted branches, the `branches` filter), tag pushes, the
 * test hook, issues and confidential issues (opened, closed, reopened, updated), merge
 * requests (opened, updated, added commits, merged, closed, reopened, approved,
 * unapproved) and comments on commits, merge requests and issues. Other events
 * (pipelines, jobs, wiki pages, snippets' comments, ...) are answered as unsupported:
 * Zulip posts those.
 */
import { MissingEventHeaderError, UnsupportedWebhookEventError } from "../../errors.js";
import { pullRequestOrIssueMessage, pushCommitsMessage, pushTagMessage, topicWithPrOrIssue } from "../git.js";
import { jsonBody, type WebhookIntegration } from "../integration.js";
import type { Wild } from "../payload.js";

const NAME = "GitLab";
const EMPTY_SHA = "0000000000000000000000000000000000000000";

const repoName = (payload: Wild) =>
  (payload.has("project") ? payload.get("project") : payload.get("repository")).get("name").str();
const homepage = (payload: Wild) =>
  payload.has("project")
    ? payload.get("project").get("web_url").str()
    : payload.get("repository").get("homepage").str();
const issueUser = (payload: Wild) => payload.get("user").get("name").str();
const branchOf = (payload: Wild) => payload.get("ref").str().replaceAll("refs/heads/", "");
const attributes = (payload: Wild) => payload.get("object_attributes");

/** Zulip's get_assignees and replace_assignees_username_with_name: the assignees' names. */
function assigneeNames(payload: Wild): string[] {
  const many = payload.opt("assignees");
  if (many?.truthy) return many.list().map((a) => a.get("name").str());
  const one = payload.opt("assignee");
  return one?.truthy ? [one.get("name").str()] : [];
}

type Body = (payload: Wild, includeTitle: boolean) => string;

const titleIf = (value: Wild, includeTitle: boolean) => (includeTitle ? value.str() : null);

const push: Body = (payload) => {
  const after = payload.opt("after");
  if (after?.truthy && after.str() === EMPTY_SHA)
    return `${payload.get("user_name").str()} deleted branch ${branchOf(payload)}.`;
  const compare = `${homepage(payload)}/-/compare/${payload.get("before").str()}...${payload.get("after").str()}`;
  const commits = payload
    .get("commits")
    .list()
    .map((commit) => ({
      name: commit.get("author").get("name").str(),
      sha: commit.get("id").str(),
      message: commit.get("message").str(),
      url: commit.get("url").str(),
    }));
  return pushCommitsMessage(payload.get("user_name").str(), compare, branchOf(payload), commits);
};

const tagPush: Body = (payload) =>
  pushTagMessage(
    payload.get("user_name").str(),
    payload.get("ref").str().replaceAll("refs/tags/", ""),
    payload.opt("checkout_sha")?.truthy ? "pushed" : "removed",
  );

const issueCreated: Body = (payload, includeTitle) => {
  const attrs = attributes(payload);
  const raw = attrs.opt("description");
  // Hidden HTML comments of the description are left out.
  const description = raw?.truthy
    ? raw
        .str()
        .replace(/<!--[\s\S]*?-->/g, "")
        .trimEnd()
    : null;
  return pullRequestOrIssueMessage({
    userName: issueUser(payload),
    action: "created",
    url: attrs.get("url").str(),
    number: attrs.get("iid").int(),
    message: description,
    assignees: assigneeNames(payload),
    type: "issue",
    title: titleIf(attrs.get("title"), includeTitle),
  });
};

const issueAction =
  (action: string): Body =>
  (payload, includeTitle) => {
    const attrs = attributes(payload);
    return pullRequestOrIssueMessage({
      userName: issueUser(payload),
      action,
      url: attrs.get("url").str(),
      number: attrs.get("iid").int(),
      type: "issue",
      title: titleIf(attrs.get("title"), includeTitle),
    });
  };

const mergeRequestAction =
  (action: string): Body =>
  (payload, includeTitle) => {
    const mr = attributes(payload);
    const merged = action === "merged";
    return pullRequestOrIssueMessage({
      userName: issueUser(payload),
      action,
      url: mr.get("url").str(),
      number: mr.get("iid").int(),
      targetBranch: merged ? mr.get("source_branch").str() : null,
      baseBranch: merged ? mr.get("target_branch").str() : null,
      type: "MR",
      title: titleIf(mr.get("title"), includeTitle),
    });
  };

const mergeRequestOpenedOrUpdated =
  (action: string): Body =>
  (payload, includeTitle) => {
    const mr = attributes(payload);
    const created = action === "created";
    return pullRequestOrIssueMessage({
      userName: issueUser(payload),
      action,
      url: mr.get("url").str(),
      number: mr.get("iid").int(),
      targetBranch: created ? mr.get("source_branch").str() : null,
      baseBranch: created ? mr.get("target_branch").str() : null,
      message: mr.get("description").strOrNull(),
      assignees: assigneeNames(payload),
      type: "MR",
      title: titleIf(mr.get("title"), includeTitle),
    });
  };

const mergeRequestUpdated: Body = (payload, includeTitle) =>
  attributes(payload).opt("oldrev")?.truthy
    ? mergeRequestAction("added commit(s) to")(payload, includeTitle)
    : mergeRequestOpenedOrUpdated("updated")(payload, includeTitle);

const commentedCommit: Body = (payload) => {
  const comment = attributes(payload);
  const sha = payload.get("commit").get("id").str();
  const quote = `\n~~~ quote\n${comment.get("note").str()}\n~~~`;
  const link = `[${sha.slice(0, 11)}](${payload.get("commit").get("url").str()})`;
  return `${issueUser(payload)} [commented](${comment.get("url").str()}) on ${link}:${quote}`;
};

const commentedOn =
  (field: "merge_request" | "issue", type: string): Body =>
  (payload, includeTitle) => {
    const comment = attributes(payload);
    const target = payload.get(field);
    return pullRequestOrIssueMessage({
      userName: issueUser(payload),
      action: `[commented](${comment.get("url").str()}) on`,
      url: target.get("url").str(),
      number: target.get("iid").int(),
      message: comment.get("note").str(),
      type,
      title: titleIf(target.get("title"), includeTitle),
    });
  };

const BODIES: Readonly<Record<string, Body>> = {
  "Push Hook": push,
  "Tag Push Hook": tagPush,
  "Test Hook": (payload) => `Webhook for **${repoName(payload)}** has been configured successfully! :tada:`,
  "Issue Hook open": issueCreated,
  "Issue Hook close": issueAction("closed"),
  "Issue Hook reopen": issueAction("reopened"),
  "Issue Hook update": issueAction("updated"),
  "Confidential Issue Hook open": issueCreated,
  "Confidential Issue Hook close": issueAction("closed"),
  "Confidential Issue Hook reopen": issueAction("reopened"),
  "Confidential Issue Hook update": issueAction("updated"),
  "Note Hook Commit": commentedCommit,
  "Note Hook MergeRequest": commentedOn("merge_request", "MR"),
  "Note Hook Issue": commentedOn("issue", "issue"),
  "Confidential Note Hook Issue": commentedOn("issue", "issue"),
  "Merge Request Hook approved": mergeRequestAction("approved"),
  "Merge Request Hook unapproved": mergeRequestAction("unapproved"),
  "Merge Request Hook open": mergeRequestOpenedOrUpdated("created"),
  "Merge Request Hook update": mergeRequestUpdated,
  "Merge Request Hook merge": mergeRequestAction("merged"),
  "Merge Request Hook close": mergeRequestAction("closed"),
  "Merge Request Hook reopen": mergeRequestAction("reopened"),
};

/** Zulip's get_event: the event to post, null for a push to a branch left out by `branches`. */
function eventOf(header: string, payload: Wild, branches: string | undefined): string | null {
  let event = header;
  if (event === "System Hook") {
    const name = (payload.has("event_name") ? payload.get("event_name") : payload.get("object_kind")).str();
    const words = name.split("__")[0]!.replace(/_/g, " ");
    event = `${words.replace(/\w\S*/g, (w) => w[0]!.toUpperCase() + w.slice(1).toLowerCase())} Hook`;
  }
  if (["Confidential Issue Hook", "Issue Hook", "Merge Request Hook", "Wiki Page Hook"].includes(event)) {
    const action = attributes(payload).opt("action");
    event = `${event} ${action === undefined ? "open" : action.str()}`;
  } else if (event === "Confidential Note Hook" || event === "Note Hook") {
    event = `${event} ${attributes(payload).get("noteable_type").str()}`;
  } else if (event === "Push Hook" && branches !== undefined && !branches.includes(branchOf(payload))) {
    return null;
  }
  if (Object.hasOwn(BODIES, event)) return event;
  throw new UnsupportedWebhookEventError(NAME, event);
}

function topicOf(event: string, payload: Wild, useMergeRequestTitle: boolean): string {
  if (event === "Push Hook") return `${repoName(payload)} / ${branchOf(payload)}`;
  if (event.startsWith("Merge Request Hook")) {
    const mr = attributes(payload);
    const title = useMergeRequestTitle ? mr.get("title").str() : "";
    return topicWithPrOrIssue(repoName(payload), "MR", mr.get("iid").int(), title);
  }
  if (event.startsWith("Issue Hook") || event.startsWith("Confidential Issue Hook")) {
    const attrs = attributes(payload);
    return topicWithPrOrIssue(repoName(payload), "issue", attrs.get("iid").int(), attrs.get("title").str());
  }
  if (event === "Note Hook Issue" || event === "Confidential Note Hook Issue") {
    const issue = payload.get("issue");
    return topicWithPrOrIssue(repoName(payload), "issue", issue.get("iid").int(), issue.get("title").str());
  }
  if (event === "Note Hook MergeRequest") {
    const mr = payload.get("merge_request");
    const title = useMergeRequestTitle ? mr.get("title").str() : "";
    return topicWithPrOrIssue(repoName(payload), "MR", mr.get("iid").int(), title);
  }
  return repoName(payload);
}

export const gitlabIntegration: WebhookIntegration = {
  name: "gitlab",
  displayName: NAME,
  parse(request) {
    const payload = jsonBody(request);
    const header = request.header("x-gitlab-event");
    if (header === undefined) throw new MissingEventHeaderError("X-GitLab-Event");
    const event = eventOf(header, payload, request.params.get("branches"));
    if (event === null) return [];
    const topicParam = request.params.get("topic");
    let body = BODIES[event]!(payload, topicParam !== undefined);
    if (topicParam) body = `[[${repoName(payload)}](${homepage(payload)})] ${body}`;
    const useTitle = request.params.get("use_merge_request_title") !== "false";
    return [{ topic: topicOf(event, payload, useTitle), body, eventType: event }];
  },
};
