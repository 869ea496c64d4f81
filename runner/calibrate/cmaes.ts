/**
 * CMA-ES, the covariance matrix adaptation evolution strategy, as an ask/tell optimiser over the
 * unit box [0, 1]^n, for `socsim calibrate`. No npm package implements it with upkeep (the JS
 * optimisers on npm are Nelder-Mead and gradient methods, which cope badly with the rugged,
 * noisy losses of stochastic simulations), so this follows N. Hansen, "The CMA Evolution
 * Strategy: A Tutorial", arXiv:1604.00772 (2016): the default population size, recombination
 * weights (positive ones, mu = lambda / 2) and learning rates of its Table 1, cumulative step-size
 * adaptation, the rank-one and rank-mu covariance updates with the h_sigma stall of the evolution
 * path. The eigendecomposition of C comes from ml-matrix.
 *
 * Bounds: a sample outside the box is mirrored back into it (x -> -x, x -> 2 - x) and the mirrored
 * point is the one evaluated and used in the update ("repair", which the tutorial's section on
 * boundaries allows for box constraints).
 *
 * Randomness: the samples of generation g are standard normals from the counter RNG keyed by
 * (seed, "cmaes", g), so the whole search is a pure function of the seed and the losses it is
 * told: replaying the same losses replays the same search (what makes calibration resumable).
 */
import { EigenvalueDecomposition, Matrix } from 'ml-matrix';
import { keyOf, normal, streamOf } from '../../sim-core/rng.ts';

export interface CmaesOptions {
  /** Dimension. */
  n: number;
  seed: number;
  /** Initial mean in [0, 1]^n (default the centre). */
  mean?: number[];
  /** Initial step size in box units (default 0.3: the box is about +-1.7 sigma around the centre). */
  sigma?: number;
  /** Population size (default 4 + floor(3 ln n)). */
  lambda?: number;
}

const STREAM = streamOf('cmaes');

/** Folds x into [0, 1] by reflection at the bounds. */
export function mirror(x: number): number {
  const p = ((x % 2) + 2) % 2;
  return p <= 1 ? p : 2 - p;
}

export class Cmaes {
  readonly n: number;
  readonly lambda: number;
  readonly mu: number;
  private readonly weights: number[];
  private readonly muEff: number;
  private readonly cSigma: number;
  private readonly dSigma: number;
  private readonly cC: number;
  private readonly c1: number;
  private readonly cMu: number;
  private readonly chiN: number;
  private readonly seed: number;
  mean: number[];
  sigma: number;
  private pSigma: number[];
  private pC: number[];
  private C: Matrix;
  private B: Matrix;
  private D: number[];
  generation = 0;

  constructor(o: CmaesOptions) {
    const n = (this.n = o.n);
    this.seed = o.seed;
    this.lambda = o.lambda ?? 4 + Math.floor(3 * Math.log(n));
    this.mu = Math.floor(this.lambda / 2);
    const raw = Array.from({ length: this.mu }, (_, i) => Math.log((this.lambda + 1) / 2) - Math.log(i + 1));
    const sum = raw.reduce((a, b) => a + b, 0);
    this.weights = raw.map((w) => w / sum);
    this.muEff = 1 / this.weights.reduce((a, w) => a + w * w, 0);
    const me = this.muEff;
    this.cSigma = (me + 2) / (n + me + 5);
    this.dSigma = 1 + 2 * Math.max(0, Math.sqrt((me - 1) / (n + 1)) - 1) + this.cSigma;
    this.cC = (4 + me / n) / (n + 4 + (2 * me) / n);
    this.c1 = 2 / ((n + 1.3) ** 2 + me);
    this.cMu = Math.min(1 - this.c1, (2 * (me - 2 + 1 / me)) / ((n + 2) ** 2 + me));
    this.chiN = Math.sqrt(n) * (1 - 1 / (4 * n) + 1 / (21 * n * n));
    this.mean = o.mean ? [...o.mean] : new Array<number>(n).fill(0.5);
    this.sigma = o.sigma ?? 0.3;
    this.pSigma = new Array<number>(n).fill(0);
    this.pC = new Array<number>(n).fill(0);
    this.C = Matrix.eye(n, n);
    this.B = Matrix.eye(n, n);
    this.D = new Array<number>(n).fill(1);
  }

