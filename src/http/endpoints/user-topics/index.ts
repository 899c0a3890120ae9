/**
 * @module http/endpoints/user-topics
 * Topic visibility policies (mute, unmute, follow), and the deprecated muted_topics form.
 */
import type { Endpoint } from "../../endpoint.js";
import legacyMutedTopics from "./legacy-muted-topics.js";
import updateUserTopic from "./update-user-topic.js";

export const USER_TOPIC_ENDPOINTS: readonly Endpoint[] = [updateUserTopic, legacyMutedTopics];
