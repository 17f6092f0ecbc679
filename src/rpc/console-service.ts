import { create } from "@bufbuild/protobuf";
import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import {
  type ConsoleService,
  FindSessionsResponseSchema,
  ListAppsResponseSchema,
  WhoAmIResponseSchema,
} from "../../gen/ts/sessionstore/v1/console_service_pb.js";
import { grantKey } from "../auth/grant-context.js";
import type { ConsoleQueries } from "../storage/console-queries.js";
import { decodeToken, encodeToken } from "./page-token.js";
import { toSession } from "./session-service.js";
import { pageSize, requireId } from "./validate.js";

const FOUND_LIMIT = 100;

/** The console's service. Answers stay within the caller's grant (see auth/authorize.ts). */
export function consoleServiceImpl(queries: ConsoleQueries): ServiceImpl<typeof ConsoleService> {
  return {
    whoAmI(_req, ctx) {
      const grant = ctx.values.get(grantKey);
      if (!grant) return create(WhoAmIResponseSchema, { authRequired: false, allApps: true });
      return create(WhoAmIResponseSchema, {
        authRequired: true,
        tokenName: grant.name,
        allApps: grant.apps === "*",
        apps: grant.apps === "*" ? [] : [...grant.apps].sort(),
        userId: grant.user ?? "",
        readOnly: grant.readOnly,
      });
    },

    async listApps(req, ctx) {
      const limit = pageSize("page_size", req.pageSize);
      const listing = ["ListApps"];
      const after = req.pageToken ? decodeToken("page_token", req.pageToken, listing, ["a"] as const).a : undefined;
      const granted = grantedApps(ctx);
      // A token for named apps sees those names, whether or not they have sessions yet.
      const names =
        granted === "*"
          ? await queries.listApps(after, limit + 1)
          : granted.filter((name) => after === undefined || name > after).slice(0, limit + 1);
      const page = names.slice(0, limit);
      const last = page[page.length - 1];
      const nextPageToken = names.length > limit && last !== undefined ? encodeToken(listing, { a: last }) : "";
      return create(ListAppsResponseSchema, { appNames: page, nextPageToken });
    },

    async findSessions(req, ctx) {
      const appName = requireId("app_name", req.appName);
      const sessionId = requireId("session_id", req.sessionId);
      // A token limited to one user finds that user's session only.
      const user = ctx.values.get(grantKey)?.user;
      const found = await queries.findSessions(appName, sessionId, user, FOUND_LIMIT);
      return create(FindSessionsResponseSchema, { sessions: found.map(toSession) });
    },
  };
}

function grantedApps(ctx: HandlerContext): "*" | string[] {
  const grant = ctx.values.get(grantKey);
  return !grant || grant.apps === "*" ? "*" : [...grant.apps].sort();
}
