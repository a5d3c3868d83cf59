#!/usr/bin/env bash
# Writes docs/fuzzing.md (stdout) from the campaign ledger (docs/fuzzing-campaigns.tsv, tools/fuzz/campaign.sh).
#   tools/fuzz/campaign_table.sh docs/fuzzing-campaigns.tsv > docs/fuzzing.md
set -euo pipefail
ledger=${1:-docs/fuzzing-campaigns.tsv}
cat <<'TEXT'
# Fuzzing campaigns

Every parser of a user's file has a libFuzzer target (tests/fuzz/, clang with ASan + UBSan, run by
`tools/fuzz/run.sh` for 20 s each in CI, starting from the committed corpora in tests/fuzz/corpus/).
`tools/fuzz/campaign.sh HOURS` runs them for long: each resumes from what earlier campaigns found, the corpus is
merged and minimised back into tests/fuzz/corpus/, and the running totals below come from
`docs/fuzzing-campaigns.tsv` (executions and seconds add up over campaigns; edges, features and the corpus are
the last campaign's). A finding's reproducer goes to tests/fuzz/regressions/<target>/, which `run.sh` replays.

| target | executions | hours | edges | features | corpus (files / KB) | findings | last run |
|---|---|---|---|---|---|---|---|
TEXT
awk -F'\t' 'NR > 1 {
  printf "| %s | %.0f | %.2f | %s | %s | %s / %s | %s | %s |\n", $1, $2, $3 / 3600, $4, $5, $6, $7, $8, $9
}' "$ledger"
