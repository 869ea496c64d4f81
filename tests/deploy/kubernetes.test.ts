/**
 * deploy/kubernetes/, checked without a cluster: both files parse as YAML, the shards' Job and the
 * merge Job agree on the image, the claim, the mount and the experiment directory, N is the same
 * in completions, parallelism and `--shard auto/N`, their arguments are flags socsim accepts, and
 * the pods run as the image's user with the volume writable by its group.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { ROOT } from '../runner/cliHelpers.ts';
import { copyParts, experimentFlags, flagsOf, readContainerfile } from './deployFiles.ts';

interface Container {
  name: string;
  image: string;
  command?: string[];
  args: string[];
  volumeMounts: Array<{ name: string; mountPath: string }>;
}
interface PodSpec {
  restartPolicy: string;
  securityContext?: { runAsNonRoot?: boolean; fsGroup?: number };
  containers: Container[];
  volumes: Array<{ name: string; persistentVolumeClaim?: { claimName: string } }>;
}
interface Manifest {
  apiVersion: string;
  kind: string;
  metadata: { name: string };
  spec: {
    completionMode?: string;
    completions?: number;
    parallelism?: number;
    backoffLimit?: number;
    accessModes?: string[];
    template: { spec: PodSpec };
  };
}

/** The documents of a YAML file; any syntax error or duplicate key fails. */
function load(file: string): Manifest[] {
  const docs = parseAllDocuments(fs.readFileSync(path.join(ROOT, file), 'utf8'));
  if (!Array.isArray(docs)) throw new Error(`${file}: no documents`);
  for (const d of docs) expect(d.errors.map(String), file).toEqual([]);
  return docs.map((d) => d.toJS() as Manifest);
}

const after = (args: string[], flag: string) => args[args.indexOf(flag) + 1];

/** The claim a container's mount of `mountPath`'s volume comes from. */
function claimAt(spec: PodSpec, c: Container, dir: string): string | undefined {
  const mount = c.volumeMounts.find((m) => dir === m.mountPath || dir.startsWith(m.mountPath + '/'));
  return spec.volumes.find((v) => v.name === mount?.name)?.persistentVolumeClaim?.claimName;
}

describe('deploy/kubernetes', () => {
  const [claim, shards, ...restA] = load('deploy/kubernetes/experiment-job.yaml');
  const [merge, ...restB] = load('deploy/kubernetes/merge-job.yaml');
  const shardPod = shards.spec.template.spec;
  const mergePod = merge.spec.template.spec;
  const [shard] = shardPod.containers;
  const [merger] = mergePod.containers;

  it('experiment-job.yaml holds the claim and the Indexed Job of shards; merge-job.yaml only the merge Job', () => {
    expect(restA).toEqual([]);
    expect(restB).toEqual([]);
    expect([claim.apiVersion, claim.kind]).toEqual(['v1', 'PersistentVolumeClaim']);
    expect(claim.spec.accessModes).toEqual(['ReadWriteMany']);
    for (const j of [shards, merge]) {
      expect([j.apiVersion, j.kind]).toEqual(['batch/v1', 'Job']);
      expect(j.spec.template.spec.restartPolicy).toBe('Never');
      expect(j.spec.template.spec.containers).toHaveLength(1);
    }
    expect(merge.metadata.name).not.toBe(shards.metadata.name);
    expect(shards.spec.completionMode).toBe('Indexed');
    expect(merge.spec.completionMode).toBeUndefined();
    expect(merge.spec.backoffLimit).toBe(0);
  });

  it('runs N shards with N in completions, parallelism and --shard auto/N, on a file the image holds', () => {
    const args = shard.args;
    expect(shard.command).toBeUndefined(); // the image's entrypoint, socsim
    expect(args[0]).toBe('experiment');
    const n = Number(/^auto\/(\d+)$/.exec(after(args, '--shard'))?.[1]);
    expect(n).toBeGreaterThan(0);
    expect([shards.spec.completions, shards.spec.parallelism]).toEqual([n, n]);
    // The image copies experiments/ into its working directory, /app.
    expect(args[1]).toMatch(/^experiments\/[^/]+\.ts$/);
    expect(fs.existsSync(path.join(ROOT, args[1]))).toBe(true);
    const known = experimentFlags();
    expect(flagsOf(args).filter((f) => !known.has(f))).toEqual([]);
  });

  it('merges the shards’ directory, on the same claim, with the same image', () => {
    const out = after(shard.args, '--out');
    expect(merger.command).toBeUndefined();
    expect(merger.args).toEqual(['experiment', 'merge', out]);
    expect(merger.image).toBe(shard.image);
    expect(claimAt(shardPod, shard, out)).toBe(claim.metadata.name);
    expect(claimAt(mergePod, merger, out)).toBe(claim.metadata.name);
  });

  it("names the image deploy/README.md builds, and runs as the Containerfile's user with its group owning the volume", () => {
    const readme = fs.readFileSync(path.join(ROOT, 'deploy/README.md'), 'utf8');
    expect(readme).toContain(`docker build -f deploy/Containerfile -t ${shard.image} .`);
    expect(readme).toContain(`docker push ${shard.image}`);
    const runtime = readContainerfile(path.join(ROOT, 'deploy/Containerfile')).at(-1)!;
    const user = runtime.instructions.find((i) => i.op === 'USER')!.args;
    const gid = Number(user.split(':')[1]);
    for (const pod of [shardPod, mergePod]) expect(pod.securityContext).toEqual({ runAsNonRoot: true, fsGroup: gid });
    // The experiment file in the Job is one the runtime stage copies.
    expect(runtime.instructions.filter((i) => i.op === 'COPY').map((i) => copyParts(i.args).dest)).toContain('experiments/');
  });
});
