import { Code, ConnectError } from "@connectrpc/connect";
import type { WhoAmIResponse } from "../../gen/ts/sessionstore/v1/console_service_pb.js";
import { h } from "./dom.js";
import { href, type Route } from "./routes.js";

/** What every view gets: the caller's grant and the page's shared parts. */
export interface Shell {
  grant: WhoAmIResponse;
  go(route: Route): void;
  confirm(message: string, confirmLabel: string): Promise<boolean>;
  /** Shows a failed call; UNAUTHENTICATED asks for a token again. */
  failure(err: unknown): HTMLElement;
}

/** A view renders into `root` and returns what stops it (open streams). */
export type View<R extends Route> = (shell: Shell, route: R, root: HTMLElement) => (() => void) | undefined;

/** Whether the grant allows writes to this app (and user). The server decides; this only hides buttons. */
export function canWrite(grant: WhoAmIResponse, app: string, user?: string): boolean {
  if (grant.readOnly) return false;
  if (!grant.allApps && !grant.apps.includes(app)) return false;
  return !grant.userId || user === undefined || grant.userId === user;
}

export function describeError(err: unknown): string {
  const ce = ConnectError.from(err);
  return `${Code[ce.code] ?? ce.code}: ${ce.rawMessage}`;
}

export function go(route: Route): void {
  location.hash = href(route);
}

/** A modal confirmation; resolves true only when the named action was chosen. */
export function confirmDialog(message: string, confirmLabel: string): Promise<boolean> {
  return new Promise((resolve) => {
    const dialog = h("dialog", { class: "confirm", "aria-label": "confirm" });
    const done = (ok: boolean) => {
      dialog.close();
      dialog.remove();
      resolve(ok);
    };
    dialog.append(
      h("p", {}, message),
      h(
        "div",
        { class: "actions" },
        h("button", { type: "button", class: "button", "data-action": "cancel", on: { click: () => done(false) } }, "Cancel"),
        h("button", { type: "button", class: "button danger", "data-action": "confirm", on: { click: () => done(true) } }, confirmLabel),
      ),
    );
    dialog.addEventListener("cancel", () => done(false));
    document.body.append(dialog);
    dialog.showModal();
  });
}
