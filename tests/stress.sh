#!/usr/bin/env bash
# The suite on a busy machine: two full copies run at the same time, ROUNDS (3) times in a row;
# every copy of every round must pass. Extra arguments go to both pytest runs.
#   bash tests/stress.sh            # after the Quick start's install
#   ROUNDS=1 bash tests/stress.sh -x
set -uo pipefail
cd "$(dirname "$0")/.."
python=${PYTHON:-.venv/bin/python}
rounds=${ROUNDS:-3}
work=$(mktemp -d)
failed=0
for round in $(seq 1 "$rounds"); do
    pids=()
    for copy in 1 2; do
        # Each copy its own temporary folders, and no shared cache file to race on.
        "$python" -m pytest -p no:cacheprovider --basetemp "$work/tmp-$round-$copy" "$@" \
            >"$work/$round-$copy.log" 2>&1 &
        pids+=("$!")
    done
    for copy in 1 2; do
        log="$work/$round-$copy.log"
        if wait "${pids[$((copy - 1))]}"; then
            echo "round $round, copy $copy: $(tail -n 1 "$log")"
        else
            failed=1
            echo "round $round, copy $copy FAILED:"
            grep -E "^(FAILED|ERROR)|Error|assert" "$log" | head -n 40
            tail -n 1 "$log"
        fi
    done
done
if [ "$failed" -ne 0 ]; then
    echo "stress: some copies failed; their logs are in $work"
    exit 1
fi
rm -rf "$work"
echo "stress: all $((rounds * 2)) copies passed"
