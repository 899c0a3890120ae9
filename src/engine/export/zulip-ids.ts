/**
 * @module export/zulip-ids
 * The Recipient rows of a Zulip export, which parley has no table for: their type
 * codes and IDs derived from what they name (one ID space over users, channels and
 * group conversations), shared by the export's table writers.
 */

/** Recipient.type in Zulip. */
export const RECIPIENT_TYPE = { PERSONAL: 1, STREAM: 2, DIRECT_MESSAGE_GROUP: 3 } as const;

/** Recipient row IDs. */
export const RECIPIENT_ID = {
  personal: (userId: number) => 3 * userId,
  stream: (channelId: number) => 3 * channelId + 1,
  group: (conversationId: number) => 3 * conversationId + 2,
};
