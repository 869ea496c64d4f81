/**
 * A growable list of int32 indices, reused from step to step: the rows or users a phase wrote in
 * plain JavaScript, handed to an executor that keeps device copies (exec.ts hostWroteAt).
 */
export class IndexList {
  at = new Int32Array(1024);
  n = 0;

  push(i: number): void {
    if (this.n === this.at.length) {
      const at = new Int32Array(2 * this.at.length);
      at.set(this.at);
      this.at = at;
    }
    this.at[this.n++] = i;
  }

  clear(): void {
    this.n = 0;
  }
}
