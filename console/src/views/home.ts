import { consoleApi } from "../api.js";
import { h, replace } from "../dom.js";
import { href } from "../routes.js";
import type { Shell, View } from "../shell.js";

/** Apps: those with sessions (or the token's apps), or one typed in. */
export const homeView: View<{ view: "home" }> = (shell: Shell, _route, root) => {
  const list = h("ul", { class: "apps", "aria-label": "apps" });
  const more = h("div", {});
  const input = h("input", { type: "text", name: "app", placeholder: "app name", "aria-label": "app name", autocomplete: "off" });
  const load = async (pageToken: string) => {
    try {
      const res = await consoleApi.listApps({ pageSize: 100, pageToken });
      for (const app of res.appNames) {
        list.append(
          h(
            "li",
            {},
            h("a", { href: href({ view: "app", app }), "data-app": app }, app),
            " ",
            h("a", { class: "muted", href: href({ view: "live", app }) }, "live feed"),
          ),
        );
      }
      if (res.appNames.length === 0 && !pageToken) list.append(h("li", { class: "muted" }, "No sessions stored yet."));
      replace(
        more,
        res.nextPageToken ? h("button", { class: "button", on: { click: () => void load(res.nextPageToken) } }, "More apps") : null,
      );
    } catch (err) {
      replace(more, shell.failure(err));
    }
  };
  replace(
    root,
    h(
      "section",
      { class: "home" },
      h("h1", {}, "Apps"),
      h(
        "form",
        {
          class: "inline-form",
          on: {
            submit: (e) => {
              e.preventDefault();
              const app = input.value.trim();
              if (app) shell.go({ view: "app", app });
            },
          },
        },
        input,
        h("button", { type: "submit", class: "button" }, "Open"),
      ),
      list,
      more,
    ),
  );
  void load("");
  return undefined;
};
