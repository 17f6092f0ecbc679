// What one `npm run bench` does, full or smoke.

export interface TailPlan {
  tails: number;
  sessions: number;
  /** Appends per second, round-robin over the sessions. */
  rate: number;
  seconds: number;
}

export interface Plan {
  mode: "full" | "smoke" | "profile";
  reps: number;
  /** Writers on distinct sessions. */
  appendWriters: number[];
  /** Writers on one hot session (0: none). */
  hotWriters: number;
  appendWarmupSeconds: number;
  appendSeconds: number;
  historySizes: number[];
  windowWarmup: number;
  windowIterations: number;
  adkWindowIterations: number;
  listCount: number;
  listWarmup: number;
  listIterations: number;
  adkListIterations: number;
  tails: TailPlan[];
  adk: boolean;
  pgbench: boolean;
  nodePg: boolean;
  /** Connections of the server's pool and of ADK's engine. */
  poolSize: number;
  /** Workloads to run (`--only append,window`); all by default. */
  only: Workload[];
}

export const WORKLOADS = ["append", "window", "list", "tails", "turn", "scale"] as const;
export type Workload = (typeof WORKLOADS)[number];

export const fullPlan: Plan = {
  mode: "full",
  reps: 3,
  appendWriters: [1, 16, 64],
  hotWriters: 16,
  appendWarmupSeconds: 2,
  appendSeconds: 8,
  historySizes: [100, 10_000, 100_000],
  windowWarmup: 30,
  windowIterations: 300,
  adkWindowIterations: 300,
  listCount: 100_000,
  listWarmup: 10,
  listIterations: 200,
  adkListIterations: 3,
  tails: [
    { tails: 1000, sessions: 1000, rate: 200, seconds: 5 },
    { tails: 1000, sessions: 1, rate: 10, seconds: 5 },
  ],
  adk: true,
  pgbench: true,
  nodePg: true,
  poolSize: 20,
  only: [...WORKLOADS],
};

/** Checks that the harness still works end to end; the numbers mean nothing. */
export const smokePlan: Plan = {
  mode: "smoke",
  reps: 1,
  appendWriters: [1, 4],
  hotWriters: 4,
  appendWarmupSeconds: 0.2,
  appendSeconds: 0.5,
  historySizes: [100, 1000],
  windowWarmup: 2,
  windowIterations: 10,
  adkWindowIterations: 10,
  listCount: 2000,
  listWarmup: 1,
  listIterations: 10,
  adkListIterations: 1,
  tails: [
    { tails: 20, sessions: 20, rate: 40, seconds: 0.5 },
    { tails: 20, sessions: 1, rate: 10, seconds: 0.5 },
  ],
  adk: false,
  pgbench: true,
  nodePg: true,
  poolSize: 20,
  only: [...WORKLOADS],
};

/** The append and read paths under `node --cpu-prof`, with the server's queries counted. */
export const profilePlan: Plan = {
  ...fullPlan,
  mode: "profile",
  reps: 1,
  appendWriters: [64],
  hotWriters: 0,
  appendWarmupSeconds: 1,
  appendSeconds: 10,
  historySizes: [100_000],
  windowIterations: 2000,
  listIterations: 500,
  // Fan-out: many tails of one session, where each event is sent a thousand times.
  tails: [{ tails: 1000, sessions: 1, rate: 10, seconds: 10 }],
  adk: false,
  pgbench: false,
  nodePg: false,
};
