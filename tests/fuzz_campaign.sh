#!/usr/bin/env bash
# The longer fuzz campaign over every reader target of tests/fuzz_readers.rs:
# the same proptest targets `cargo test` runs (150 cases each, seed 7), here
# with many seeds and more cases per seed, for a set time; and with each seed
# the REval reply parsers (reval/fuzz_parsers.py, CASES x 4 mutated replies).
#
#   bash tests/fuzz_campaign.sh [MINUTES] [CASES_PER_TARGET]   (default 30, 5000)
#
# Prints (and writes to target/fuzz-campaign/summary.txt) the minutes run,
# the seeds tried, the inputs tried (targets x cases x seeds) and the crashes;
# each crash's output is kept as target/fuzz-campaign/crash-SEED.txt. Each
# seed also runs codecal's printing subcommands with stdout on /dev/full. Exits
# non-zero if anything crashed.
set -euo pipefail
cd "$(dirname "$0")/.."
minutes=${1:-30}
cases=${2:-5000}
out=target/fuzz-campaign
mkdir -p "$out"
# Build once and run a copy, so a rebuild meanwhile does not swap it.
binary=$(cargo test --release --no-run --test fuzz_readers --message-format=json 2>/dev/null |
    python3 -c 'import json,sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["target"]["name"] == "fuzz_readers":
        print(m["executable"])')
cp "$binary" "$out/fuzz_readers"
cargo build --release --quiet
cp target/release/codecal "$out/codecal"
# Every subcommand that prints, with its stdout on /dev/full: a write error
# must end the program with its one-line error and status 1, never a panic.
full_writes=0
stdout_full() {
    local fixture=tests/fixtures/calibration_small.csv
    for args in "calibrate $fixture --bootstrap 0 --json" "calibrate $fixture --bootstrap $1" \
        "judge --help" "apply --calibrator $out/c.json $fixture"; do
        # shellcheck disable=SC2086
        local status=0
        "$out/codecal" $args >/dev/full 2>"$out/last-full.txt" || status=$?
        ((status == 1)) || return 1
        grep -q panicked "$out/last-full.txt" && return 1
        grep -q "^codecal: error: cannot write to standard output" "$out/last-full.txt" || return 1
        full_writes=$((full_writes + 1))
    done
}
"$out/codecal" calibrate tests/fixtures/calibration_small.csv --bootstrap 0 --save "$out/c.json" >/dev/null
targets=$("$out/fuzz_readers" --list 2>/dev/null | grep -c ': test$')
start=$(date +%s)
deadline=$((start + minutes * 60))
seed=1000
seeds=0
crashes=0
while (($(date +%s) < deadline)); do
    if ! CODECAL_FUZZ_SEED=$seed CODECAL_FUZZ_CASES=$cases "$out/fuzz_readers" --test-threads 1 \
        >"$out/last.txt" 2>&1; then
        crashes=$((crashes + 1))
        cp "$out/last.txt" "$out/crash-$seed.txt"
        echo "crash with seed $seed: $out/crash-$seed.txt"
    fi
    if ! python3 reval/fuzz_parsers.py --seed $seed --cases $((cases * 4)) --pairs 200 \
        >"$out/last-reval.txt" 2>&1; then
        crashes=$((crashes + 1))
        cp "$out/last-reval.txt" "$out/crash-reval-$seed.txt"
        echo "REval parser crash with seed $seed: $out/crash-reval-$seed.txt"
    fi
    if ! stdout_full $((seed % 50)); then
        crashes=$((crashes + 1))
        cp "$out/last-full.txt" "$out/crash-full-$seed.txt"
        echo "stdout write error not handled (seed $seed): $out/crash-full-$seed.txt"
    fi
    seeds=$((seeds + 1))
    seed=$((seed + 1))
done
elapsed=$(($(date +%s) - start))
summary="fuzz campaign: $((elapsed / 60)) min $((elapsed % 60)) s, $targets targets, $seeds seeds x $cases cases = $((targets * seeds * cases)) inputs, $((seeds * cases * 4)) mutated REval replies and $full_writes runs with stdout on /dev/full, $crashes crashes ($(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores)"
echo "$summary" | tee "$out/summary.txt"
((crashes == 0))
