/**
 * A streaming 64-bit string hash (two 32-bit lanes, cyrb53's mixing): an exploration state folds
 * in its whole log event by event, so a state key costs the new events only. Browser-safe.
 */
export class StateHash {
  private h1 = 0xdeadbeef;
  private h2 = 0x41c6ce57;

  update(text: string): this {
    let { h1, h2 } = this;
    for (let i = 0; i < text.length; i++) {
      const ch = text.charCodeAt(i);
      h1 = Math.imul(h1 ^ ch, 2654435761);
      h2 = Math.imul(h2 ^ ch, 1597334677);
    }
    this.h1 = h1;
    this.h2 = h2;
    return this;
  }

  copy(): StateHash {
    const copy = new StateHash();
    copy.h1 = this.h1;
    copy.h2 = this.h2;
    return copy;
  }

  digest(): string {
    let h1 = Math.imul(this.h1 ^ (this.h1 >>> 16), 2246822507);
    h1 ^= Math.imul(this.h2 ^ (this.h2 >>> 13), 3266489909);
    let h2 = Math.imul(this.h2 ^ (this.h2 >>> 16), 2246822507);
    h2 ^= Math.imul(this.h1 ^ (this.h1 >>> 13), 3266489909);
    return (h1 >>> 0).toString(36) + '.' + (h2 >>> 0).toString(36);
  }
}
