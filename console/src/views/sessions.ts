import type { JsonValue } from "@bufbuild/protobuf";
import type { Session } from "../../../gen/ts/sessionstore/v1/session_pb.js";
import { consoleApi, store } from "../api.js";
import { h, replace } from "../dom.js";
import { compact, relative, time } from "../format.js";
import { href } from "../routes.js";
import { canWrite, type Shell, type View } from "../shell.js";

const PAGE = 50;

/** An app's sessions (or one user's), most recently updated first, paged; search by session or user id. */
export const sessionsView: View<{ view: "app"; app: string; user?: string | undefined; find?: string | undefined }> = (
  shell: Shell,
  route,
  root,
) => {
  const { app, find } = route;
  // A token limited to one user may list only that user's sessions.
  const user = route.user ?? (shell.grant.userId || undefined);
  const body = h("tbody", {});
  const pager = h("div", { class: "pager" });
  const status = h("div", { class: "status", role: "status" });
  const pages: string[] = [""];
  const search = h("input", {
    type: "search",
    name: "q",
    value: find ?? user ?? "",
    placeholder: "session id or user id",
    "aria-label": "session id or user id",
    autocomplete: "off",
  });

  const kind = h(
    "select",
    { name: "kind", "aria-label": "search by" },
    h("option", { value: "session" }, "session id"),
    h("option", { value: "user" }, "user id"),
  );
  kind.value = user && !find ? "user" : "session";

  const rows = (sessions: Session[]) => {
    replace(
      body,
      sessions.map((s) =>
        h(
          "tr",
          { "data-session": s.id, "data-user": s.userId },
          h("td", {}, h("a", { class: "mono", href: href({ view: "session", app, user: s.userId, session: s.id }) }, s.id)),
          h("td", {}, h("a", { class: "mono", href: href({ view: "app", app, user: s.userId }) }, s.userId)),
          h("td", { class: "num" }, String(s.revision)),
          h("td", { title: time(s.lastUpdateTime) }, relative(s.lastUpdateTime)),
          h("td", { class: "preview mono" }, compact(s.state as JsonValue, 140)),
        ),
      ),
    );
    if (sessions.length === 0) body.append(h("tr", {}, h("td", { class: "muted", "data-empty": "" }, "No sessions.")));
  };

  const loadPage = async (index: number) => {
    status.textContent = "loading…";
    try {
      const res = await store.listSessions({
        appName: app,
        userId: user ?? "",
        pageSize: PAGE,
        pageToken: pages[index] ?? "",
        newestFirst: true,
      });
      if (res.nextPageToken) pages[index + 1] = res.nextPageToken;
      rows(res.sessions);
      status.textContent = `page ${index + 1}${user ? ` · user ${user}` : ""}`;
      replace(
        pager,
        h(
          "button",
          { class: "button", disabled: index === 0, "data-page": "prev", on: { click: () => void loadPage(index - 1) } },
          "Newer",
        ),
        h(
          "button",
          { class: "button", disabled: !res.nextPageToken, "data-page": "next", on: { click: () => void loadPage(index + 1) } },
          "Older",
        ),
      );
    } catch (err) {
      replace(status, shell.failure(err));
    }
  };

  const findSession = async (id: string) => {
    status.textContent = "searching…";
    try {
      const res = await consoleApi.findSessions({ appName: app, sessionId: id });
      rows(res.sessions);
      status.textContent = `${res.sessions.length} session(s) with id ${id}`;
      replace(pager, h("a", { class: "button", href: href({ view: "app", app }) }, "All sessions"));
    } catch (err) {
      replace(status, shell.failure(err));
    }
  };

  const erase = async () => {
    if (!user) return;
    const ok = await shell.confirm(
      `Erase every session and the user state of user "${user}" in app "${app}"? This cannot be undone.`,
      "Erase user",
    );
    if (!ok) return;
    try {
      const res = await store.eraseUserData({ appName: app, userId: user });
      status.textContent = `erased ${res.sessionsDeleted} session(s), ${res.eventsDeleted} event(s)`;
      await loadPage(0);
    } catch (err) {
      replace(status, shell.failure(err));
    }
  };

  replace(
    root,
    h(
      "section",
      { class: "sessions" },
      h(
        "div",
        { class: "toolbar" },
        h("h1", {}, h("a", { href: href({ view: "app", app }) }, app), user ? ` · user ${user}` : ""),
        h("a", { class: "button", href: href({ view: "live", app, user }) }, "Live feed"),
        user && canWrite(shell.grant, app, user)
          ? h("button", { class: "button danger", "data-action": "erase-user", on: { click: () => void erase() } }, "Erase user…")
          : null,
      ),
      h(
        "form",
        {
          class: "inline-form",
          on: {
            submit: (e) => {
              e.preventDefault();
              const q = search.value.trim();
              const which = (new FormData(e.target as HTMLFormElement).get("kind") as string) ?? "session";
              if (!q) shell.go({ view: "app", app });
              else if (which === "user") shell.go({ view: "app", app, user: q });
              else shell.go({ view: "app", app, find: q });
            },
          },
        },
        search,
        kind,
        h("button", { type: "submit", class: "button" }, "Search"),
      ),
      status,
      h(
        "div",
        { class: "table-wrap" },
        h(
          "table",
          { class: "session-table" },
          h(
            "thead",
            {},
            h("tr", {}, h("th", {}, "session"), h("th", {}, "user"), h("th", {}, "events"), h("th", {}, "updated"), h("th", {}, "state")),
          ),
          body,
        ),
      ),
      pager,
    ),
  );
  if (find) void findSession(find);
  else void loadPage(0);
  return undefined;
};
