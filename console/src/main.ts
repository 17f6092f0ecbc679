import { Code, ConnectError } from "@connectrpc/connect";
import type { WhoAmIResponse } from "../../gen/ts/sessionstore/v1/console_service_pb.js";
import { consoleApi, setToken, token } from "./api.js";
import { h, replace } from "./dom.js";
import { parse } from "./routes.js";
import { confirmDialog, describeError, go, type Shell } from "./shell.js";
import "./style.css";
import { tokenPrompt } from "./token-prompt.js";
import { homeView } from "./views/home.js";
import { liveView } from "./views/live.js";
import { sessionView } from "./views/session.js";
import { sessionsView } from "./views/sessions.js";

const app = document.getElementById("app") as HTMLElement;
const grantLine = h("div", { class: "grant", "data-testid": "grant" });
const main = h("main", { id: "main" });
app.append(h("header", { class: "top" }, h("a", { class: "brand", href: "#/" }, "Sessionstore"), grantLine), main);

let dispose: (() => void) | undefined;
let shell: Shell | undefined;

function describeGrant(grant: WhoAmIResponse): string {
  if (!grant.authRequired) return "no authentication on this server: full access";
  const apps = grant.allApps ? "every app" : `apps ${grant.apps.join(", ")}`;
  return [
    `token "${grant.tokenName}"`,
    apps,
    grant.userId ? `user ${grant.userId} only` : "",
    grant.readOnly ? "read-only" : "read and write",
  ]
    .filter(Boolean)
    .join(" · ");
}

function render(): void {
  if (!shell) return;
  dispose?.();
  dispose = undefined;
  const route = parse(location.hash);
  main.replaceChildren();
  switch (route.view) {
    case "home":
      dispose = homeView(shell, route, main);
      break;
    case "app":
      dispose = sessionsView(shell, route, main);
      break;
    case "session":
      dispose = sessionView(shell, route, main);
      break;
    case "live":
      dispose = liveView(shell, route, main);
      break;
  }
}

function askForToken(error: string | undefined): void {
  dispose?.();
  dispose = undefined;
  shell = undefined;
  replace(grantLine);
  replace(
    main,
    tokenPrompt(error, (value) => {
      setToken(value);
      void start();
    }),
  );
}

async function start(): Promise<void> {
  let grant: WhoAmIResponse;
  try {
    grant = await consoleApi.whoAmI({});
  } catch (err) {
    const ce = ConnectError.from(err);
    if (ce.code === Code.Unauthenticated) {
      const had = token() !== undefined;
      setToken(undefined);
      askForToken(had ? `The token was refused: ${ce.rawMessage}` : undefined);
      return;
    }
    replace(main, h("p", { class: "error-line", role: "alert" }, `Cannot reach the server: ${describeError(err)}`));
    return;
  }
  document.body.classList.toggle("read-only", grant.readOnly);
  replace(
    grantLine,
    h("span", {}, describeGrant(grant)),
    grant.authRequired
      ? h(
          "button",
          {
            class: "link-button",
            "data-action": "sign-out",
            on: {
              click: () => {
                setToken(undefined);
                askForToken(undefined);
              },
            },
          },
          "forget token",
        )
      : null,
  );
  shell = {
    grant,
    go,
    confirm: confirmDialog,
    failure(err) {
      const ce = ConnectError.from(err);
      if (ce.code === Code.Unauthenticated) {
        setToken(undefined);
        queueMicrotask(() => askForToken(`The token was refused: ${ce.rawMessage}`));
      }
      return h("p", { class: "error-line", role: "alert" }, describeError(err));
    },
  };
  render();
}

window.addEventListener("hashchange", render);
void start();
