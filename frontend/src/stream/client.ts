// The replay websocket client: ordering, de-duplication by position, resuming with `after=` on reconnect,
// keep-alive pings, and the playback controls (docs/streaming.md).
//
// Every positioned message is accepted only when it is exactly the next one: the next part of the current
// cycle, or part 0 of a later cycle. An older or equal position is a duplicate and dropped. Anything else is
// a gap: in live mode the client reconnects with `after=<last accepted position>`, so the server resends
// exactly what is missing; in playback mode it is a leftover of a cycle sent before a seek and is dropped.

import {
  CLOSE_BAD_REQUEST,
  CLOSE_NOT_FOUND,
  CLOSE_UNAUTHENTICATED,
  comparePos,
  formatAfter,
  hasPos,
  parseAfter,
  type ClientMsg,
  type Pos,
  type ServerMsg,
} from "./protocol";

export interface SocketLike {
  readyState: number;
  onopen: ((ev: unknown) => void) | null;
  onmessage: ((ev: { data: unknown }) => void) | null;
  onclose: ((ev: { code: number; reason?: string }) => void) | null;
  onerror: ((ev: unknown) => void) | null;
  send(data: string): void;
  close(code?: number, reason?: string): void;
}

export type ConnectionState = "idle" | "connecting" | "open" | "reconnecting" | "closed" | "failed";

export interface StreamOptions {
  replayId: string;
  mode: "live" | "playback";
  /** Resume after this position ("12.3" or "12"); default: the start of the replay. */
  after?: string;
  topk?: number;
  /** Build the websocket URL; default: ws(s)://<this host>/ws/replays/<id>/?... */
  url?: (query: string) => string;
  /** What a 4404 close means to the user (default: the replay does not exist). */
  notFoundMessage?: string;
  socketFactory?: (url: string) => SocketLike;
  initialBackoffMs?: number;
  maxBackoffMs?: number;
  /** Ping when nothing arrived for this long; reconnect when a ping stays unanswered as long again. */
  keepAliveMs?: number;
  now?: () => number;
}

export interface StreamHandlers {
  /** Accepted messages, in order, without duplicates. */
  onMessage: (msg: ServerMsg) => void;
  onState?: (state: ConnectionState, detail?: string) => void;
  /** A new attempt of the replay (a re-run) restarted positions: drop what the stream built so far. */
  onReset?: (attempt: number) => void;
}

const OPEN = 1;

export interface StreamStats {
  accepted: number;
  duplicates: number;
  gaps: number;
  reconnects: number;
}

export class ReplayStream {
  private readonly opts: Required<Omit<StreamOptions, "after" | "url" | "socketFactory" | "topk" | "notFoundMessage">> &
    Pick<StreamOptions, "url" | "socketFactory" | "topk" | "notFoundMessage">;
  private readonly handlers: StreamHandlers;
  private socket: SocketLike | null = null;
  private last: Pos;
  private attempt: number | null = null;
  private state: ConnectionState = "idle";
  private stopped = false;
  private backoff: number;
  private retryTimer: ReturnType<typeof setTimeout> | null = null;
  private keepAliveTimer: ReturnType<typeof setInterval> | null = null;
  private lastHeard = 0;
  private pingSentAt: number | null = null;
  // playback
  private playing = false;
  private speed = 5;
  private pendingSteps = 0;
  private seeking: number | null = null;
  private seekRetries = 0;
  readonly stats: StreamStats = { accepted: 0, duplicates: 0, gaps: 0, reconnects: 0 };

  constructor(opts: StreamOptions, handlers: StreamHandlers) {
    this.opts = {
      replayId: opts.replayId,
      mode: opts.mode,
      topk: opts.topk,
      url: opts.url,
      socketFactory: opts.socketFactory,
      notFoundMessage: opts.notFoundMessage,
      initialBackoffMs: opts.initialBackoffMs ?? 500,
      maxBackoffMs: opts.maxBackoffMs ?? 15_000,
      keepAliveMs: opts.keepAliveMs ?? 25_000,
      now: opts.now ?? (() => Date.now()),
    };
    this.handlers = handlers;
    this.last = parseAfter(opts.after);
    this.backoff = this.opts.initialBackoffMs;
  }

