#!/usr/bin/env bash
# Builds the libFuzzer targets (tests/fuzz, preset "fuzz": clang, ASan + UBSan) and runs each for SECONDS
# (default 20) from its committed corpus (tools/fuzz/campaign.sh grows it) with its dictionary (tests/fuzz/dict/,
# tools/fuzz/make_dicts.py), two at a time (FUZZ_JOBS=1: one at a
# time, leaving a core free), after replaying the reproducers of fixed findings (tests/fuzz/regressions/).
# A crash, a leak, a timeout (> 10 s per input) or an allocation over 1 GiB fails the run; reproducers land in
# build/fuzz/findings/<target>/.
#   tools/fuzz/run.sh [SECONDS]          e.g. tools/fuzz/run.sh 3600 for a long run
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
seconds=${1:-20}
# Short runs (CI) use a fixed seed so that a run is repeatable; long runs a random one (0), or FUZZ_SEED.
seed=${FUZZ_SEED:-$((seconds <= 60 ? 1 : 0))}
cd "$root"
cmake --preset fuzz >/dev/null
cmake --build --preset fuzz -j2 >/dev/null
out=build/fuzz/findings
status=0
run() { # target
  local t=$1 work=build/fuzz/corpus-work/$1 dict=()
  mkdir -p "$out/$t" "$work"
  [[ -f tests/fuzz/dict/$t.dict ]] && dict=(-dict="tests/fuzz/dict/$t.dict")
  # the reproducers of fixed findings first (tests/fuzz/regressions/<target>/): each must run clean
  if [[ -d tests/fuzz/regressions/$t ]] && ! build/fuzz/tests/fuzz/$t tests/fuzz/regressions/$t/* -timeout=10 \
      -rss_limit_mb=2048 -malloc_limit_mb=1024 > "$out/$t.regressions.log" 2>&1; then
    echo "FAILED: $t replaying tests/fuzz/regressions/$t (see $out/$t.regressions.log)"
    return 1
  fi
  # new inputs go to the work folder; the committed seeds stay as they are
  if ! build/fuzz/tests/fuzz/$t "$work" tests/fuzz/corpus/$t "${dict[@]}" -max_total_time="$seconds" -seed="$seed" -timeout=10 \
      -rss_limit_mb=2048 -malloc_limit_mb=1024 -artifact_prefix="$out/$t/" -print_final_stats=1 \
      > "$out/$t.log" 2>&1; then
    # the log stays in build/; what the finding was goes to the output, so a CI log says it
    echo "FAILED: $t (see $out/$t.log):"
    grep -m8 -E '==ERROR|SUMMARY|ALARM|out-of-memory|Test unit written|deadly signal|leak' "$out/$t.log" | sed 's/^/  /'
    return 1
  fi
  echo "$t: $(grep -m1 'stat::number_of_executed_units' "$out/$t.log" | awk '{print $2}') executions, no findings"
}
source tools/fuzz/targets.sh
targets=("${fuzz_targets[@]}")
jobs=${FUZZ_JOBS:-2}
for ((i = 0; i < ${#targets[@]}; i += jobs)); do
  run "${targets[i]}" & a=$!
  b=""
  if ((jobs > 1 && i + 1 < ${#targets[@]})); then run "${targets[i+1]}" & b=$!; fi
  wait $a || status=1
  if [[ -n $b ]]; then wait $b || status=1; fi
done
exit $status
