/** The bundled rankers' codes (the kernels' `ranker` parameter), by the names tests use. */
import { rankerCode } from '../../recsys/rankerRegistry.ts';

export const RANKER = {
  chronological: rankerCode('chronological'),
  random: rankerCode('random'),
  redditHot: rankerCode('reddit-hot'),
  xInterest: rankerCode('x-interest'),
  bridging: rankerCode('bridging'),
} as const;