  get connectionState(): ConnectionState {
    return this.state;
  }

  /** The last accepted position (what `after=` resumes from). */
  get position(): Pos {
    return [this.last[0], this.last[1]];
  }

  get isPlaying(): boolean {
    return this.playing;
  }

  start(): void {
    this.stopped = false;
    this.open();
  }

  stop(): void {
    this.stopped = true;
    this.clearTimers();
    const s = this.socket;
    this.socket = null;
    if (s) {
      s.onclose = null;
      s.onmessage = null;
      s.onerror = null;
      s.onopen = null;
      try {
        s.close(1000, "client closed");
      } catch {
        /* already closed */
      }
    }
    this.setState("closed");
  }

  // ----- playback controls -----
  play(speed: number): void {
    this.playing = true;
    this.speed = speed;
    this.send({ action: "play", speed });
  }

  pause(): void {
    this.playing = false;
    this.send({ action: "pause" });
  }

  step(): void {
    if (this.socket?.readyState === OPEN) this.send({ action: "step" });
    else this.pendingSteps += 1;
  }

  /** The next cycle shown is `cycle`; when paused, it is sent at once (seek + step). */
  seek(cycle: number): void {
    this.last = [cycle - 1, Number.POSITIVE_INFINITY];
    this.seeking = cycle;
    this.seekRetries = 0;
    this.send({ action: "seek", cycle });
    if (!this.playing) this.step();
  }

  // ----- internals -----
  private setState(s: ConnectionState, detail?: string): void {
    if (this.state === s && !detail) return;
    this.state = s;
    this.handlers.onState?.(s, detail);
  }

  private url(): string {
    const params = new URLSearchParams();
    const after = formatAfter(this.last);
    if (after) params.set("after", after);
    params.set("mode", this.opts.mode);
    if (this.opts.topk) params.set("topk", String(this.opts.topk));
    params.set("batch", "1");
    const query = params.toString();
    if (this.opts.url) return this.opts.url(query);
    const proto = window.location.protocol === "https:" ? "wss:" : "ws:";
    return `${proto}//${window.location.host}/ws/replays/${this.opts.replayId}/?${query}`;
  }

  private open(): void {
    if (this.stopped) return;
    this.setState(this.stats.reconnects > 0 || this.state === "reconnecting" ? "reconnecting" : "connecting");
    let socket: SocketLike;
    try {
      socket = this.opts.socketFactory ? this.opts.socketFactory(this.url()) : (new WebSocket(this.url()) as unknown as SocketLike);
    } catch (e) {
      this.scheduleReconnect(String(e));
      return;
    }
    this.socket = socket;
    socket.onopen = () => {
      this.lastHeard = this.opts.now();
      this.pingSentAt = null;
      this.startKeepAlive();
      if (this.opts.mode === "playback") {
        if (this.seeking !== null) this.send({ action: "seek", cycle: this.seeking });
        if (this.playing) this.send({ action: "play", speed: this.speed });
        for (; this.pendingSteps > 0; this.pendingSteps--) this.send({ action: "step" });
      }
    };
    socket.onmessage = (ev) => this.receive(ev.data);
    socket.onerror = () => {
      /* onclose follows and decides */
    };
    socket.onclose = (ev) => {
      if (this.socket !== socket) return;
      this.socket = null;
      this.clearTimers();
      if (this.stopped) return;
      if (ev.code === CLOSE_UNAUTHENTICATED) {
        this.setState("failed", "Your session has ended: sign in again.");
      } else if (ev.code === CLOSE_NOT_FOUND) {
        this.setState("failed", this.opts.notFoundMessage ?? "This replay does not exist or is not yours.");
      } else if (ev.code === CLOSE_BAD_REQUEST) {
        this.setState("failed", ev.reason || "The server refused the stream request.");
      } else {
        this.scheduleReconnect(`connection closed (${ev.code})`);
      }
    };
  }

