/**
 * @module http/webhooks/integrations/github
 * GitHub (zerver/webhooks/github): the event comes in the X-GitHub-Event header and is
 * refined by the payload into Zulip's event names (push_commits, push_tags,
 * opened_pull_request, issues, ...), which only_events / exclude_events match.
 * Topics: "<repo> / <branch>" for commits, "<repo> / PR #<n> <title>" and
 * "<repo> / issue #<n> <title>" for pull requests and issues, else the repository.
 * With a `topic` parameter the titles move into the messages instead.
 *
 * Served: ping, push (commits, tags, deleted and force-pushed branches, the `branches`
 * filter), pull_request (opened, reopened, synchronize, edited, assigned, unassigned,
 * closed and merged, review_requested, ready_for_review, locked, unlocked, auto merge),
 * issues (every action, labels and milestones included) and issue_comment; the events
 * Zulip ignores post nothing. Every other event is answered as unsupported (200,
 * UNSUPPORTED_WEBHOOK_EVENT_TYPE): for those Zulip knows (stars, forks, releases,
 * reviews, deployments, ...) that is a gap here, not Zulip's answer.
 */
import { MissingEventHeaderError, UnsupportedWebhookEventError } from "../../errors.js";
import {
  pullRequestOrIssueMessage,
  pushCommitsMessage,
  pushTagMessage,
  setupMessage,
  topicWithBranch,
  topicWithPrOrIssue,
  type CommitData,
} from "../git.js";
import { jsonBody, type WebhookIntegration } from "../integration.js";
import type { Wild } from "../payload.js";

const NAME = "GitHub";
const IGNORED_EVENTS = [
  "check_suite",
  "label",
  "meta",
  "milestone",
  "organization",
  "project_card",
  "push__merge_queue",
  "repository_vulnerability_alert",
];
const IGNORED_PULL_REQUEST_ACTIONS = [
  "approved",
  "converted_to_draft",
  "labeled",
  "review_request_removed",
  "unlabeled",
];

interface Context {
  readonly payload: Wild;
  readonly includeTitle: boolean;
}

