import type { JsonValue } from "@bufbuild/protobuf";
import type { Content, Event, Part } from "../../gen/ts/sessionstore/v1/event_pb.js";
import { type Child, h } from "./dom.js";
import { clip, compact, hue, pretty, scopeOf, time } from "./format.js";
import type { Call, DeltaChange, Reply, SessionModel } from "./model.js";

export interface RowContext {
  model: SessionModel;
  /** Seqs whose tool calls and long texts are unfolded. */
  expanded: Set<bigint>;
  selected: bigint | undefined;
  toggle(seq: bigint): void;
  select(seq: bigint): void;
  /** The route of an event of this session. */
  link(seq: bigint): string;
}

const TEXT_FOLDED = 600;

/** One event of the timeline. Every string from the store goes in as text. */
export function eventRow(ctx: RowContext, event: Event, index: number): HTMLElement {
  const open = ctx.expanded.has(event.seq);
  const actions = event.actions;
  const flags: Child[] = [];
  const isError = Boolean(event.errorCode || event.errorMessage);
  if (isError) flags.push(badge("error", `error ${event.errorCode ?? ""}`.trim()));
  if (actions?.escalate) flags.push(badge("escalate", "escalate"));
  if (actions?.transferToAgent !== undefined) flags.push(badge("transfer", `transfer → ${actions.transferToAgent}`));
  if (actions?.compaction) flags.push(badge("compaction", "compaction"));
  if (actions?.rewindBeforeInvocationId !== undefined) flags.push(badge("rewind", `rewind before ${actions.rewindBeforeInvocationId}`));
  if (actions?.endOfAgent) flags.push(badge("plain", "end of agent"));
  if (event.interrupted) flags.push(badge("warn", "interrupted"));
  if (event.turnComplete) flags.push(badge("plain", "turn complete"));
  if (event.longRunningToolIds.length > 0) flags.push(badge("warn", `long-running ${event.longRunningToolIds.join(", ")}`));
  if (actions?.requestedAuthConfigs && Object.keys(actions.requestedAuthConfigs).length > 0) flags.push(badge("warn", "auth requested"));
  if (actions?.requestedToolConfirmations && Object.keys(actions.requestedToolConfirmations).length > 0) {
    flags.push(badge("warn", "confirmation requested"));
  }
  const artifacts = Object.entries(actions?.artifactDelta ?? {});
  const body: Child[] = [];
  body.push(contentView(ctx, event.content, open, event.seq));
  if (actions?.compaction) {
    const c = actions.compaction;
    body.push(
      h(
        "div",
        { class: "compaction" },
        h("div", { class: "muted" }, `compacts events from ${time(c.startTimestamp)} to ${time(c.endTimestamp)}:`),
        contentView(ctx, c.compactedContent, open, event.seq),
      ),
    );
  }
  if (isError) body.push(h("div", { class: "error-line" }, [event.errorCode, event.errorMessage].filter(Boolean).join(": ")));
  if (artifacts.length > 0) {
    body.push(
      h(
        "div",
        { class: "artifacts" },
        "artifacts: ",
        artifacts.map(([name, v]) => h("span", { class: "artifact" }, `${name} v${v}`)),
      ),
    );
  }
  const changes = ctx.model.changes[index] ?? [];
  if (changes.length > 0) body.push(deltaView(changes, ctx.model.initialKnown));

  const row = h(
    "div",
    {
      class: `event${isError ? " is-error" : ""}${actions?.escalate ? " is-escalate" : ""}${ctx.selected === event.seq ? " is-selected" : ""}`,
      "data-seq": String(event.seq),
      "data-author": event.author,
      on: {
        click: (e) => {
          if ((e.target as Element).closest("button, a")) return;
          ctx.select(event.seq);
        },
      },
    },
    h(
      "div",
      { class: "event-head" },
      h("a", { class: "seq", href: ctx.link(event.seq), title: "link to this event" }, `#${event.seq}`),
      h("span", { class: "time" }, time(event.timestamp)),
      h("span", { class: "author", "data-author": event.author }, event.author || "(no author)"),
      event.branch ? h("span", { class: "branch", title: "branch" }, event.branch) : null,
      event.content?.role ? h("span", { class: "role" }, event.content.role) : null,
      event.invocationId
        ? h("span", { class: "invocation", title: `invocation ${event.invocationId}` }, clip(event.invocationId, 14))
        : null,
      flags,
    ),
    body,
  );
  row.style.setProperty("--author-hue", String(hue(event.author)));
  return row;
}

