/**
 * `stop` sequences over a text that arrives in pieces: the text up to the first sequence is let through,
 * nothing after it. A tail that could be the start of a sequence is held back until the next piece
 * shows whether it is, so a sequence split across two deltas is still caught.
 */
export class StopCutter {
  /** Whether a stop sequence was met. */
  hit = false;
  /** Everything let through so far. */
  text = '';
  private held = '';
  private readonly longest: number;

  constructor(private readonly stops: readonly string[]) {
    this.longest = Math.max(0, ...stops.map((s) => s.length));
  }

  /** Takes the next piece; returns what may be sent now. */
  push(piece: string): string {
    if (this.hit) return '';
    const buffer = this.held + piece;
    let at = -1;
    for (const s of this.stops) {
      const i = buffer.indexOf(s);
      if (i >= 0 && (at < 0 || i < at)) at = i;
    }
    if (at >= 0) {
      this.hit = true;
      this.held = '';
      return this.emit(buffer.slice(0, at));
    }
    const keep = Math.min(buffer.length, this.longest - 1);
    this.held = buffer.slice(buffer.length - keep);
    return this.emit(buffer.slice(0, buffer.length - keep));
  }

  /** The text held back when the stream ends without a stop sequence. */
  end(): string {
    const rest = this.hit ? '' : this.held;
    this.held = '';
    return this.emit(rest);
  }

  private emit(s: string): string {
    this.text += s;
    return s;
  }
}