  /** The lambda points of the current generation, inside the box. */
  ask(): number[][] {
    const key = keyOf(this.seed, STREAM, this.generation);
    const out: number[][] = [];
    for (let k = 0; k < this.lambda; k++) {
      const z = Array.from({ length: this.n }, (_, i) => normal(key, k, i));
      const y = this.B.mmul(Matrix.columnVector(z.map((zi, i) => zi * this.D[i]))).getColumn(0);
      out.push(y.map((yi, i) => mirror(this.mean[i] + this.sigma * yi)));
    }
    return out;
  }

  /** Updates the distribution from the points `ask` gave and their losses (lower is better). */
  tell(points: number[][], losses: number[]): void {
    const n = this.n;
    const order = losses.map((l, i) => [l, i] as const).sort((a, b) => a[0] - b[0] || a[1] - b[1]).map(([, i]) => i);
    const old = this.mean;
    const ys = order.slice(0, this.mu).map((i) => points[i].map((x, j) => (x - old[j]) / this.sigma));
    const yw = new Array<number>(n).fill(0);
    ys.forEach((y, r) => y.forEach((v, j) => (yw[j] += this.weights[r] * v)));
    this.mean = old.map((m, j) => m + this.sigma * yw[j]);
    // C^(-1/2) y_w = B D^-1 B^T y_w
    const bt = this.B.transpose().mmul(Matrix.columnVector(yw)).getColumn(0).map((v, i) => v / this.D[i]);
    const invSqrt = this.B.mmul(Matrix.columnVector(bt)).getColumn(0);
    const cs = Math.sqrt(this.cSigma * (2 - this.cSigma) * this.muEff);
    this.pSigma = this.pSigma.map((p, j) => (1 - this.cSigma) * p + cs * invSqrt[j]);
    const norm = Math.sqrt(this.pSigma.reduce((a, p) => a + p * p, 0));
    this.generation++;
    const hSigma = norm / Math.sqrt(1 - (1 - this.cSigma) ** (2 * this.generation)) < (1.4 + 2 / (n + 1)) * this.chiN ? 1 : 0;
    const cc = Math.sqrt(this.cC * (2 - this.cC) * this.muEff);
    this.pC = this.pC.map((p, j) => (1 - this.cC) * p + hSigma * cc * yw[j]);
    const delta = (1 - hSigma) * this.cC * (2 - this.cC);
    const C = this.C.clone().mul(1 + this.c1 * delta - this.c1 - this.cMu);
    for (let a = 0; a < n; a++) {
      for (let b = 0; b < n; b++) {
        let rankMu = 0;
        ys.forEach((y, r) => (rankMu += this.weights[r] * y[a] * y[b]));
        C.set(a, b, C.get(a, b) + this.c1 * this.pC[a] * this.pC[b] + this.cMu * rankMu);
      }
    }
    this.C = C;
    this.sigma *= Math.exp((this.cSigma / this.dSigma) * (norm / this.chiN - 1));
    const eig = new EigenvalueDecomposition(this.C, { assumeSymmetric: true });
    this.B = eig.eigenvectorMatrix;
    this.D = eig.realEigenvalues.map((v) => Math.sqrt(Math.max(v, 1e-20)));
  }

  /** Per coordinate, the standard deviation of the search distribution (sigma sqrt(C_ii)), in box units. */
  sd(): number[] {
    return Array.from({ length: this.n }, (_, i) => this.sigma * Math.sqrt(this.C.get(i, i)));
  }

  /** The largest standard deviation of the search distribution, in box units (a stopping figure). */
  spread(): number {
    return this.sigma * Math.max(...this.D);
  }
}
