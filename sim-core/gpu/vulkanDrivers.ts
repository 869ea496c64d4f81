/**
 * Whether Linux has any Vulkan driver for Dawn to open, read from the driver manifests (ICD files)
 * where the Vulkan loader looks for them. Dawn, asked for an adapter where there is none, writes
 * warnings of its own straight to the process's stderr (with a source path of the machine that
 * built the webgpu package), and Node cannot redirect a native library's stderr; so where no
 * manifest exists at all, socsim does not ask Dawn and says why itself. Where one exists, Dawn is
 * asked (a manifest whose driver then fails still gets Dawn's warnings).
 *
 * The loader's search: the files or folders listed in VK_DRIVER_FILES (formerly VK_ICD_FILENAMES),
 * when set, instead of the standard folders; VK_ADD_DRIVER_FILES in addition. The standard folders
 * are vulkan/icd.d under $XDG_CONFIG_HOME, $XDG_CONFIG_DIRS, /etc, /usr/local/etc, $XDG_DATA_HOME
 * and $XDG_DATA_DIRS (with the XDG defaults when unset).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const list = (v: string | undefined) => (v ?? '').split(':').filter((p) => p !== '');

/** The folders and files the loader reads driver manifests from, in `env`. */
export function vulkanDriverPlaces(env: NodeJS.ProcessEnv = process.env, home = os.homedir()): string[] {
  const added = list(env.VK_ADD_DRIVER_FILES);
  const given = env.VK_DRIVER_FILES ?? env.VK_ICD_FILENAMES;
  if (given !== undefined) return [...list(given), ...added];
  const configHome = env.XDG_CONFIG_HOME || path.join(home, '.config');
  const dataHome = env.XDG_DATA_HOME || path.join(home, '.local/share');
  const configDirs = list(env.XDG_CONFIG_DIRS || '/etc/xdg');
  const dataDirs = list(env.XDG_DATA_DIRS || '/usr/local/share:/usr/share');
  const roots = [configHome, ...configDirs, '/etc', '/usr/local/etc', dataHome, ...dataDirs];
  return [...roots.map((r) => path.join(r, 'vulkan/icd.d')), ...added];
}

/** The driver manifests found in `places`: listed files that exist, and the .json files of listed folders. */
export function vulkanDriverFiles(places: readonly string[] = vulkanDriverPlaces()): string[] {
  return places.flatMap((p) => {
    try {
      if (!fs.statSync(p).isDirectory()) return [p];
      return fs.readdirSync(p).filter((f) => f.endsWith('.json')).map((f) => path.join(p, f));
    } catch {
      return []; // missing or unreadable: no driver there
    }
  });
}
