#!/usr/bin/env bash
# Break the named modules on purpose and see which breakages the tests miss (mutmut).
#
#   tests/mutate.sh agent_cli/policy/refund_rules.py [MODULE ...] [-- tests/test_x.py ...]
#
# Each module is mutated (an operator flipped, a constant changed, a call's argument dropped:
# hundreds of small, realistic breakages), and for each mutant only the tests that run the
# mutated function are run again. Which tests: those given after `--`, else every test file that
# names one of the modules (`agent_cli.policy.refund_rules` or its file name); mutmut narrows
# them further per function. A copy of the tree is mutated, never the work tree.
#
# It prints, per module, how many mutants the tests killed and each survivor as a diff: pin each
# one with a test that fails on it, or say in the issue's note why it is harmless (a message's
# wording, a default no caller uses). Minutes on two cores for a module of a few hundred lines.
# A test that runs the agent in another process with its own working directory sees the
# original code, so its mutants may look like survivors: check those by hand.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
python=${PYTHON:-$root/.venv/bin/python}
[ -x "$python" ] || python=python3

modules=() tests=()
while [ $# -gt 0 ]; do
    case $1 in
        --) shift; tests+=("$@"); break ;;
        -h|--help) sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) modules+=("$1"); shift ;;
    esac
done
if [ ${#modules[@]} -eq 0 ]; then
    echo "usage: tests/mutate.sh MODULE.py [MODULE.py ...] [-- TEST_FILE ...]" >&2
    exit 2
fi
for module in "${modules[@]}"; do
    case $module in agent_cli/*.py) ;; *) echo "mutate.sh: $module is not a module under agent_cli/" >&2; exit 2 ;; esac
    [ -f "$module" ] || { echo "mutate.sh: no such module: $module" >&2; exit 2; }
done
"$python" -c "import mutmut" 2>/dev/null || {
    echo "mutate.sh: mutmut is not installed: pip install -e '.[dev]'" >&2
    exit 2
}

if [ ${#tests[@]} -eq 0 ]; then  # the test files that name a module, by dotted name or file
    for module in "${modules[@]}"; do
        dotted=${module%.py}; dotted=${dotted//\//.}; dotted=${dotted%.__init__}
        base=$(basename "${module%.py}")
        parent=${dotted%.*}
        while IFS= read -r found; do tests+=("$found"); done < <(
            grep -lE "${dotted//./\\.}\b|from ${parent//./\\.} import [^#]*\b$base\b" $(find tests -name "test_*.py") || true
        )
    done
    if [ ${#tests[@]} -gt 0 ]; then
        mapfile -t tests < <(printf '%s\n' "${tests[@]}" | sort -u)
    fi
fi
if [ ${#tests[@]} -eq 0 ]; then
    echo "mutate.sh: no test names ${modules[*]}; give the tests after --" >&2
    exit 2
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/agent-cli-mutate.XXXXXX")
trap 'rm -rf "$work"' EXIT
git ls-files -z --cached --others --exclude-standard | tar --null -T - -cf - | tar -xf - -C "$work"
cd "$work"
# One process per mutant, its tests in it: no xdist workers (they would not see the mutant).
sed -i 's/^addopts = .*/addopts = "-q -p no:randomly"/' pyproject.toml
{
    echo
    echo "[tool.mutmut]"
    echo 'source_paths = ["agent_cli/"]'
    # What the tests read beside the code (the sample config, the docs they check).
    echo 'also_copy = ["config.example.toml", "README.md", "ARCHITECTURE.md", "docs/", "benchmarks/"]'
    printf 'only_mutate = [%s]\n' "$(printf '"%s", ' "${modules[@]}" | sed 's/, $//')"
    echo 'pytest_add_cli_args = ["-p", "no:xdist", "-p", "no:cacheprovider"]'
    printf 'pytest_add_cli_args_test_selection = [%s]\n' "$(printf '"%s", ' "${tests[@]}" | sed 's/, $//')"
} >> pyproject.toml

echo "mutating ${modules[*]}"
echo "against ${#tests[@]} test file(s): ${tests[*]}"
started=$SECONDS
if ! "$python" -m mutmut run --max-children "${MUTATE_CHILDREN:-2}" > mutmut.log 2>&1; then
    tail -n 30 mutmut.log | tr '\r' '\n' | tail -n 20 >&2
    echo "mutate.sh: mutmut failed (the tests must pass unmutated first)" >&2
    exit 1
fi
"$python" -m mutmut results --all true > results.txt 2>/dev/null || "$python" -m mutmut results > results.txt
survivors=$(grep -c ': survived' results.txt || true)
killed=$(grep -c ': killed' results.txt || true)
other=$(grep -vcE ': (survived|killed)$' results.txt || true)
echo "done in $((SECONDS - started)) s: $killed killed, $survivors survived, $other other (timeouts, no tests)"
grep ': survived' results.txt | sed 's/: survived$//; s/^ *//' | while read -r mutant; do
    echo
    echo "survived: $mutant"
    "$python" -m mutmut show "$mutant" 2>/dev/null | grep -E '^[-+] ' | grep -vE '^(\+\+\+|---) ' || true
done
exit 0
