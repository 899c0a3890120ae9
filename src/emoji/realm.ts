/**
 * @module emoji/realm
 * Where a custom emoji's image lives, as Zulip lays it out (RealmEmoji.PATH_ID_TEMPLATE
 * and STILL_PATH_ID_TEMPLATE under its local /user_avatars/ URL): the message HTML
 * and the realm_emoji data both carry these URLs, so they must not change.
 */

/** The URL path of a custom emoji's image. */
export function realmEmojiUrl(realmId: number, fileName: string): string {
  return `/user_avatars/${realmId}/emoji/images/${fileName}`;
}

/** The URL path of the still first frame of an animated custom emoji. */
export function realmEmojiStillUrl(realmId: number, fileName: string): string {
  return `/user_avatars/${realmId}/emoji/images/still/${fileName.replace(/\.[a-z]+$/, "")}.png`;
}
