#!/usr/bin/env bash
# OS packages the code verifier's sandbox needs (Debian/Ubuntu): bubblewrap, prlimit (util-linux),
# libseccomp2 (loaded by the pyseccomp binding) and a system python3 under /usr for the sandbox to run;
# and Chromium, the browser tests/evals/test_viewer_browser.py drives through Playwright (no browser download).
# Installs only what is missing, with apt-get, as root or through passwordless sudo (`make setup`, and so
# `make demo` and `make test`, run this first; so does CI). Where it cannot install, it stops with one line
# that says what to run, before any other set-up; a missing Chromium alone only skips the browser tests.
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

missing_sandbox() {  # the sandbox's packages that are missing, by Debian name
    command -v bwrap >/dev/null 2>&1 || echo bubblewrap
    [ -x /usr/bin/prlimit ] || echo util-linux
    # grep reads it all: with -q it could exit first, and pipefail would count ldconfig's SIGPIPE as a miss
    { ldconfig -p 2>/dev/null || /sbin/ldconfig -p; } | grep 'libseccomp\.so\.2' >/dev/null || echo libseccomp2
    [ -x /usr/bin/python3 ] || echo python3-minimal
}
missing_browser() {
    command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 || echo chromium
}

sandbox=$(missing_sandbox | xargs)
browser=$(missing_browser)
if [ -z "$sandbox" ] && [ -z "$browser" ]; then
    echo "system dependencies present: $(bwrap --version), $(/usr/bin/python3 --version), chromium"
    exit 0
fi

sudo=""
can_install=yes
if ! command -v apt-get >/dev/null 2>&1; then
    can_install=no
elif [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1 && sudo -n true >/dev/null 2>&1; then
        sudo="sudo"
    else
        can_install=no
    fi
fi

if [ "$can_install" = no ]; then
    packages="${sandbox}${sandbox:+${browser:+ }}${browser}"
    if ! command -v apt-get >/dev/null 2>&1; then
        how="install them with your package manager"
    else
        how="run \`sudo bash scripts/install_system_deps.sh\` (apt-get needs root)"
    fi
    if [ -n "$sandbox" ]; then
        echo "error: the code verifier's sandbox needs OS packages that are missing ($packages): $how, then run this command again." >&2
        exit 1
    fi
    echo "note: $browser is missing (the browser tests skip without it): $how to add it."
    exit 0
fi

packages="${sandbox}${sandbox:+${browser:+ }}${browser}"
echo "installing ${packages}${sudo:+ (sudo)}"
$sudo apt-get update -qq
# shellcheck disable=SC2086  # one word per package
$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $packages
still=$(missing_sandbox | xargs)
if [ -n "$still" ]; then
    echo "error: apt-get ran but $still is still missing: install it with your package manager, then run this command again." >&2
    exit 1
fi
echo "system dependencies present: $(bwrap --version), $(/usr/bin/python3 --version)"
