import { createSessionStoreClient, type SessionStoreClient } from "../client/create-client.js";
import { baseUrlOf } from "../client/target.js";
import { text, textWithDefault, toggle, UsageError } from "./options.js";

// Options of the commands that talk to a running server over gRPC.
export const clientOptions = {
  server: textWithDefault("server", "http://127.0.0.1:50051", "the server: `http://host:port`, `https://host:port` (TLS) or `host:port`", {
    env: "SESSIONSTORE_SERVER",
    valueName: "URL",
  }),
  token: text("token", "bearer token, when the server requires one (`sessionstore token` makes one)", {
    env: "SESSIONSTORE_TOKEN",
    valueName: "TOKEN",
  }),
};

export const scopeOptions = {
  app: text("app", "the app", { short: "a", valueName: "APP" }),
  user: text("user", "the user", { short: "u", valueName: "USER" }),
  session: text("session", "the session id", { short: "s", valueName: "ID" }),
};

export const jsonOption = { json: toggle("json", "one JSON object per line (protobuf JSON) instead of text for people") };

export function connect(values: { server: string; token: string | undefined }): SessionStoreClient {
  try {
    baseUrlOf(values.server);
  } catch (err) {
    throw new UsageError(`--server: ${(err as Error).message.replace(/^sessionstore: /, "")}`);
  }
  return createSessionStoreClient(values.server, values.token ? { token: values.token } : {});
}

export function required(value: string | undefined, flag: string): string {
  if (value === undefined) throw new UsageError(`${flag} is required`);
  return value;
}
