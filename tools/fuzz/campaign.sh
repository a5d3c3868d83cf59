#!/usr/bin/env bash
# A fuzz campaign (issue 46): every libFuzzer target (tests/fuzz, preset "fuzz": clang, ASan + UBSan) for a
# share of HOURS of wall time, two at a time (FUZZ_JOBS=1: one), each resuming from its campaign corpus
# (build/fuzz/campaign/<target>/: what earlier campaigns on this machine found) seeded with the committed one
# (tests/fuzz/corpus/<target>/), with its dictionary (tests/fuzz/dict/<target>.dict, tools/fuzz/make_dicts.py:
# the format's tokens, so that mutations get past its header). FUZZ_UNTIL=N instead runs the targets in turn,
# each until its running total (the ledger's) reaches N executions, and stops when HOURS have passed. As each
# target ends:
#   - what it found is merged into tests/fuzz/corpus/<target>/ (libFuzzer -merge=1: the committed seeds stay, the
#     fewest new inputs that reach new edges are added) — commit it: CI's short run starts from it;
#   - docs/fuzzing-campaigns.tsv (committed) adds this run's executions and seconds to the target's running
#     totals and records its coverage (edges, features), corpus size and findings; docs/fuzzing.md's table is
#     rewritten from it (so a campaign stopped early keeps what its finished targets did).
# A finding (crash, leak, timeout > 10 s, allocation > 1 GiB) stops that target; its reproducer lands in
# build/fuzz/findings/<target>/ and the table counts it. Fix it, copy the reproducer to
# tests/fuzz/regressions/<target>/ (tools/fuzz/run.sh replays that folder first), and run the campaign again.
#   tools/fuzz/campaign.sh HOURS [TARGET ...]      e.g. tools/fuzz/campaign.sh 4, or 0.05 for a smoke run
#   FUZZ_UNTIL=10000000 FUZZ_JOBS=1 tools/fuzz/campaign.sh 2.5 fuzz_configs fuzz_npy
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
hours=${1:?usage: tools/fuzz/campaign.sh HOURS [TARGET ...]}
shift
source tools/fuzz/targets.sh # fuzz_targets=(…)
targets=("$@")
((${#targets[@]})) || targets=("${fuzz_targets[@]}")
jobs=${FUZZ_JOBS:-2}
until_runs=${FUZZ_UNTIL:-0}
deadline=$(awk -v h="$hours" -v now="$(date +%s)" 'BEGIN { print int(now + h * 3600) }')
# each target's share of the wall time: HOURS × jobs / targets
seconds=$(awk -v h="$hours" -v j="$jobs" -v n="${#targets[@]}" 'BEGIN { s = int(h * 3600 * j / n); print (s < 10 ? 10 : s) }')
cmake --preset fuzz >/dev/null
cmake --build --preset fuzz -j2 >/dev/null
bin=build/fuzz/tests/fuzz
work=build/fuzz/campaign
ledger=docs/fuzzing-campaigns.tsv
mkdir -p "$work"
[[ -f $ledger ]] || printf 'target\texecutions\tseconds\tedges\tfeatures\tcorpus_files\tcorpus_kb\tfindings\tlast_run\n' >"$ledger"
if ((until_runs > 0)); then
  jobs=1
  echo "campaign: ${#targets[@]} target(s) in turn, each until $until_runs executions in all, for $hours h"
else
  echo "campaign: ${#targets[@]} target(s), ${seconds} s each, $jobs at a time"
fi

total_runs() { # target: its executions so far (the ledger's running total)
  awk -F'\t' -v t="$1" '$1 == t { print $2; found = 1 } END { if (!found) print 0 }' "$ledger"
}

one() { # target: fuzz, merge back, record in the ledger
  local t=$1 log=$work/$1.log findings=0 start end limits=()
  mkdir -p "$work/$t" "build/fuzz/findings/$t"
  start=$(date +%s)
  if ((until_runs > 0)); then
    local left=$((until_runs - $(total_runs "$t"))) secs=$((deadline - start))
    if ((left <= 0 || secs < 10)); then
      echo "$t: skipped ($((until_runs - left)) executions so far, $secs s left)"
      return 0
    fi
    limits=(-runs="$left" -max_total_time="$secs")
  else
    limits=(-max_total_time="$seconds")
  fi
  [[ -f tests/fuzz/dict/$t.dict ]] && limits+=(-dict="tests/fuzz/dict/$t.dict")
  if ! "$bin/$t" "$work/$t" "tests/fuzz/corpus/$t" "${limits[@]}" -seed=0 -timeout=10 \
      -rss_limit_mb=2048 -malloc_limit_mb=1024 -artifact_prefix="build/fuzz/findings/$t/" -print_final_stats=1 \
      -print_pcs=0 >"$log" 2>&1; then
    findings=1
    echo "FINDING: $t (see $log):"
    grep -m8 -E '==ERROR|SUMMARY|ALARM|out-of-memory|Test unit written|deadly signal|leak' "$log" | sed 's/^/  /' ||
      true
  fi
  end=$(date +%s)
  local execs cov ft
  execs=$(grep -m1 'stat::number_of_executed_units' "$log" | awk '{print $2}' || true)
  cov=$(grep -oE 'cov: [0-9]+' "$log" | tail -1 | awk '{print $2}' || true)
  ft=$(grep -oE 'ft: [0-9]+' "$log" | tail -1 | awk '{print $2}' || true)
  # merge into the committed corpus: its inputs (named seeds from our fixtures) stay, and of everything found
  # (this campaign's and earlier ones') only the inputs that reach new edges are added — counted without hit
  # counts (-use_counters=0), which keeps the committed folder small (a 38 s run of fuzz_configs: 306 files,
  # 1.3 MB, against 1 129 files with counters)
  local before
  before=$(find "tests/fuzz/corpus/$t" -type f | wc -l)
  "$bin/$t" -merge=1 -use_counters=0 -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=1024 "tests/fuzz/corpus/$t" \
    "$work/$t" >"$work/$t.merge.log" 2>&1 || echo "warning: $t: merge failed (see $work/$t.merge.log)"
  echo "$t: corpus $before -> $(find "tests/fuzz/corpus/$t" -type f | wc -l) files"
  echo "$t: ${execs:-0} executions in $((end - start)) s, cov ${cov:-0}, ft ${ft:-0}, findings $findings"
  (
    flock 9
    record "$t" "${execs:-0}" $((end - start)) "${cov:-0}" "${ft:-0}" "$findings"
    tools/fuzz/campaign_table.sh "$ledger" >docs/fuzzing.md
  ) 9>"$work/ledger.lock"
}

record() { # target executions seconds edges features findings: the ledger's running totals grow
  local t=$1 files kb
  files=$(find "tests/fuzz/corpus/$t" -type f | wc -l)
  kb=$(du -sb "tests/fuzz/corpus/$t" | awk '{print int($1 / 1024)}') # bytes in the files, not disk blocks
  awk -F'\t' -v OFS='\t' -v t="$t" -v e="$2" -v s="$3" -v c="$4" -v f="$5" -v n="$files" -v k="$kb" \
    -v x="$6" -v d="$(date -u +%Y-%m-%d)" '
    NR == 1 { print; next }
    $1 == t { print t, $2 + e, $3 + s, c, f, n, k, $8 + x, d; done = 1; next }
    { print }
    END { if (!done) print t, e, s, c, f, n, k, x, d }' "$ledger" >"$ledger.new"
  mv "$ledger.new" "$ledger"
}

for ((i = 0; i < ${#targets[@]}; i += jobs)); do
  pids=()
  for ((k = i; k < i + jobs && k < ${#targets[@]}; ++k)); do
    one "${targets[k]}" &
    pids+=($!)
  done
  for p in "${pids[@]}"; do wait "$p"; done
done

echo "ledger: $ledger; table: docs/fuzzing.md"
