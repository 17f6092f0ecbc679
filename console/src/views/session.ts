import { type JsonObject, type JsonValue, toJsonString } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { type Event, EventSchema } from "../../../gen/ts/sessionstore/v1/event_pb.js";
import { store } from "../api.js";
import { diffState } from "../diff.js";
import { h, replace } from "../dom.js";
import { eventRow, type RowContext } from "../event-view.js";
import { compact, hue, pretty, scopeOf, time } from "../format.js";
import { SessionModel } from "../model.js";
import { href } from "../routes.js";
import { canWrite, type Shell, type View } from "../shell.js";
import { follow, statusBadge } from "../tail.js";
import { VirtualList } from "../virtual-list.js";

const PAGE = 1000;

type SessionRoute = { view: "session"; app: string; user: string; session: string; seq?: bigint | undefined };

/**
 * One session: the timeline of its events (virtualised), the state replayed
 * after any event with the diff from the one before, and live follow.
 */
export const sessionView: View<SessionRoute> = (shell: Shell, route, root) => {
  const key = { appName: route.app, userId: route.user, sessionId: route.session };
  let disposed = false;
  let tail: { stop(): void } | undefined;
  let model = new SessionModel({});
  const expanded = new Set<bigint>();
  let selected = route.seq;

  const badge = statusBadge();
  const meta = h("div", { class: "meta" });
  const authors = h("div", { class: "authors", "aria-label": "authors" });
  const status = h("div", { class: "status", role: "status" });
  const followBox = h("input", { type: "checkbox", id: "follow", checked: route.seq === undefined });

  const ctx: RowContext = {
    get model() {
      return model;
    },
    expanded,
    get selected() {
      return selected;
    },
    toggle(seq) {
      if (expanded.has(seq)) expanded.delete(seq);
      else expanded.add(seq);
      list.refresh(model.indexOf(seq));
    },
    select(seq) {
      selectEvent(seq, false);
    },
    link: (seq) => href({ ...route, seq }),
  };
  const list = new VirtualList<Event>((event, index) => eventRow(ctx, event, index), { estimate: 76, label: "events" });
  list.stickToBottom = followBox.checked;
  followBox.addEventListener("change", () => {
    list.stickToBottom = followBox.checked;
    if (followBox.checked) list.scrollToBottom();
  });
  // A reader who scrolls up stops following; scrolling back down resumes it.
  for (const type of ["wheel", "touchmove", "keydown"] as const) {
    list.element.addEventListener(type, () =>
      requestAnimationFrame(() => {
        followBox.checked = list.atBottom();
        list.stickToBottom = followBox.checked;
      }),
    );
  }

  // The replay panel.
  const scrub = h("input", { type: "range", min: "0", max: "0", step: "1", value: "0", "aria-label": "replay to event" });
  const scrubLabel = h("span", { class: "scrub-label", "data-testid": "scrub-label" });
  const replayBody = h("div", { class: "replay-body" });
  const eventPanel = h("div", { class: "event-panel", "data-testid": "event-panel" }, h("p", { class: "muted" }, "Select an event."));
  let replayToken = 0;
  let replaySeq = -1n;

  const showReplay = async (seq: bigint) => {
    const token = ++replayToken;
    replaySeq = seq;
    scrub.value = String(seq);
    scrubLabel.textContent = `state after event ${seq} of ${model.lastSeq}`;
    try {
      const [after, before] = await Promise.all([
        store.getSession({ ...key, asOfSeq: seq, numRecentEvents: 0 }),
        seq > 0n ? store.getSession({ ...key, asOfSeq: seq - 1n, numRecentEvents: 0 }) : undefined,
      ]);
      if (token !== replayToken || disposed) return;
      const state = (after.session?.state ?? {}) as JsonObject;
      const prev = (before?.session?.state ?? {}) as JsonObject;
      const changes = seq > 0n ? diffState(prev, state) : [];
      replace(
        replayBody,
        h("h3", {}, seq > 0n ? `Changed by event ${seq}` : "Create-time state"),
        seq === 0n
          ? null
          : changes.length === 0
            ? h("p", { class: "muted" }, "No state change.")
            : h(
                "div",
                { class: "delta", "data-testid": "replay-diff" },
                changes.map((c) =>
                  h(
                    "div",
                    { class: `delta-row scope-${scopeOf(c.key)} change-${c.kind}` },
                    h("span", { class: "scope" }, scopeOf(c.key)),
                    h("span", { class: "key" }, c.key),
                    c.kind === "added" ? h("span", { class: "muted" }, "(new)") : h("span", { class: "before" }, compact(c.before, 200)),
                    h("span", { class: "arrow" }, "→"),
                    c.kind === "removed" ? h("span", { class: "muted" }, "(gone)") : h("span", { class: "after" }, compact(c.after, 200)),
                  ),
                ),
              ),
        h("h3", {}, "State"),
        h("pre", { class: "json", "data-testid": "replay-json" }, stableJson(state)),
        h(
          "p",
          { class: "muted small" },
          "app: and user: keys are shown as this session wrote them; other sessions may have changed them since (see the live state).",
        ),
      );
    } catch (err) {
      if (token !== replayToken || disposed) return;
      const ce = ConnectError.from(err);
      replace(
        replayBody,
        ce.code === Code.FailedPrecondition
          ? h("p", { class: "muted", "data-testid": "replay-unavailable" }, ce.rawMessage)
          : shell.failure(err),
      );
    }
  };
  let scrubTimer: ReturnType<typeof setTimeout> | undefined;
  scrub.addEventListener("input", () => {
    clearTimeout(scrubTimer);
    // Scrubbing to an event selects it: the timeline shows where the state is.
    scrubTimer = setTimeout(() => {
      const seq = BigInt(scrub.value);
      if (seq > 0n) selectEvent(seq, true);
      else void showReplay(0n);
    }, 60);
  });
  const step = (by: bigint) => {
    const next = BigInt(scrub.value) + by;
    if (next >= 0n && next <= model.lastSeq) selectEvent(next, true);
  };

  const selectEvent = (seq: bigint, scroll: boolean) => {
    const previous = selected;
    selected = seq;
    history.replaceState(null, "", seq > 0n ? href({ ...route, seq }) : href({ ...route, seq: undefined }));
    if (previous !== undefined) list.refresh(model.indexOf(previous));
    const index = model.indexOf(seq);
    if (index >= 0) {
      list.refresh(index);
      if (scroll) {
        followBox.checked = false;
        list.stickToBottom = false;
        list.scrollTo(index);
      }
      const event = model.events[index] as Event;
      replace(
        eventPanel,
        h("h3", {}, `Event ${event.seq} · ${event.author}`),
        h("div", { class: "muted" }, `${time(event.timestamp)} · id ${event.id}`),
        h(
          "button",
          {
            class: "button",
            on: { click: () => void navigator.clipboard?.writeText(toJsonString(EventSchema, event, { prettySpaces: 2 })) },
          },
          "Copy JSON",
        ),
        h("pre", { class: "json" }, toJsonString(EventSchema, event, { prettySpaces: 2 })),
      );
    }
    if (seq !== replaySeq) void showReplay(seq);
  };

  const del = async () => {
    const ok = await shell.confirm(
      `Delete session "${route.session}" of user "${route.user}" and all its events? This cannot be undone.`,
      "Delete session",
    );
    if (!ok) return;
    try {
      await store.deleteSession(key);
      shell.go({ view: "app", app: route.app, user: route.user });
    } catch (err) {
      replace(status, shell.failure(err));
    }
  };

  const renderMeta = (revision: bigint, created: string, updated: string, live: JsonObject) => {
    replace(
      meta,
      h("span", {}, "app ", h("a", { href: href({ view: "app", app: route.app }) }, route.app)),
      h("span", {}, "user ", h("a", { href: href({ view: "app", app: route.app, user: route.user }) }, route.user)),
      h("span", { "data-testid": "revision" }, `${revision} events`),
      h("span", {}, `created ${created}`),
      h("span", {}, `updated ${updated}`),
      h("details", { class: "live-state" }, h("summary", {}, "live state"), h("pre", { class: "json" }, pretty(live as JsonValue))),
    );
  };

  const renderAuthors = () => {
    const branches = new Map<string, Set<string>>();
    for (const e of model.events) {
      const set = branches.get(e.author) ?? new Set<string>();
      if (e.branch) set.add(e.branch);
      branches.set(e.author, set);
    }
    replace(
      authors,
      [...branches].map(([author, b]) => {
        const chip = h("span", { class: "author-chip", title: b.size ? `branches: ${[...b].join(", ")}` : "" }, author || "(no author)");
        chip.style.setProperty("--author-hue", String(hue(author)));
        return chip;
      }),
    );
  };

  replace(
    root,
    h(
      "section",
      { class: "session" },
      h(
        "div",
        { class: "toolbar" },
        h("h1", { class: "mono" }, route.session),
        badge.element,
        h("label", { class: "follow", for: "follow" }, followBox, " follow"),
        h("span", { class: "muted small keys" }, "keys: j/k next/previous, o fold, f follow"),
        canWrite(shell.grant, route.app, route.user)
          ? h("button", { class: "button danger", "data-action": "delete-session", on: { click: () => void del() } }, "Delete session…")
          : null,
      ),
      meta,
      authors,
      status,
      h(
        "div",
        { class: "panes" },
        h("div", { class: "timeline" }, list.element),
        h(
          "aside",
          { class: "side" },
          h(
            "div",
            { class: "replay", "data-testid": "replay" },
            h("h2", {}, "State replay"),
            h(
              "div",
              { class: "scrubber" },
              h("button", { class: "button", "aria-label": "previous event", on: { click: () => step(-1n) } }, "◀"),
              scrub,
              h("button", { class: "button", "aria-label": "next event", on: { click: () => step(1n) } }, "▶"),
            ),
            scrubLabel,
            replayBody,
          ),
          eventPanel,
        ),
      ),
    ),
  );

  // Keys for reading a long session: j/k next/previous event, o fold or
  // unfold the selected one, f follow.
  const onKey = (e: KeyboardEvent) => {
    if (e.ctrlKey || e.metaKey || e.altKey || (e.target as Element).closest("input, textarea, select, dialog")) return;
    const at = selected ?? model.lastSeq;
    if (e.key === "j" && at < model.lastSeq) selectEvent(at + 1n, true);
    else if (e.key === "k" && at > 1n) selectEvent(at - 1n, true);
    else if (e.key === "o" && selected !== undefined) ctx.toggle(selected);
    else if (e.key === "f") {
      followBox.checked = !followBox.checked;
      followBox.dispatchEvent(new Event("change"));
    } else return;
    e.preventDefault();
  };
  document.addEventListener("keydown", onKey);

  const load = async () => {
    status.textContent = "loading…";
    const [live, initial] = await Promise.all([
      store.getSession({ ...key, numRecentEvents: 0 }),
      store.getSession({ ...key, asOfSeq: 0n, numRecentEvents: 0 }).then(
        (r) => (r.session?.state ?? {}) as JsonObject,
        (err: unknown) => {
          if (ConnectError.from(err).code === Code.FailedPrecondition) return undefined;
          throw err;
        },
      ),
    ]);
    if (disposed) return;
    const s = live.session;
    renderMeta(s?.revision ?? 0n, time(s?.createTime), time(s?.lastUpdateTime), (s?.state ?? {}) as JsonObject);
    model = new SessionModel(initial);
    list.set([]);
    let pageToken = "";
    do {
      const page = await store.listEvents({ ...key, pageSize: PAGE, pageToken });
      if (disposed) return;
      const added = page.events.filter((e) => model.add(e));
      list.push(...added);
      scrub.max = String(model.lastSeq);
      status.textContent = `${model.events.length} events${page.nextPageToken ? " (loading…)" : ""}`;
      pageToken = page.nextPageToken;
    } while (pageToken);
    status.textContent = `${model.events.length} events${initial === undefined ? " · created before create-time state was kept: no replay" : ""}`;
    renderAuthors();
    if (selected !== undefined && model.indexOf(selected) >= 0) selectEvent(selected, true);
    else void showReplay(model.lastSeq);
    if (followBox.checked) list.scrollToBottom();
    tail = follow({
      heartbeatMs: 10_000,
      request: () => ({ ...key, start: { case: "afterSeq", value: model.lastSeq }, heartbeatInterval: { seconds: 10n } }),
      onStatus: (st, detail) => badge.set(st, st === "ended" && detail.includes("not found") ? "session deleted" : detail),
      onEvent: (streamed) => {
        const event = streamed.event;
        if (!event) return;
        const atLatest = replaySeq === model.lastSeq;
        const knownAuthors = model.authors.size;
        if (!model.add(event)) return;
        list.push(event);
        scrub.max = String(model.lastSeq);
        status.textContent = `${model.events.length} events`;
        const m = meta.querySelector("[data-testid=revision]");
        if (m) m.textContent = `${model.lastSeq} events`;
        if (model.authors.size !== knownAuthors || event.branch) renderAuthors();
        if (atLatest && selected === undefined) void showReplay(model.lastSeq);
        else scrubLabel.textContent = `state after event ${replaySeq} of ${model.lastSeq}`;
      },
    });
  };
  load().catch((err: unknown) => {
    if (!disposed) replace(status, shell.failure(err));
  });

  return () => {
    disposed = true;
    document.removeEventListener("keydown", onKey);
    tail?.stop();
    clearTimeout(scrubTimer);
  };
};

/** JSON with keys sorted at every level, so equal states print the same. */
export function stableJson(value: JsonValue): string {
  const sort = (v: JsonValue): JsonValue => {
    if (Array.isArray(v)) return v.map(sort);
    if (v && typeof v === "object") {
      const out: JsonObject = {};
      // defineProperty: a key "__proto__" stays a key.
      for (const k of Object.keys(v).sort()) Object.defineProperty(out, k, { value: sort(v[k] as JsonValue), enumerable: true });
      return out;
    }
    return v;
  };
  return JSON.stringify(sort(value), null, 2);
}
