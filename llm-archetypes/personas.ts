/** Persona text per archetype (age band x leaning x activity tier, the population's binning). */
export function archetypePersonas(ageBands: readonly string[], leanings: readonly string[], tiers: readonly string[]): string[] {
  const out: string[] = [];
  for (const age of ageBands) {
    for (const leaning of leanings) {
      for (const tier of tiers) {
        out.push(`social-media users aged ${age}, politically ${leaning}, with ${tier} activity on the platform`);
      }
    }
  }
  return out;
}
