import type { StreamedEvent } from "../../../gen/ts/sessionstore/v1/session_service_pb.js";
import { h, replace } from "../dom.js";
import { clip, hue, time } from "../format.js";
import { href } from "../routes.js";
import type { Shell, View } from "../shell.js";
import { follow, statusBadge } from "../tail.js";
import { VirtualList } from "../virtual-list.js";

/** Rows kept in the feed; older ones scroll away. */
const KEEP = 5000;

/** Every event of an app (or one user) as it commits, filtered by author on the page. */
export const liveView: View<{ view: "live"; app: string; user?: string | undefined; author?: string | undefined }> = (
  shell: Shell,
  route,
  root,
) => {
  const { app } = route;
  // A token limited to one user may tail only that user's sessions.
  const user = route.user ?? (shell.grant.userId || undefined);
  const badge = statusBadge();
  let author = route.author ?? "";
  let all: StreamedEvent[] = [];
  let count = 0;
  const counter = h("span", { class: "muted", "data-testid": "feed-count" }, "0 events");

  const row = (s: StreamedEvent) => {
    const e = s.event;
    const text = summary(s);
    const el = h(
      "div",
      { class: "feed-row", "data-session": s.sessionId, "data-author": e?.author ?? "", "data-seq": String(e?.seq ?? 0n) },
      h("span", { class: "time" }, time(e?.timestamp)),
      h("a", { class: "mono", href: href({ view: "app", app, user: s.userId }) }, s.userId),
      h(
        "a",
        { class: "mono", href: href({ view: "session", app, user: s.userId, session: s.sessionId, seq: e?.seq }) },
        `${clip(s.sessionId, 24)} #${e?.seq ?? ""}`,
      ),
      h("span", { class: "author" }, e?.author ?? ""),
      h("span", { class: "summary" }, text),
    );
    el.style.setProperty("--author-hue", String(hue(e?.author ?? "")));
    return el;
  };
  const list = new VirtualList<StreamedEvent>(row, { estimate: 32, label: "live events" });
  list.stickToBottom = true;
  const shown = (s: StreamedEvent) => !author || s.event?.author === author;

  const userInput = h("input", {
    type: "text",
    name: "user",
    value: user ?? "",
    placeholder: "user id",
    "aria-label": "filter by user",
    autocomplete: "off",
  });
  const authorInput = h("input", {
    type: "text",
    name: "author",
    value: author,
    placeholder: "author",
    "aria-label": "filter by author",
    autocomplete: "off",
  });
  authorInput.addEventListener("input", () => {
    author = authorInput.value.trim();
    history.replaceState(null, "", href({ view: "live", app, user, author: author || undefined }));
    list.set(all.filter(shown));
    list.scrollToBottom();
  });

  replace(
    root,
    h(
      "section",
      { class: "live" },
      h("div", { class: "toolbar" }, h("h1", {}, h("a", { href: href({ view: "app", app }) }, app), " · live"), badge.element, counter),
      h(
        "form",
        {
          class: "inline-form",
          on: {
            submit: (e) => {
              e.preventDefault();
              // The user filter is the tail's scope (server side): a new tail.
              shell.go({ view: "live", app, user: userInput.value.trim() || undefined, author: author || undefined });
            },
          },
        },
        userInput,
        h("button", { type: "submit", class: "button" }, "Filter user"),
        authorInput,
      ),
      h("div", { class: "feed" }, list.element),
    ),
  );

  const tail = follow({
    heartbeatMs: 10_000,
    request: (cursor) => ({
      appName: app,
      userId: user ?? "",
      start: cursor ? { case: "cursor", value: cursor } : { case: "fromNow", value: {} },
      heartbeatInterval: { seconds: 10n },
    }),
    onStatus: (st, detail) => badge.set(st, detail),
    onEvent: (s) => {
      all.push(s);
      count++;
      counter.textContent = `${count} events`;
      if (all.length > KEEP) {
        all = all.slice(-KEEP);
        list.set(all.filter(shown));
        list.scrollToBottom();
      } else if (shown(s)) list.push(s);
    },
  });
  return () => tail.stop();
};

function summary(s: StreamedEvent): string {
  const e = s.event;
  if (!e) return "";
  const bits: string[] = [];
  for (const p of e.content?.parts ?? []) {
    if (p.data.case === "text") bits.push(p.data.value);
    if (p.data.case === "functionCall") bits.push(`${p.data.value.name}(…)`);
    if (p.data.case === "functionResponse") bits.push(`↩ ${p.data.value.name}`);
  }
  if (e.errorCode || e.errorMessage) bits.push(`error ${e.errorCode ?? ""} ${e.errorMessage ?? ""}`);
  if (e.actions?.transferToAgent) bits.push(`→ ${e.actions.transferToAgent}`);
  const keys = Object.keys(e.actions?.stateDelta ?? {});
  if (keys.length) bits.push(`Δ ${keys.join(", ")}`);
  return clip(bits.join(" · ").replace(/\s+/g, " "), 200);
}
