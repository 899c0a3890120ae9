/**
 * @module actions/delivery-time
 * The delivery time rules scheduled messages and reminders share.
 */
import { BadRequestError } from "../errors.js";
import type { StoreState } from "../state.js";

export const DELIVERY_TIME_NOT_IN_FUTURE = "Scheduled delivery time must be in the future.";

/** The last second of year 9999: the latest time Zulip's datetimes (and the failure notice's <time:…>) can name. */
export const LATEST_DELIVERY_TIME = 253_402_300_799;

/** A delivery time (UNIX seconds) must be in the future and one Zulip's datetimes can hold. */
export function checkDeliveryTime(state: StoreState, deliverAt: number): void {
  if (!Number.isSafeInteger(deliverAt) || deliverAt <= state.now())
    throw new BadRequestError(DELIVERY_TIME_NOT_IN_FUTURE);
  if (deliverAt > LATEST_DELIVERY_TIME) throw new BadRequestError("scheduled_delivery_timestamp is too large");
}
