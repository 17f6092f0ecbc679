import { h } from "./dom.js";

/** The form that asks for a bearer token; `error` says why the last one was refused. */
export function tokenPrompt(error: string | undefined, submit: (token: string) => void): HTMLElement {
  const input = h("input", {
    type: "password",
    id: "token",
    name: "token",
    autocomplete: "off",
    placeholder: "sst_…",
    "aria-describedby": "token-help",
  });
  const form = h(
    "form",
    {
      class: "token-form",
      on: {
        submit: (e) => {
          e.preventDefault();
          const value = input.value.trim();
          if (value) submit(value);
        },
      },
    },
    h("h2", {}, "This server requires a token"),
    h(
      "p",
      { id: "token-help", class: "muted" },
      "Paste a bearer token (npm run token -- --apps APP makes one). It is kept for this tab only and sent only to this server.",
    ),
    error ? h("p", { class: "error-line", role: "alert" }, error) : null,
    h("label", { for: "token" }, "Token"),
    input,
    h("button", { type: "submit", class: "button primary" }, "Open console"),
  );
  queueMicrotask(() => input.focus());
  return form;
}
