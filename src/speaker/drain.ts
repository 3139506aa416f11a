/**
 * Which peers are draining (RFC 8326 graceful shutdown). `drain()` without a
 * list drains every peer, including peers added later (the agent keeps
 * reconciling while it drains); a list drains just those. Pure bookkeeping:
 * the RIB marks the routes (src/rib/gshut.ts), the speaker wires the two.
 */
export class DrainSet {
  private all = false;
  private readonly some = new Set<string>();

  has(id: string): boolean {
    return this.all || this.some.has(id);
  }

  get everyPeer(): boolean {
    return this.all;
  }

  /** Returns the ids (of `known`) whose state changed. */
  drain(ids: readonly string[] | undefined, known: readonly string[]): string[] {
    const before = known.filter((id) => this.has(id));
    if (ids === undefined) this.all = true;
    else for (const id of ids) this.some.add(id);
    return known.filter((id) => this.has(id) && !before.includes(id));
  }

  /** Ends draining of `ids`, or of every peer. Returns the ids (of `known`) whose state changed. */
  undrain(ids: readonly string[] | undefined, known: readonly string[]): string[] {
    const before = known.filter((id) => this.has(id));
    if (ids === undefined) {
      this.all = false;
      this.some.clear();
    } else {
      if (this.all) {
        // Everyone but these: keep the others by name.
        this.all = false;
        for (const id of known) this.some.add(id);
      }
      for (const id of ids) this.some.delete(id);
    }
    return before.filter((id) => !this.has(id));
  }

  /** Forget a removed peer (so re-adding it starts undrained unless every peer drains). */
  forget(id: string): void {
    this.some.delete(id);
  }
}
