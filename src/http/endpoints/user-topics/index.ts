/**
 * @module http/endpoints/user-topics
 * Topic visibility policies (mute, unmute, follow).
 */
import type { Endpoint } from "../../endpoint.js";
import updateUserTopic from "./update-user-topic.js";

export const USER_TOPIC_ENDPOINTS: readonly Endpoint[] = [updateUserTopic];
