/**
 * The fields of one line of a text edge list: the first two fields, separated by a comma, a tab or
 * runs of spaces/tabs (spaces around a comma are allowed), each optionally "double-quoted" with ""
 * for a quote inside; the rest of the line is not looked at. And the kind of a field: a plain
 * integer, a name, or something that looks like another number.
 */
import { K_BIG, K_FRAC, K_INT, K_NAME, K_NEG, MAX_ID } from './edgeErrors.ts';

// tokenize() results.
export const T_OK = 0;
export const T_ONE_FIELD = 1;
export const T_EMPTY = 2;
export const T_QUOTE = 3;

/** Scratch for the current line: byte ranges [s, e) of fields 1 and 2, and whether they had "" escapes. */
export class LineTokens {
  s1 = 0;
  e1 = 0;
  x1 = false;
  s2 = 0;
  e2 = 0;
  x2 = false;
  /** The value of the last field `classify` found to be an integer. */
  val = 0;

  /** Splits the first two fields of u8[p, e) into s1/e1 and s2/e2. */
  tokenize(u8: Uint8Array, p: number, e: number): number {
    let q = this.field(u8, p, e, 1);
    if (q < 0) return T_QUOTE;
    if (this.e1 === this.s1) return T_EMPTY;
    let r = q;
    while (r < e && (u8[r] === 32 || u8[r] === 9)) r++;
    let comma = false;
    if (r < e && u8[r] === 44) {
      comma = true;
      r++;
      while (r < e && (u8[r] === 32 || u8[r] === 9)) r++;
    }
    if (r === q) return T_ONE_FIELD; // end of line, or junk right after a closing quote
    if (r === e) return comma ? T_EMPTY : T_ONE_FIELD;
    if (u8[r] === 44) return T_EMPTY;
    q = this.field(u8, r, e, 2);
    if (q < 0) return T_QUOTE;
    if (this.e2 === this.s2) return T_EMPTY;
    if (q < e && u8[q] !== 32 && u8[q] !== 9 && u8[q] !== 44) return T_ONE_FIELD;
    return T_OK;
  }

  private field(u8: Uint8Array, p: number, e: number, which: 1 | 2): number {
    let s = p;
    let t: number;
    let next: number;
    let escaped = false;
    if (u8[p] === 34) {
      s = p + 1;
      let q = s;
      for (;;) {
        if (q >= e) return -1;
        if (u8[q] === 34) {
          if (q + 1 < e && u8[q + 1] === 34) {
            escaped = true;
            q += 2;
            continue;
          }
          break;
        }
        q++;
      }
      t = q;
      next = q + 1;
    } else {
      let q = p;
      while (q < e) {
        const c = u8[q];
        if (c === 32 || c === 9 || c === 44) break;
        q++;
      }
      t = q;
      next = q;
    }
    if (which === 1) {
      this.s1 = s;
      this.e1 = t;
      this.x1 = escaped;
    } else {
      this.s2 = s;
      this.e2 = t;
      this.x2 = escaped;
    }
    return next;
  }

  /** Kind of the non-empty token u8[s, e); sets `val` for integers. */
  classify(u8: Uint8Array, s: number, e: number): number {
    let v = 0;
    let i = s;
    while (i < e) {
      const d = u8[i] - 48;
      if (d < 0 || d > 9) break;
      v = v * 10 + d;
      i++;
    }
    if (i === e) {
      this.val = v;
      return v > MAX_ID ? K_BIG : K_INT;
    }
    // Looks like a number: [+-] digits [. digits] [e [+-] digits], at least one mantissa digit.
    i = s;
    if (u8[i] === 43 || u8[i] === 45) i++;
    let digits = 0;
    while (i < e && u8[i] >= 48 && u8[i] <= 57) {
      i++;
      digits++;
    }
    if (i < e && u8[i] === 46) {
      i++;
      while (i < e && u8[i] >= 48 && u8[i] <= 57) {
        i++;
        digits++;
      }
    }
    if (digits === 0) return K_NAME;
    if (i < e && (u8[i] === 101 || u8[i] === 69)) {
      i++;
      if (i < e && (u8[i] === 43 || u8[i] === 45)) i++;
      let ed = 0;
      while (i < e && u8[i] >= 48 && u8[i] <= 57) {
        i++;
        ed++;
      }
      if (ed === 0) return K_NAME;
    }
    if (i !== e) return K_NAME;
    return u8[s] === 45 ? K_NEG : K_FRAC;
  }

  text(buf: Buffer, which: 1 | 2): string {
    const s = which === 1 ? this.s1 : this.s2;
    const e = which === 1 ? this.e1 : this.e2;
    const escaped = which === 1 ? this.x1 : this.x2;
    const t = buf.toString('utf8', s, e);
    return escaped ? t.replaceAll('""', '"') : t;
  }

}
