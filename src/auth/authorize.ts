import type { JsonObject } from "@bufbuild/protobuf";
import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";
import { Health } from "../../gen/ts/grpc/health/v1/health_pb.js";
import { ServerReflection } from "../../gen/ts/grpc/reflection/v1/reflection_pb.js";
import { CheckpointService } from "../../gen/ts/sessionstore/v1/checkpoint_service_pb.js";
import { ConsoleService } from "../../gen/ts/sessionstore/v1/console_service_pb.js";
import { MemoryService } from "../../gen/ts/sessionstore/v1/memory_service_pb.js";
import { SessionService } from "../../gen/ts/sessionstore/v1/session_service_pb.js";
import { APP_PREFIX } from "../domain/state.js";
import type { Logger } from "../log/logger.js";
import { REQUEST_ID_HEADER } from "../server/request-id.js";
import { grantKey } from "./grant-context.js";
import type { TokenGrant, TokenStore } from "./tokens.js";

// What each RPC of SessionService needs from a token. A method missing here
// is refused for every token: a new RPC stays closed until someone decides
// its rule.
const READS = new Set(["GetSession", "ListSessions", "ListEvents", "GetUserState", "StreamEvents"]);
// A rewind writes session-scope keys only, and a fork copies a session of
// the same user: neither touches app: state.
const WRITES = new Set(["CreateSession", "DeleteSession", "AppendEvent", "EraseUserData", "ForkSession", "RewindSession"]);

// The console's service answers within the caller's grant (handlers read it
// from the context): any valid token may call it. FindSessions names an app,
// which the token must grant.
const CONSOLE = new Set(["WhoAmI", "ListApps", "FindSessions"]);
// MemoryService, by the same rules: every request names its app and user;
// read-only tokens may search, list and read entries, not add or delete.
const MEMORY_READS = new Set(["SearchMemory", "ListMemories", "GetMemory"]);
const MEMORY_WRITES = new Set(["AddSessionToMemory", "AddEventsToMemory", "AddMemories", "DeleteMemory", "DeleteSessionMemories"]);
// CheckpointService (LangGraph threads): every request names its app and user, like a session's.
const CHECKPOINT_READS = new Set(["GetCheckpoint", "ListCheckpoints"]);
const CHECKPOINT_WRITES = new Set(["PutCheckpoint", "PutWrites", "DeleteThread", "CopyThread", "DeleteRuns", "PruneThreads"]);

const RULES: ReadonlyMap<string, { reads: ReadonlySet<string>; writes: ReadonlySet<string> }> = new Map([
  [SessionService.typeName, { reads: READS, writes: WRITES }],
  [MemoryService.typeName, { reads: MEMORY_READS, writes: MEMORY_WRITES }],
  [CheckpointService.typeName, { reads: CHECKPOINT_READS, writes: CHECKPOINT_WRITES }],
]);

// Load balancers and tooling call these without credentials; they reveal
// neither sessions nor state.
const PUBLIC_SERVICES = new Set([Health.typeName, ServerReflection.typeName]);

/** The fields of a request that authorization reads; every SessionService, MemoryService and CheckpointService request has them. */
interface Addressed {
  appName?: string;
  userId?: string;
  state?: JsonObject;
  event?: { actions?: { stateDelta?: JsonObject } };
}

/**
 * Refuses a call unless its bearer token grants it. The decision uses only
 * the token and the request's own app_name and user_id, never what is
 * stored, so a refusal says nothing about whether a session exists:
 * wrong scope is PERMISSION_DENIED everywhere, and a missing or unknown
 * token is UNAUTHENTICATED.
 */
export function authInterceptor(tokens: TokenStore, logger: Logger): Interceptor {
  return (next) => async (req) => {
    if (PUBLIC_SERVICES.has(req.service.typeName)) return next(req);
    const grant = authenticate(tokens, req.header.get("authorization"));
    const method = req.method.name;
    if (req.service.typeName === ConsoleService.typeName && CONSOLE.has(method)) {
      const appName = (req.message as Addressed).appName;
      if (appName !== undefined) authorizeApp(grant, method, appName, logger, req.header.get(REQUEST_ID_HEADER));
      req.contextValues.set(grantKey, grant);
      return next(req);
    }
    const rules = RULES.get(req.service.typeName);
    if (!rules || !(rules.reads.has(method) || rules.writes.has(method))) {
      throw new ConnectError(`no authorization rule covers ${req.service.typeName}/${method}`, Code.PermissionDenied);
    }
    const check = (message: Addressed) => authorize(grant, method, message, logger, rules.writes, req.header.get(REQUEST_ID_HEADER));
    if (!req.stream) {
      check(req.message as Addressed);
      return next(req);
    }
    // A server-streaming request is one message behind an iterable: read it,
    // decide, then hand the handler the same message.
    const it = req.message[Symbol.asyncIterator]();
    const first = await it.next();
    if (!first.done) check(first.value as Addressed);
    return next({ ...req, message: replay(first, it) });
  };
}

function authenticate(tokens: TokenStore, header: string | null): TokenGrant {
  if (!header) throw new ConnectError('missing credentials: send "authorization: Bearer <token>"', Code.Unauthenticated);
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  if (!match?.[1]) throw new ConnectError('malformed authorization header: expected "Bearer <token>"', Code.Unauthenticated);
  const grant = tokens.lookup(match[1]);
  if (!grant) throw new ConnectError("unknown or revoked token", Code.Unauthenticated);
  return grant;
}

function denial(
  grant: TokenGrant,
  method: string,
  appName: string,
  userId: string,
  why: string,
  logger?: Logger,
  requestId?: string | null,
) {
  logger?.warn("permission denied", { token: grant.name, method, appName, userId, why, ...(requestId ? { request_id: requestId } : {}) });
  return new ConnectError(`permission denied: ${why}`, Code.PermissionDenied);
}

function authorizeApp(grant: TokenGrant, method: string, appName: string, logger?: Logger, requestId?: string | null): void {
  if (grant.apps !== "*" && !grant.apps.has(appName)) {
    throw denial(grant, method, appName, "", `this token does not grant app "${appName}"`, logger, requestId);
  }
}

export function authorize(
  grant: TokenGrant,
  method: string,
  req: Addressed,
  logger?: Logger,
  writes: ReadonlySet<string> = WRITES,
  requestId?: string | null,
): void {
  const appName = req.appName ?? "";
  const userId = req.userId ?? "";
  const deny = (why: string) => denial(grant, method, appName, userId, why, logger, requestId);
  authorizeApp(grant, method, appName, logger, requestId);
  if (grant.user !== undefined && userId !== grant.user) {
    throw deny(userId === "" ? "this token is limited to one user; set user_id" : `this token does not grant user "${userId}"`);
  }
  if (writes.has(method)) {
    if (grant.readOnly) throw deny("this token is read-only");
    if (grant.user !== undefined && (hasAppKeys(req.state) || hasAppKeys(req.event?.actions?.stateDelta))) {
      throw deny("only a token for the whole app may write app: state");
    }
  }
}

function hasAppKeys(state: JsonObject | undefined): boolean {
  return state !== undefined && Object.keys(state).some((key) => key.startsWith(APP_PREFIX));
}

async function* replay<T>(first: IteratorResult<T>, rest: AsyncIterator<T>): AsyncGenerator<T> {
  if (first.done) return;
  yield first.value;
  for (;;) {
    const next = await rest.next();
    if (next.done) return;
    yield next.value;
  }
}
