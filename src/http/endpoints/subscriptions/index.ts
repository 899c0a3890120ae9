/**
 * @module http/endpoints/subscriptions
 * Subscription and channel-listing endpoints: subscribe, unsubscribe, list own
 * subscriptions, list channels, change a subscription's properties, delete a topic.
 */
import type { Endpoint } from "../../endpoint.js";
import deleteTopic from "./delete-topic.js";
import getStreams from "./get-streams.js";
import getStreamTopics from "./get-stream-topics.js";
import getSubscriptions from "./get-subscriptions.js";
import subscribe from "./subscribe.js";
import unsubscribe from "./unsubscribe.js";
import updateProperties from "./update-properties.js";
import updateProperty from "./update-property.js";
import updateSubscriptions from "./update-subscriptions.js";

export const SUBSCRIPTION_ENDPOINTS: Endpoint[] = [
  subscribe,
  unsubscribe,
  getSubscriptions,
  getStreams,
  updateProperties,
  getStreamTopics,
  deleteTopic,
  updateSubscriptions,
  updateProperty,
];