function badge(kind: string, text: string): HTMLElement {
  return h("span", { class: `badge badge-${kind}` }, text);
}

function contentView(ctx: RowContext, content: Content | undefined, open: boolean, seq: bigint): Child {
  if (!content) return null;
  return h(
    "div",
    { class: "content" },
    content.parts.map((p) => partView(ctx, p, open, seq)),
  );
}

function partView(ctx: RowContext, part: Part, open: boolean, seq: bigint): Child {
  const thought = part.thought ? " thought" : "";
  const d = part.data;
  switch (d.case) {
    case "text": {
      const long = d.value.length > TEXT_FOLDED;
      return h(
        "div",
        { class: `text${thought}` },
        open || !long ? d.value : clip(d.value, TEXT_FOLDED),
        long ? h("button", { class: "link-button", on: { click: () => ctx.toggle(seq) } }, open ? "less" : "more") : null,
      );
    }
    case "functionCall": {
      const reply = ctx.model.pairOf(d.value) as Reply | undefined;
      return h(
        "div",
        { class: "call" },
        h(
          "button",
          { class: "fold", "aria-expanded": String(open), "data-fold": "call", on: { click: () => ctx.toggle(seq) } },
          `${open ? "▾" : "▸"} ${d.value.name}(${open ? "" : compact(d.value.args as JsonValue, 80)})`,
        ),
        h(
          "span",
          { class: reply ? "paired" : "pending" },
          reply ? h("a", { href: ctx.link(reply.seq) }, `↩ #${reply.seq}`) : "no response yet",
        ),
        open
          ? [
              h("pre", { class: "json args" }, pretty(d.value.args as JsonValue)),
              reply
                ? h(
                    "div",
                    { class: "response" },
                    h("div", { class: "muted" }, `response in #${reply.seq}:`),
                    h("pre", { class: "json" }, pretty(reply.response.response as JsonValue)),
                  )
                : null,
            ]
          : null,
      );
    }
    case "functionResponse": {
      const call = ctx.model.pairOf(d.value) as Call | undefined;
      return h(
        "div",
        { class: "reply" },
        h(
          "button",
          { class: "fold", "aria-expanded": String(open), "data-fold": "reply", on: { click: () => ctx.toggle(seq) } },
          `${open ? "▾" : "▸"} ↩ ${d.value.name} → ${open ? "" : compact(d.value.response as JsonValue, 80)}`,
        ),
        call ? h("a", { class: "paired", href: ctx.link(call.seq) }, `call #${call.seq}`) : null,
        open ? h("pre", { class: "json" }, pretty(d.value.response as JsonValue)) : null,
      );
    }
    case "inlineData":
      return h(
        "div",
        { class: "blob" },
        `[${d.value.mimeType || "data"}, ${d.value.data.length} bytes${d.value.displayName ? `, ${d.value.displayName}` : ""}]`,
      );
    case "fileData":
      // A URI from an event is shown, never followed: it could be javascript:.
      return h(
        "div",
        { class: "blob" },
        `[file ${d.value.mimeType} ${d.value.fileUri}${d.value.displayName ? ` (${d.value.displayName})` : ""}]`,
      );
    case "executableCode":
      return h("pre", { class: "code", "data-language": d.value.language }, d.value.code);
    case "codeExecutionResult":
      return h(
        "div",
        { class: "code-result" },
        h("span", { class: "badge badge-plain" }, d.value.outcome),
        h("pre", { class: "code" }, d.value.output ?? ""),
      );
    default:
      return part.thoughtSignature ? h("div", { class: "muted" }, "[thought signature]") : null;
  }
}

/** An event's state delta as a diff against the state before it, scopes apart. */
export function deltaView(changes: DeltaChange[], beforeKnown: boolean): HTMLElement {
  return h(
    "div",
    { class: "delta" },
    changes.map((c) =>
      h(
        "div",
        { class: `delta-row scope-${scopeOf(c.key)}` },
        h("span", { class: "scope" }, scopeOf(c.key)),
        h("span", { class: "key" }, c.key),
        c.had
          ? h("span", { class: "before" }, compact(c.before, 200))
          : h("span", { class: "muted" }, beforeKnown ? "(new)" : "(new or unknown)"),
        h("span", { class: "arrow" }, "→"),
        h("span", { class: "after" }, compact(c.after, 200)),
      ),
    ),
  );
}
