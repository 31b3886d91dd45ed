#!/usr/bin/env bash
# Installs and starts what the test suite needs, when it can:
#   - poppler-utils (pdftotext) and pandoc: reference converters for the
#     fidelity tests;
#   - Chromium (Debian's package): the chat page is tested in it headless;
#   - PostgreSQL 15 with the pgvector extension (see scripts/postgres.sh).
# Under CI=true a missing piece fails the run; elsewhere it warns and the
# tests that need it skip loudly.
set -uo pipefail
cd "$(dirname "$0")/.."
mkdir -p .vibe

fail() {
	echo "test-deps: $*" >&2
	if [ "${CI:-}" = "true" ]; then exit 1; fi
}

SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi

need_pkgs=()
command -v pdftotext >/dev/null 2>&1 || need_pkgs+=(poppler-utils)
command -v pandoc >/dev/null 2>&1 || need_pkgs+=(pandoc)
command -v chromium >/dev/null 2>&1 || need_pkgs+=(chromium)
# Fonts for the page's screenshots (docs/img): without them Chromium draws
# Chinese text and emoji as boxes.
if command -v dpkg-query >/dev/null 2>&1; then
	for p in fonts-wqy-zenhei fonts-noto-color-emoji; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || need_pkgs+=("$p")
	done
fi
if [ ${#need_pkgs[@]} -gt 0 ]; then
	echo "test-deps: installing ${need_pkgs[*]}" >&2
	if command -v apt-get >/dev/null 2>&1; then
		$SUDO apt-get update -qq >/dev/null 2>&1 || true
		DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need_pkgs[@]}" >/dev/null 2>&1 ||
			fail "could not install ${need_pkgs[*]} with apt-get"
	else
		fail "no apt-get: install ${need_pkgs[*]} by hand"
	fi
fi

if [ -f scripts/postgres.sh ]; then
	bash scripts/postgres.sh || fail "PostgreSQL with pgvector is not available"
fi
exit 0
