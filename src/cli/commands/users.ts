import { clientOptions, connect, required, scopeOptions } from "../client.js";
import { type Command, withSubcommands } from "../command.js";
import { parseOptions, toggle, UsageError } from "../options.js";
import { helpOut } from "./sessions.js";

const eraseOptions = {
  ...clientOptions,
  app: scopeOptions.app,
  user: scopeOptions.user,
  yes: toggle("yes", "really erase: without it nothing is deleted", { short: "y" }),
};

const erase: Command = {
  name: "erase",
  summary: "delete a user's sessions, events, user state and memories in one app",
  options: eraseOptions,
  async run(argv, io) {
    const { values, help } = parseOptions(eraseOptions, argv, io.env);
    if (help) return helpOut(io, "users erase --app APP --user USER --yes", this, eraseOptions);
    const appName = required(values.app, "--app");
    const userId = required(values.user, "--user");
    if (!values.yes) throw new UsageError(`erasing user ${userId} of ${appName} deletes their data for good; add --yes to do it`);
    const res = await connect(values).eraseUserData({ appName, userId }, { signal: io.signal });
    io.stdout.write(
      `erased user ${userId} of ${appName}: ${res.sessionsDeleted} sessions, ${res.eventsDeleted} events, ${res.memoriesDeleted} memories\n`,
    );
    return 0;
  },
};

export const users = withSubcommands("users", "erase a user's data (erase)", [erase]);