  private scheduleReconnect(detail: string): void {
    if (this.stopped) return;
    this.setState("reconnecting", detail);
    const delay = this.backoff;
    this.backoff = Math.min(this.backoff * 2, this.opts.maxBackoffMs);
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      this.stats.reconnects += 1;
      this.open();
    }, delay);
  }

  /** Drop the socket and connect again at once, resuming after the last accepted position. */
  private resync(): void {
    const s = this.socket;
    this.socket = null;
    this.clearTimers();
    if (s) {
      s.onclose = null;
      s.onmessage = null;
      try {
        s.close(4000, "resync");
      } catch {
        /* ignore */
      }
    }
    this.stats.reconnects += 1;
    this.setState("reconnecting", "resuming after a gap");
    this.open();
  }

  private startKeepAlive(): void {
    this.stopKeepAlive();
    const every = Math.max(250, Math.floor(this.opts.keepAliveMs / 2));
    this.keepAliveTimer = setInterval(() => {
      const now = this.opts.now();
      if (this.pingSentAt !== null && now - this.pingSentAt >= this.opts.keepAliveMs) {
        this.pingSentAt = null;
        this.resync();
        return;
      }
      if (this.pingSentAt === null && now - this.lastHeard >= this.opts.keepAliveMs) {
        this.pingSentAt = now;
        this.send({ action: "ping" });
      }
    }, every);
  }

  private stopKeepAlive(): void {
    if (this.keepAliveTimer !== null) clearInterval(this.keepAliveTimer);
    this.keepAliveTimer = null;
  }

  private clearTimers(): void {
    this.stopKeepAlive();
    if (this.retryTimer !== null) clearTimeout(this.retryTimer);
    this.retryTimer = null;
  }

  private send(msg: ClientMsg): void {
    if (this.socket && this.socket.readyState === OPEN) {
      try {
        this.socket.send(JSON.stringify(msg));
      } catch {
        /* the close handler reconnects */
      }
    }
  }

  private receive(data: unknown): void {
    this.lastHeard = this.opts.now();
    this.pingSentAt = null;
    let parsed: unknown;
    try {
      parsed = JSON.parse(String(data));
    } catch {
      return;
    }
    if (!Array.isArray(parsed)) {
      this.handle(parsed as ServerMsg);
      return;
    }
    // a batched frame: consecutive messages of one cycle, handled in order until one asks to resync
    const socket = this.socket;
    for (const msg of parsed as ServerMsg[]) {
      if (this.socket !== socket || this.stopped) return;
      this.handle(msg);
    }
  }

  private handle(msg: ServerMsg): void {
    if (!msg || typeof msg !== "object" || typeof (msg as { type?: unknown }).type !== "string") return;
    if (msg.type === "hello") {
      // a cluster's stream (docs/live.md) has no attempts: its hello carries `cluster`, not `replay`
      const attempt = msg.replay?.attempt ?? 0;
      if (this.attempt !== null && attempt !== this.attempt) {
        this.last = [0, -1];
        this.seeking = null;
        this.handlers.onReset?.(attempt);
      }
      this.attempt = attempt;
      this.backoff = this.opts.initialBackoffMs;
      this.setState("open");
      this.handlers.onMessage(msg);
      return;
    }
    if (msg.type === "pong") return;
    if (msg.type === "end" && this.opts.mode === "playback") this.playing = false;
    if (!hasPos(msg)) {
      this.handlers.onMessage(msg);
      return;
    }
    const pos = msg.pos;
    if (this.seeking !== null) {
      if (msg.type !== "cycle.start" || pos[1] !== 0) return; // leftovers of the cycle sent before the seek
      if (pos[0] !== this.seeking) {
        // the server sent another cycle: the seek crossed a cycle in flight; ask again
        if (this.seekRetries++ < 3) this.send({ action: "seek", cycle: this.seeking });
        return;
      }
      this.seeking = null;
      this.last = [pos[0] - 1, Number.POSITIVE_INFINITY];
    }
    if (comparePos(pos, this.last) <= 0) {
      this.stats.duplicates += 1;
      return;
    }
    const next = pos[0] === this.last[0] ? pos[1] === this.last[1] + 1 : pos[1] === 0;
    if (!next) {
      this.stats.gaps += 1;
      if (this.opts.mode === "live") this.resync();
      return;
    }
    this.last = [pos[0], pos[1]];
    this.stats.accepted += 1;
    this.handlers.onMessage(msg);
  }
}