const sender = (payload: Wild) => payload.get("sender").get("login").str();
const senderUrl = (payload: Wild) => payload.get("sender").get("html_url").str();
const repoName = (payload: Wild) => payload.get("repository").get("name").str();
const branchOf = (ref: string) => ref.replace(/^refs\/heads\//, "");
const titleIf = (ctx: Context, value: Wild) => (ctx.includeTitle ? value.str() : null);

function openedOrUpdatedPullRequest(ctx: Context): string {
  const { payload } = ctx;
  const pr = payload.get("pull_request");
  let action = payload.get("action").str();
  if (action === "synchronize") action = "updated";
  const assignee = pr.opt("assignee")?.truthy ? pr.get("assignee").get("login").str() : null;
  const changes = payload.opt("changes");
  const description =
    (changes?.truthy && changes.has("body")) || action === "opened" ? pr.get("body").strOrNull() : null;
  const branches = action === "opened" || action === "merged";
  return pullRequestOrIssueMessage({
    userName: sender(payload),
    action,
    url: pr.get("html_url").str(),
    targetBranch: branches ? pr.get("head").get("label").str() : null,
    baseBranch: branches ? pr.get("base").get("label").str() : null,
    message: description,
    assignee,
    number: pr.get("number").int(),
    title: titleIf(ctx, pr.get("title")),
  });
}

function assignedPullRequest(ctx: Context): string {
  const { payload } = ctx;
  const pr = payload.get("pull_request");
  const assignee = pr.opt("assignee");
  const base = pullRequestOrIssueMessage({
    userName: sender(payload),
    action: payload.get("action").str(),
    url: pr.get("html_url").str(),
    number: pr.get("number").int(),
    title: titleIf(ctx, pr.get("title")),
  });
  return assignee?.truthy ? base.replace("assigned", `assigned ${assignee.get("login").str()} to`) : base;
}

function closedPullRequest(ctx: Context): string {
  const pr = ctx.payload.get("pull_request");
  return pullRequestOrIssueMessage({
    userName: sender(ctx.payload),
    action: pr.get("merged").bool() ? "merged" : "closed without merge",
    url: pr.get("html_url").str(),
    number: pr.get("number").int(),
    title: titleIf(ctx, pr.get("title")),
  });
}

function reviewRequested(ctx: Context): string {
  const { payload } = ctx;
  const pr = payload.get("pull_request");
  const reviewers = payload.has("requested_reviewer")
    ? `[${payload.get("requested_reviewer").get("login").str()}](${payload.get("requested_reviewer").get("html_url").str()})`
    : `[${payload.get("requested_team").get("name").str()}](${payload.get("requested_team").get("html_url").str()})`;
  const title = ctx.includeTitle ? ` ${pr.get("title").str()}` : "";
  const link = `[PR #${pr.get("number").int()}${title}](${pr.get("html_url").str()})`;
  return `**${sender(payload)}** requested ${reviewers} for a review on ${link}.`;
}

function readyForReview(ctx: Context): string {
  const pr = ctx.payload.get("pull_request");
  const link = `[PR #${pr.get("number").int()}](${pr.get("html_url").str()})`;
  return `**${sender(ctx.payload)}** has marked ${link} as ready for review.`;
}

function lockedOrUnlocked(ctx: Context): string {
  const { payload } = ctx;
  const pr = payload.get("pull_request");
  const link = `[PR #${pr.get("number").int()}](${pr.get("html_url").str()})`;
  if (payload.get("action").str() === "unlocked") return `${sender(payload)} has unlocked ${link}.`;
  const reason = pr.get("active_lock_reason").truthy ? pr.get("active_lock_reason").str() : "None";
  return `${sender(payload)} has locked ${link} as ${reason} and limited conversation to collaborators.`;
}

function autoMerge(ctx: Context): string {
  const { payload } = ctx;
  const pr = payload.get("pull_request");
  const link = `[PR #${pr.get("number").int()}](${pr.get("html_url").str()})`;
  const state = payload.get("action").str() === "auto_merge_disabled" ? "disabled" : "enabled";
  return `${sender(payload)} has ${state} auto merge for ${link}.`;
}

function issue(ctx: Context): string {
  const { payload } = ctx;
  const action = payload.get("action").str();
  const data = payload.get("issue");
  const base = pullRequestOrIssueMessage({
    userName: sender(payload),
    action,
    url: data.get("html_url").str(),
    number: data.get("number").int(),
    message: action === "assigned" || action === "unassigned" ? null : data.get("body").strOrNull(),
    type: "issue",
    title: titleIf(ctx, data.get("title")),
  });
  if (!payload.has("assignee")) return base;
  const assignee = payload.get("assignee").get("login").str();
  if (action === "assigned") return base.replace("assigned", `assigned ${assignee} to`);
  if (action === "unassigned") return base.replace("unassigned", `unassigned ${assignee} from`);
  return base;
}

function issueLabeled(ctx: Context): string {
  const { payload } = ctx;
  const data = payload.get("issue");
  const added = payload.get("action").str() === "labeled";
  const title = ctx.includeTitle ? ` ${data.get("title").str()}` : "";
  const link = `[Issue #${data.get("number").int()}${title}](${data.get("html_url").str()})`;
  const label = payload.get("label").get("name").str();
  return `[${sender(payload)}](${senderUrl(payload)}) ${added ? "added" : "removed"} the ${label} label ${added ? "to" : "from"} ${link}.`;
}

function issueMilestoned(ctx: Context): string {
  const { payload } = ctx;
  const data = payload.get("issue");
  const added = payload.get("action").str() === "milestoned";
  const title = ctx.includeTitle ? ` ${data.get("title").str()}` : "";
  const link = `[issue #${data.get("number").int()}${title}](${data.get("html_url").str()})`;
  const milestone = payload.get("milestone");
  const named = `[${milestone.get("title").str()}](${milestone.get("html_url").str()})`;
  return `[${sender(payload)}](${senderUrl(payload)}) ${added ? "added" : "removed"} milestone ${named} ${added ? "to" : "from"} ${link}.`;
}

const isPullRequestComment = (payload: Wild) => payload.get("issue").has("pull_request");

function issueComment(ctx: Context): string {
  const { payload } = ctx;
  const comment = payload.get("comment");
  const data = payload.get("issue");
  const action = payload.get("action").str();
  const verb = action === "created" ? "[commented]" : `${action} a [comment]`;
  return pullRequestOrIssueMessage({
    userName: sender(payload),
    action: `${verb}(${comment.get("html_url").str()}) on`,
    url: data.get("html_url").str(),
    number: data.get("number").int(),
    message: comment.get("body").str(),
    title: titleIf(ctx, data.get("title")),
    type: isPullRequestComment(payload) ? "PR" : "issue",
  });
}

function pushCommits(ctx: Context): string {
  const { payload } = ctx;
  const commits: CommitData[] = payload
    .get("commits")
    .list()
    .map((commit) => {
      const author = commit.get("author");
      const username = author.opt("username");
      return {
        name: username?.truthy ? username.str() : author.get("name").str(),
        sha: commit.get("id").str(),
        url: commit.get("url").str(),
        message: commit.get("message").str(),
      };
    });
  return pushCommitsMessage(
    sender(payload),
    payload.get("compare").str(),
    branchOf(payload.get("ref").str()),
    commits,
    { deleted: payload.get("deleted").bool(), forced: payload.get("forced").bool() },
  );
}

function pushTags(ctx: Context): string {
  const { payload } = ctx;
  const tag = payload
    .get("ref")
    .str()
    .replace(/^refs\/tags\//, "");
  return pushTagMessage(sender(payload), tag, payload.get("created").bool() ? "pushed" : "removed");
}

const BODIES: Readonly<Record<string, (ctx: Context) => string>> = {
  ping: (ctx) => setupMessage(NAME, sender(ctx.payload)),
  push_commits: pushCommits,
  push_tags: pushTags,
  opened_pull_request: openedOrUpdatedPullRequest,
  updated_pull_request: openedOrUpdatedPullRequest,
  assigned_or_unassigned_pull_request: assignedPullRequest,
  closed_pull_request: closedPullRequest,
  pull_request_review_requested: reviewRequested,
  pull_request_ready_for_review: readyForReview,
  locked_or_unlocked_pull_request: lockedOrUnlocked,
  pull_request_auto_merge: autoMerge,
  issues: issue,
  issue_labeled_or_unlabeled: issueLabeled,
  issue_milestoned_or_demilestoned: issueMilestoned,
  issue_comment: issueComment,
};

const PULL_REQUEST_EVENTS: Readonly<Record<string, string>> = {
  opened: "opened_pull_request",
  reopened: "opened_pull_request",
  synchronize: "updated_pull_request",
  edited: "updated_pull_request",
  assigned: "assigned_or_unassigned_pull_request",
  unassigned: "assigned_or_unassigned_pull_request",
  closed: "closed_pull_request",
  review_requested: "pull_request_review_requested",
  ready_for_review: "pull_request_ready_for_review",
  locked: "locked_or_unlocked_pull_request",
  unlocked: "locked_or_unlocked_pull_request",
  auto_merge_enabled: "pull_request_auto_merge",
  auto_merge_disabled: "pull_request_auto_merge",
};

/** Zulip's get_zulip_event_name: the event to post, null for one that posts nothing. */
function zulipEvent(header: string, payload: Wild, branches: string | undefined): string | null {
  if (header === "pull_request") {
    const action = payload.get("action").str();
    const event = PULL_REQUEST_EVENTS[action];
    if (event !== undefined) return event;
    if (IGNORED_PULL_REQUEST_ACTIONS.includes(action)) return null;
  } else if (header === "push") {
    const ref = payload.get("ref").str();
    if (ref.startsWith("refs/heads/gh-readonly-queue/")) return null;
    if (!ref.startsWith("refs/heads/")) return "push_tags";
    // Zulip's test is a substring search of the whole `branches` text.
    if (branches !== undefined && !branches.includes(branchOf(ref))) return null;
    return "push_commits";
  } else if (header === "issues") {
    const action = payload.get("action").str();
    if (action === "labeled" || action === "unlabeled") return "issue_labeled_or_unlabeled";
    if (action === "milestoned" || action === "demilestoned") return "issue_milestoned_or_demilestoned";
    return "issues";
  } else if (header === "ping" || header === "issue_comment") return header;
  else if (IGNORED_EVENTS.includes(header)) return null;
  const action = payload.opt("action");
  throw new UnsupportedWebhookEventError(NAME, `${header}:${action === undefined ? "???" : action.str()}`);
}

function topicOf(payload: Wild, event: string): string {
  if (event.includes("pull_request")) {
    const pr = payload.get("pull_request");
    return topicWithPrOrIssue(repoName(payload), "PR", pr.get("number").int(), pr.get("title").str());
  }
  if (event.startsWith("issue")) {
    const data = payload.get("issue");
    const type = isPullRequestComment(payload) ? "PR" : "issue";
    return topicWithPrOrIssue(repoName(payload), type, data.get("number").int(), data.get("title").str());
  }
  if (event === "push_commits") return topicWithBranch(repoName(payload), branchOf(payload.get("ref").str()));
  if (event === "ping" && !payload.opt("repository")?.truthy) return payload.get("organization").get("login").str();
  return repoName(payload);
}

export const githubIntegration: WebhookIntegration = {
  name: "github",
  displayName: NAME,
  parse(request) {
    const payload = jsonBody(request);
    const header = request.header("x-github-event");
    if (header === undefined) throw new MissingEventHeaderError("X-GitHub-Event");
    const event = zulipEvent(header, payload, request.params.get("branches"));
    if (event === null) return [];
    const body = BODIES[event]!({ payload, includeTitle: request.params.has("topic") });
    return [{ topic: topicOf(payload, event), body, eventType: event }];
  },
};
