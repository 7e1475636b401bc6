#!/usr/bin/env bash
# OS packages the code verifier's sandbox needs (Debian/Ubuntu): bubblewrap, prlimit (util-linux),
# libseccomp2 (loaded by the pyseccomp binding) and a system python3 under /usr for the sandbox to run;
# and Chromium, the browser tests/evals/test_viewer_browser.py drives through Playwright (no browser download).
# Installs only what is missing; uses sudo when not root. CI runs this; so can you.
set -euo pipefail
if [ $# -gt 0 ]; then
    case "$1" in
        -h|--help)
            sed -n '2,/^set /p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
            echo "usage: bash scripts/install_system_deps.sh   (no options: checks, then installs what is missing)"
            exit 0 ;;
        *) echo "unknown argument: $1 (bash scripts/install_system_deps.sh --help)" >&2; exit 2 ;;
    esac
fi
need=()
command -v bwrap >/dev/null 2>&1 || need+=(bubblewrap)
[ -x /usr/bin/prlimit ] || need+=(util-linux)
{ ldconfig -p 2>/dev/null || /sbin/ldconfig -p; } | grep -q 'libseccomp\.so\.2' || need+=(libseccomp2)
[ -x /usr/bin/python3 ] || need+=(python3-minimal)
command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 || need+=(chromium)
if [ ${#need[@]} -eq 0 ]; then
    echo "system dependencies present: $(bwrap --version), $(/usr/bin/python3 --version), chromium"
    exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
    echo "missing ${need[*]} and no apt-get: install bubblewrap, util-linux, libseccomp, python3 and chromium with your package manager" >&2
    exit 1
fi
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
echo "installing ${need[*]}"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${need[@]}"
