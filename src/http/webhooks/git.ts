/**
 * @module http/webhooks/git
 * The message texts Zulip's Git integrations share (zerver/lib/webhooks/git.py):
 * pushes with their commit lists, pull requests and issues with an optional quoted
 * body. Only what the integrations here use.
 */

export const COMMITS_LIMIT = 20;
const COMMITTERS_LIMIT = 3;

export interface CommitData {
  /** The author's username, else their name. */
  readonly name: string;
  readonly sha: string;
  readonly url: string;
  readonly message: string;
}

export const topicWithBranch = (repo: string, branch: string) => `${repo} / ${branch}`;
export const topicWithPrOrIssue = (repo: string, type: string, id: number, title: string) =>
  `${repo} / ${type} #${id} ${title}`;

export const shortSha = (sha: string) => sha.slice(0, 11);

/** Python's string.punctuation. */
const PUNCTUATION = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~";
const quote = (message: string) => `\n~~~ quote\n${message}\n~~~`;

/** Committers by commit count, ties alphabetical; past three, the rest as "others". */
function committers(commits: readonly CommitData[]): [string, number][] {
  const counts = new Map<string, number>();
  for (const commit of commits) counts.set(commit.name, (counts.get(commit.name) ?? 0) + 1);
  // Python sorts code points, not locale order.
  const sorted = [...counts].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  if (sorted.length <= COMMITTERS_LIMIT) return sorted;
  const others = sorted.slice(COMMITTERS_LIMIT).reduce((n, [, count]) => n + count, 0);
  return [...sorted.slice(0, COMMITTERS_LIMIT), ["others", others]];
}

function commitsContent(commits: readonly CommitData[]): string {
  let content = "";
  for (const commit of commits.slice(0, COMMITS_LIMIT))
    content += `* ${commit.message.split("\n")[0]} ([${shortSha(commit.sha)}](${commit.url}))\n`;
  if (commits.length > COMMITS_LIMIT) content += `[and ${commits.length - COMMITS_LIMIT} more commit(s)]`;
  return content.trimEnd();
}

/** Zulip's get_push_commits_event_message. */
export function pushCommitsMessage(
  userName: string,
  compareUrl: string | null,
  branch: string,
  commits: readonly CommitData[],
  options: { readonly deleted?: boolean; readonly forced?: boolean } = {},
): string {
  if (commits.length === 0 && options.deleted) return `${userName} [deleted](${compareUrl}) the branch ${branch}.`;
  const pushType = options.forced ? "force pushed" : "pushed";
  if (commits.length === 0)
    return compareUrl
      ? `${userName} [${pushType}](${compareUrl}) the branch ${branch}.`
      : `${userName} ${pushType} the branch ${branch}.`;
  const count = `${commits.length} commit${commits.length > 1 ? "s" : ""}`;
  const pushed = compareUrl ? `[${pushType}](${compareUrl}) ${count}` : `${pushType} ${count}`;
  const base = `${userName} ${pushed} to branch ${branch}.`;
  const byCommitter = committers(commits);
  if (byCommitter.length === 1 && byCommitter[0]![0] === userName)
    return `${base}\n\n${commitsContent(commits)}`.trimEnd();
  let details = `${byCommitter[0]![0]} (${byCommitter[0]![1]})`;
  for (const [name, n] of byCommitter.slice(1, -1)) details += `, ${name} (${n})`;
  if (byCommitter.length > 1) {
    const [name, n] = byCommitter[byCommitter.length - 1]!;
    details += ` and ${name} (${n})`;
  }
  return `${base} Commits by ${details}.\n\n${commitsContent(commits)}`.trimEnd();
}

/** Zulip's get_push_tag_event_message. */
export function pushTagMessage(userName: string, tag: string, action: string, tagUrl?: string): string {
  const message = `${userName} ${action} tag ${tagUrl ? `[${tag}](${tagUrl})` : tag}`;
  return PUNCTUATION.includes(tag[tag.length - 1] ?? "") ? message : `${message}.`;
}

export interface EventMessageInput {
  readonly userName: string;
  readonly action: string;
  readonly url: string;
  readonly number?: number;
  readonly targetBranch?: string | null;
  readonly baseBranch?: string | null;
  readonly message?: string | null;
  readonly assignee?: string | null;
  /** Several assignees' names: "(assigned to A, B and C)"; wins over `assignee`. */
  readonly assignees?: readonly string[];
  readonly type?: string;
  readonly title?: string | null;
}

/** Zulip's get_pull_request_event_message (and get_issue_event_message with type "issue"). */
export function pullRequestOrIssueMessage(input: EventMessageInput): string {
  const type = input.type ?? "PR";
  const id = input.number === undefined ? "" : ` #${input.number}`;
  const title = input.title == null ? "" : ` ${input.title}`;
  let main = `${input.userName} ${input.action} [${type}${id}${title}](${input.url})`;
  const branches = Boolean(input.targetBranch && input.baseBranch);
  if (branches) main += ` from \`${input.targetBranch}\` to \`${input.baseBranch}\``;
  const assignees = input.assignees ?? [];
  const assigned =
    assignees.length > 1 ? `${assignees.slice(0, -1).join(", ")} and ${assignees[assignees.length - 1]}` : assignees[0];
  if (assigned) main += ` (assigned to ${assigned})`;
  else if (input.assignee) main += ` (assigned to ${input.assignee})`;
  const punctuation = input.message ? ":" : ".";
  if (
    assigned ||
    input.assignee ||
    branches ||
    input.title == null ||
    !PUNCTUATION.includes(input.title[input.title.length - 1] ?? "")
  )
    main += punctuation;
  if (input.message) main += "\n" + quote(input.message);
  return main.trimEnd();
}

/** Zulip's get_setup_webhook_message. */
export function setupMessage(integration: string, userName?: string | null): string {
  return `${integration} webhook has been successfully configured${userName ? ` by ${userName}` : ""}.`;
}
