#!/bin/bash
# socsim on a GPU machine: finds the WebGPU adapter (prints its limits), checks that runs on webgpu
# write the same Arrow files as on two CPU threads, and runs the GPU benchmarks beside the CPU
# figures. Run from the repository root. Uses node and node_modules when present, else what
# deploy/gpu/bundle.sh put in .gpu/ (Node, the dependencies, the Vulkan loader and glvnd).
#
#   SECTIONS   which parts, in order (default "parity bench social"; "big" adds a 100M-agent voter run,
#              "social-big" the social platform at 10M agents (5 steps, every core, cpu then webgpu),
#              "kernels" a social run on webgpu, 14 steps from 10:00, timing each GPU kernel from the host
#              and on the device's clock (SOCSIM_GPU_TIME_KERNELS=1), of KERNELS_AGENTS agents (default
#              1M, on 2 threads; above 1M every core);
#              "steady" the social platform at 10M agents with the post window full: webgpu to step
#              STEADY_STEPS - 7, stopped (it checkpoints), resumed on webgpu and, from a copy, on the
#              CPU to STEADY_STEPS (default 56: ~9.5 min on an H100 host, ~25 GB of disk; 40 gives
#              the window 3/4 full, the post table doubled), every core, with hostsplit.mts's split);
#              "ab" the social platform at 10M agents on webgpu, this tree and the tree in OLD by
#              turns (this, old, this, old; AB_STEPS steps from 10:00, default 16, every core),
#              phase medians of steps 4 on and every Arrow file compared: an A/B of two commits in
#              one device call (OLD: e.g. `git archive <commit> | tar x -C .gpu-old`, carried too);
#              "adapter" runs none: Node, the loaders and the adapter only, for scripts that go on)
#   PARITY     the scenarios the parity section runs (default: every classic one and social-feed)
#   SCALE      divides every size (a rehearsal on a software driver: SCALE=100)
#   OUT        where log.txt goes (default /tmp/socsim-gpu-check)
set -u
S=${SCALE:-1}
SECTIONS=${SECTIONS:-parity bench social}
OUT=${OUT:-/tmp/socsim-gpu-check}; mkdir -p "$OUT"
exec > >(tee "$OUT/log.txt") 2>&1
D=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
G=$PWD/.gpu
log() { echo "== [${SECONDS}s] $*"; }
# NVIDIA's Vulkan driver (libGLX_nvidia) needs glvnd's libGLdispatch; bare containers lack it and the loader.
if [ -d "$G/gl" ] && [ "$(id -u)" = 0 ] && ! { ldconfig -p | grep -q 'libvulkan.so.1 ' && ldconfig -p | grep -q libGLdispatch; }; then
  for f in "$G"/gl/*.deb; do dpkg -x "$f" /; done; ldconfig; log "Vulkan loader and glvnd unpacked from .gpu/gl"
fi
if ! command -v node >/dev/null && [ -f "$G/node.xz" ]; then
  mkdir -p /tmp/socsim-node && xz -dc "$G/node.xz" > /tmp/socsim-node/node && chmod +x /tmp/socsim-node/node && export PATH=/tmp/socsim-node:$PATH
fi
[ -d node_modules/apache-arrow ] || [ ! -f "$G/nm.tar.xz" ] || tar xJf "$G/nm.tar.xz"
[ -f dist/runner/cli/cli.js ] || [ ! -f "$G/dist.tar.xz" ] || tar xJf "$G/dist.tar.xz"
[ -f dist/runner/cli/cli.js ] || { log "dist/ is missing: npm run build (or deploy/gpu/bundle.sh) here, and carry it"; exit 1; }
[ -d "$G/floors" ] && export SOCSIM_FLOORS=$G/floors
log "node $(node --version); $(nproc) cores; $(free -g | awk '/Mem/{print $2}') GiB"
command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
if ! node "$D/adapter.mjs"; then
  for f in /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json /usr/share/vulkan/icd.d/nvidia_icd.json /etc/vulkan/icd.d/nvidia_icd.json; do
    [ -f "$f" ] && { export VK_DRIVER_FILES=$f; log "VK_DRIVER_FILES=$f"; break; }
  done
  node "$D/adapter.mjs" || { log "no hardware adapter"; [ "$S" = 1 ] && exit 1; }
fi
lab() { if (( $1 % 1000000 == 0 )); then echo "$(( $1 / 1000000 ))m"; else echo "$(( $1 / 1000 ))k"; fi; }
# The same run on two CPU threads and on webgpu; every Arrow file compared byte for byte.
par() {
  local s=$1 n=$2 st=$3; shift 3
  local a=/tmp/socsim-par/$s-cpu b=/tmp/socsim-par/$s-gpu t=$SECONDS
  node bin/socsim.mjs run "$s" --agents "$n" --steps "$st" --threads 2 --quiet --force --out "$a" "$@" >/dev/null || { echo "PARITY $s: cpu run failed"; return; }
  local tc=$((SECONDS - t)); t=$SECONDS
  node bin/socsim.mjs run "$s" --agents "$n" --steps "$st" --backend webgpu --quiet --force --out "$b" "$@" >/dev/null || { echo "PARITY $s: webgpu run failed"; return; }
  local files=0 diff=0
  for f in $(cd "$a" && find . -name '*.arrow' | sort); do files=$((files + 1)); cmp -s "$a/$f" "$b/$f" || { diff=$((diff + 1)); echo "  DIFF $f"; }; done
  echo "PARITY $s n=$n steps=$st: $files arrow files, $diff differ (cpu ${tc}s, webgpu $((SECONDS - t))s)"
  node "$D/summary.mjs" "$b" 0 | grep 'kernel calls on webgpu'
}
for section in $SECTIONS; do case $section in
parity)
  log "parity"
  for s in ${PARITY:-voter independent-cascade sir linear-threshold degroot deffuant hegselmann-krause opinion-cascade social-feed}; do
    if [ "$s" = social-feed ]; then
      par social-feed $((20000 / S)) 30 --set platform.startHour=10
      par social-feed $((1500 / S)) 4 --set platform.startHour=10
    else par $s $((200000 / S)) 10; fi
  done ;;
bench)
  for n in $((1000000 / S)) $((10000000 / S)); do
    L=$(lab $n); only=voter-step-$L-ba5-t2,agent-steps
    for m in voter ic sir lt degroot deffuant hk; do only=$only,$m-step-$L-ba5-webgpu; done
    [ $n -le $((1000000 / S)) ] && for m in ic sir lt degroot deffuant hk; do only=$only,$m-step-$L-ba5-t2; done
    log "bench $L"
    node bin/socsim.mjs bench --backend webgpu --agents $n --only $only || log "bench $L failed"
  done ;;
social)
  n=$((1000000 / S)); log "social-feed $(lab $n), 26 steps from 10:00, on the CPU then on webgpu"
  for b in cpu webgpu; do
    node bin/socsim.mjs run social-feed --agents $n --steps 26 --threads 2 --snapshot-every 0 --quiet --force --set platform.startHour=10 --backend $b --out /tmp/socsim-soc-$b >/dev/null && node "$D/summary.mjs" /tmp/socsim-soc-$b 6
  done
  d=0; for f in $(cd /tmp/socsim-soc-cpu && find . -name '*.arrow' | sort); do cmp -s /tmp/socsim-soc-cpu/$f /tmp/socsim-soc-webgpu/$f || { d=$((d + 1)); echo "  DIFF $f"; }; done
  echo "social-feed $(lab $n): $d Arrow files differ between cpu and webgpu" ;;
social-big)
  n=$((10000000 / S)); log "social-feed $(lab $n) (default graph), 5 steps from 10:00 on $(nproc) threads, on the CPU then on webgpu"
  for b in cpu webgpu; do
    node bin/socsim.mjs run social-feed --agents $n --steps 5 --threads "$(nproc)" --snapshot-every 0 --quiet --force --set platform.startHour=10 --backend $b --out /tmp/socsim-big-$b >/dev/null && node "$D/summary.mjs" /tmp/socsim-big-$b 1
  done
  d=0; for f in $(cd /tmp/socsim-big-cpu && find . -name '*.arrow' | sort); do cmp -s /tmp/socsim-big-cpu/$f /tmp/socsim-big-webgpu/$f || { d=$((d + 1)); echo "  DIFF $f"; }; done
  echo "social-feed $(lab $n): $d Arrow files differ between cpu and webgpu" ;;
kernels)
  n=$((${KERNELS_AGENTS:-1000000} / S)); th=2; [ $n -gt $((1000000 / S)) ] && th=$(nproc)
  log "social-feed $(lab $n), 14 steps from 10:00 on webgpu ($th threads), each GPU kernel waited for and timed"
  SOCSIM_GPU_TIME_KERNELS=1 node bin/socsim.mjs run social-feed --agents $n --steps 14 --threads $th --snapshot-every 0 --quiet --force --set platform.startHour=10 --backend webgpu --out /tmp/socsim-kern >/dev/null && node "$D/summary.mjs" /tmp/socsim-kern 4 ;;
steady)
  n=$((10000000 / S)); r=/tmp/socsim-steady; rm -rf $r $r-cpu "$OUT"/steady-*
  st=${STEADY_STEPS:-56}; stop=$((st - 7))
  hostsplit() { FROM_STEP=$1 node "$D/hostsplit.mts" "${@:2}"; }
  log "social-feed $(lab $n) (default graph) from 10:00 on webgpu, stopped after step $stop"
  FROM_STEP=$((stop - 6)) node "$D/hostsplit.mts" run social-feed --agents $n --steps $st --threads "$(nproc)" --backend webgpu --snapshot-every 0 --checkpoint-every 1000 --set platform.startHour=10 --out $r > "$OUT/steady-first.out" 2> "$OUT/steady-first.err" &
  pid=$!
  until grep -qs "^step $stop/" "$OUT/steady-first.err" || ! kill -0 $pid 2>/dev/null; do sleep 0.5; done
  kill -TERM $pid; wait $pid
  grep -v '^step' "$OUT/steady-first.out" | grep -A40 '^host-time'; node "$D/summary.mjs" $r $((stop - 6))
  cp -a $r $r-cpu
  for b in webgpu cpu; do
    d=$r; [ $b = cpu ] && d=$r-cpu
    log "resumed on $b"
    hostsplit 1 run --resume $d --backend $b --threads "$(nproc)" > "$OUT/steady-$b.out" 2> "$OUT/steady-$b.err" || tail -3 "$OUT/steady-$b.err"
    grep -A40 '^host-time' "$OUT/steady-$b.out" | grep -v '^step'; node "$D/summary.mjs" $d $((stop + 1))
  done
  d=0; for f in $(cd $r-cpu && find . -name '*.arrow' | sort); do cmp -s $r-cpu/$f $r/$f || { d=$((d + 1)); echo "  DIFF $f"; }; done
  echo "social-feed $(lab $n) at steady state: $d Arrow files differ between the webgpu and cpu resumes"
  (cd $r && find . -name '*.arrow' | sort | xargs sha256sum) ;;
big)
  n=$((100000000 / S)); log "voter $(lab $n) on webgpu, 3 steps"
  node bin/socsim.mjs run voter --agents $n --steps 3 --threads "$(nproc)" --backend webgpu --snapshot-every 0 --force --out /tmp/socsim-big | grep -v '^  ' && node "$D/summary.mjs" /tmp/socsim-big 0 ;;
ab)
  n=$((10000000 / S)); st=${AB_STEPS:-16}; old=${OLD:?OLD names the other tree (see the top)}
  [ -d "$old/node_modules" ] || ln -sfn "$PWD/node_modules" "$old/node_modules"
  log "social-feed $(lab $n), $st steps from 10:00 on webgpu: this tree and $old by turns"
  for i in 1 2; do
    for t in this old; do
      d=$PWD; [ $t = old ] && d=$(cd "$old" && pwd)
      (cd "$d" && node bin/socsim.mjs run social-feed --agents $n --steps $st --threads "$(nproc)" --backend webgpu --snapshot-every 0 --checkpoint-every 0 --quiet --force --set platform.startHour=10 --out /tmp/socsim-ab-$t > /dev/null 2> "$OUT/ab-$t-$i.err") || tail -3 "$OUT/ab-$t-$i.err"
      log "$t, round $i"; node "$D/summary.mjs" /tmp/socsim-ab-$t 4
    done
    d=0; for f in $(cd /tmp/socsim-ab-this && find . -name '*.arrow' | sort); do cmp -s /tmp/socsim-ab-this/$f /tmp/socsim-ab-old/$f || { d=$((d + 1)); echo "  DIFF $f"; }; done
    echo "round $i: $d Arrow files differ between this tree and $old"
  done ;;
adapter) ;;
*) log "unknown section $section" ;;
esac; done
log "done"
