import { type Event, EventSchema } from "../../gen/ts/sessionstore/v1/event_pb.js";
import { refuseUnknownFields } from "./unknown-fields.js";
import {
  checkJson,
  checkStoredTimestamp,
  checkText,
  checkTimestamp,
  invalid,
  MAX_BRANCH_LENGTH,
  MAX_ID_LENGTH,
  MAX_NAME_LENGTH,
} from "./validate.js";

/**
 * Checks an event before anything is stored. State deltas are held to jsonb's
 * rules; the other Structs travel inside the binary event body, which only
 * needs them to be valid JSON. Fields this server does not know are refused
 * at any depth (see unknown-fields.ts).
 */
export function checkEvent(event: Event): Event {
  refuseUnknownFields(EventSchema, event, "event");
  if (event.id !== "") {
    checkText("event.id", event.id, MAX_ID_LENGTH);
    if (event.id.trim() !== event.id) throw invalid("event.id must not start or end with whitespace");
  }
  if (event.author === "") throw invalid('event.author must not be empty: "user" or the name of the agent');
  checkText("event.author", event.author, MAX_NAME_LENGTH);
  checkText("event.invocation_id", event.invocationId, MAX_NAME_LENGTH);
  if (event.branch !== undefined) checkText("event.branch", event.branch, MAX_BRANCH_LENGTH);
  if (event.timestamp) checkStoredTimestamp("event.timestamp", event.timestamp);
  const json = { forbidNul: false };
  checkJson("event.custom_metadata", event.customMetadata, json);
  checkJson("event.usage_metadata", event.usageMetadata, json);
  checkJson("event.grounding_metadata", event.groundingMetadata, json);
  checkJson("event.citation_metadata", event.citationMetadata, json);
  checkJson("event.extra", event.extra, json);
  if (event.content) {
    checkJson("event.content.extra", event.content.extra, json);
    event.content.parts.forEach((part, i) => {
      const at = `event.content.parts[${i}]`;
      checkJson(`${at}.extra`, part.extra, json);
      if (part.data.case === "functionCall") {
        checkJson(`${at}.function_call.args`, part.data.value.args, json);
        checkJson(`${at}.function_call.extra`, part.data.value.extra, json);
      } else if (part.data.case === "functionResponse") {
        checkJson(`${at}.function_response.response`, part.data.value.response, json);
        checkJson(`${at}.function_response.extra`, part.data.value.extra, json);
      }
    });
  }
  const actions = event.actions;
  if (actions) {
    checkJson("event.actions.state_delta", actions.stateDelta, { forbidNul: true });
    checkJson("event.actions.requested_auth_configs", actions.requestedAuthConfigs, json);
    checkJson("event.actions.requested_tool_confirmations", actions.requestedToolConfirmations, json);
    checkJson("event.actions.agent_state", actions.agentState, json);
    checkJson("event.actions.extra", actions.extra, json);
    if (actions.compaction?.startTimestamp) checkTimestamp("event.actions.compaction.start_timestamp", actions.compaction.startTimestamp);
    if (actions.compaction?.endTimestamp) checkTimestamp("event.actions.compaction.end_timestamp", actions.compaction.endTimestamp);
  }
  return event;
}
