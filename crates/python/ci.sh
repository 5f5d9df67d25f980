#!/usr/bin/env bash
# Builds and installs the Python package in a fresh virtual environment,
# as a user would (`pip install ./crates/python`), and runs its pytest
# suite against the partalloc tool of the Rust workspace.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"

if ! command -v python3 >/dev/null 2>&1; then
    echo "python3 is not installed: skipping the Python package (crates/python)"
    exit 0
fi

# One target directory with the Rust workspace, so CI builds it once.
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$root/target}"
venv="$CARGO_TARGET_DIR/python-ci-venv"
rm -rf "$venv"
python3 -m venv "$venv"
py="$venv/bin/python"
# matplotlib: docs/python.md plots with it, and its code blocks run as tests.
"$py" -m pip install --quiet --disable-pip-version-check maturin numpy gymnasium pytest pandas matplotlib evalys
"$py" -m pip install --quiet --disable-pip-version-check "$here"

# The simulate tests compare with the tool itself.
cargo build --quiet -p partalloc-cli --manifest-path "$root/Cargo.toml"
export PARTALLOC_CLI="$CARGO_TARGET_DIR/debug/partalloc"

cd "$here"
set +e
"$py" -m pytest -q -p no:cacheprovider tests
rc=$?
set -e
if [ "$rc" -eq 5 ]; then
    echo "error: pytest collected no test in crates/python/tests"
    exit 1
fi
exit "$rc"
