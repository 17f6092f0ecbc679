import { hashToken, newToken } from "../../auth/tokens.js";
import type { Command } from "../command.js";
import { choice, parseOptions, renderHelp, text, toggle, UsageError } from "../options.js";

// Makes a bearer token and the entry to put in the tokens file. The secret is
// printed once, to the operator; the server only ever sees its hash.

const options = {
  apps: text("apps", "apps the token may use, comma-separated, or `*` for every app", { valueName: "APP[,APP...]" }),
  user: text("user", "limit the token to this user's sessions and state", { valueName: "USER" }),
  readOnly: toggle("read-only", "the token may only read"),
  scope: choice("scope", ["none", "metrics"], "none", "`metrics`: the token may scrape `/metrics` (it needs no `--apps` then)", {
    valueName: "SCOPE",
  }),
  name: text("name", "the token's name in the configuration and in logs (default: token-DATE)", { valueName: "NAME" }),
};

const help = () =>
  renderHelp(
    "usage: sessionstore token --apps APP[,APP...] | --apps '*' | --scope metrics [--user USER] [--read-only] [--name NAME]",
    'Makes a new bearer token and prints it with the entry for SESSIONSTORE_TOKENS_FILE\'s "tokens" list (only its sha256).',
    options,
  );

export const token: Command = {
  name: "token",
  summary: "make a bearer token and its entry for the tokens file",
  options,
  async run(argv, io) {
    const { values, help: wanted } = parseOptions(options, argv);
    if (wanted) {
      io.stdout.write(help());
      return 0;
    }
    const scope = values.scope === "none" ? undefined : values.scope;
    if (!values.apps && !scope)
      throw new UsageError("say which apps the token may use (--apps APP[,APP...] or --apps '*'), or give --scope metrics");
    const apps =
      values.apps === undefined
        ? undefined
        : values.apps === "*"
          ? "*"
          : values.apps
              .split(",")
              .map((a) => a.trim())
              .filter(Boolean);
    if (Array.isArray(apps) && apps.length === 0) throw new UsageError("--apps names no app");
    const secret = newToken();
    const entry = {
      name: values.name ?? `token-${new Date().toISOString().slice(0, 10)}`,
      sha256: hashToken(secret),
      ...(apps ? { apps } : {}),
      ...(values.user ? { user: values.user } : {}),
      ...(values.readOnly ? { readOnly: true } : {}),
      ...(scope ? { scopes: [scope] } : {}),
    };
    io.stdout.write(
      `token (give to the client, store nowhere else):\n  ${secret}\n\nentry for SESSIONSTORE_TOKENS_FILE's "tokens" list:\n  ${JSON.stringify(entry)}\n`,
    );
    return 0;
  },
};
