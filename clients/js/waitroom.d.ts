// Types of waitroom.js, written by hand: keep them in step with it.

/** A status answer of GET {prefix}/api/status (docs/visitor-api.md). */
export interface Status {
  event: string;
  status: "scheduled" | "prequeue" | "waiting_for_draw" | "waiting" | "admitted" | "sold_out" | "paused" | "closed";
  /** People ahead: 0 is next in line; -1 or absent before the draw. */
  position?: number;
  position_display?: "exact" | "approximate" | "hidden";
  /** Seconds to the turn, -1 while estimating. */
  eta_seconds?: number;
  eta_low?: number;
  eta_high?: number;
  /** How long to wait before the next poll; the client never polls sooner. */
  refresh_seconds: number;
  on_sale_at?: string;
  opens_at?: string;
  /** With status admitted: the same-site path to go to. */
  redirect?: string;
  /** paused: "maintenance" while the site is down; closed: "session_ended" and others. */
  reason?: string;
  /** The operator's message: plain text, never markup. */
  notice?: { text: string; texts?: Record<string, string> } | null;
  lane?: string;
  [key: string]: unknown;
}

/** A proof-of-work challenge as GET {prefix}/api/challenge gives it. */
export interface PowChallenge {
  token: string;
  /** 32 hex digits. */
  seed: string;
  bits: number;
  puzzles: number;
  /** RFC 3339, on the server's clock. */
  expires_at: string;
}

export interface SolveOptions {
  signal?: AbortSignal;
  /** The server's clock minus this one's, in ms. */
  skew?: number;
  onProgress?: (fraction: number, info: { solved: number; puzzles: number }) => void;
}

/** A solver: resolves to the nonces of sub-puzzles 0..puzzles-1. */
export type Solver = (challenge: PowChallenge, options: SolveOptions) => Promise<number[]>;

export interface WaitingRoomOptions {
  /** The event id (events[].id in the room's configuration). */
  event: string;
  /** The room's path prefix, serve.prefix; default "/_wr". */
  prefix?: string;
  /** Scheme and host of the room when it is not this page's origin (tests, Node); default "" (same origin). */
  baseURL?: string;
  /** The same-site path to return to once admitted; default the event's landing_path. */
  returnTo?: string;
  /** The fetch to use; default globalThis.fetch. It must carry the room's cookies. */
  fetch?: typeof fetch;
  /** The proof-of-work solver; default solvePow (in this thread). */
  solve?: Solver;
  /** A poll waits refresh_seconds × (1 + up to jitter); default 0.2. */
  jitter?: number;
  /** Longest wait between retries after errors, in seconds; default 60. */
  maxBackoff?: number;
  /** Longest time for one request, in ms; default 15000. */
  timeout?: number;
  /** Aborting it stops the room for good. */
  signal?: AbortSignal;
  /** Random numbers in [0, 1) for the jitter; default Math.random. */
  random?: () => number;
}

/** What the "error" event carries. */
export interface WaitingRoomError {
  /** The API's error code (rate_limited, no_ticket, blocked, login_required, ...), or network, cookies, pow_failed, captcha_required, http_<status>. */
  code: string;
  /** The HTTP status; 0 for a network error or timeout. */
  status?: number;
  message: string;
  /** true: the client retries by itself in retryIn seconds; false: it stopped. */
  retrying: boolean;
  retryIn?: number;
  /** With login_required or identity_invalid: where the site logs in. */
  loginURL?: string;
  /** With captcha_required: the widget the room asks for. */
  captcha?: unknown;
  cause?: unknown;
}

export interface WaitingRoomEvents {
  /** Every status answer. */
  status: Status;
  /** A status that is not final (scheduled, prequeue, waiting_for_draw, waiting, paused). */
  position: Status;
  /** The turn came: the pass cookie is set; go to redirect. Polling has ended. */
  admitted: Status;
  /** Nothing is left. Polling has ended. */
  sold_out: Status;
  /** The queue closed (or the visitor's session ended). Polling has ended. */
  closed: Status;
  /** The room asks for a proof of work before the join. */
  challenge: { kind: "pow"; bits: number; puzzles: number };
  /** The proof of work's progress, 0 to 1. */
  progress: { fraction: number };
  error: WaitingRoomError;
}

export declare class WaitingRoom {
  constructor(options: WaitingRoomOptions);
  readonly event: string;
  /** Whether it is polling (or joining). */
  readonly running: boolean;
  /** The last status answer, or null. */
  readonly status: Status | null;
  /** Calls fn on each occurrence of the event; returns a function that removes it. */
  on<K extends keyof WaitingRoomEvents>(name: K, fn: (detail: WaitingRoomEvents[K]) => void): () => void;
  off<K extends keyof WaitingRoomEvents>(name: K, fn: (detail: WaitingRoomEvents[K]) => void): void;
  /** Polls (keeping a place the cookies hold) and joins when there is none. */
  start(): void;
  /** Ends timers and the request or proof of work under way. */
  stop(): void;
}

/** Solves a proof-of-work challenge in this thread, yielding every few tens of ms. */
export declare function solvePow(challenge: PowChallenge, options?: SolveOptions): Promise<number[]>;

/** SHA-256(seed || index (uint32 BE) || nonce (uint64 BE)). */
export declare function powDigest(seedHex: string, index: number, nonce: number): Uint8Array;
