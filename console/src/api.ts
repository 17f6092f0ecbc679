import { createClient, type Interceptor } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-web";
import { ConsoleService } from "../../gen/ts/sessionstore/v1/console_service_pb.js";
import { SessionService } from "../../gen/ts/sessionstore/v1/session_service_pb.js";

// The token lives in sessionStorage: this tab only, gone when it closes,
// never in a cookie (so no other site can make the browser send it) and
// never in localStorage (shared by every tab, kept forever).
const TOKEN_KEY = "sessionstore.token";

export function token(): string | undefined {
  return sessionStorage.getItem(TOKEN_KEY) ?? undefined;
}

export function setToken(value: string | undefined): void {
  if (value) sessionStorage.setItem(TOKEN_KEY, value);
  else sessionStorage.removeItem(TOKEN_KEY);
}

const bearer: Interceptor = (next) => (req) => {
  const t = token();
  if (t) req.header.set("authorization", `Bearer ${t}`);
  return next(req);
};

// The Connect protocol over fetch: same origin, HTTP/1.1 or HTTP/2, binary.
const transport = createConnectTransport({ baseUrl: location.origin, useBinaryFormat: true, interceptors: [bearer] });

export const store = createClient(SessionService, transport);
export const consoleApi = createClient(ConsoleService, transport);
