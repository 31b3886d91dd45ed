#!/usr/bin/env bash
# Ensures PostgreSQL 15 with the pgvector extension is installed and running,
# creates the test database vibe_test with the extension, and writes
# VIBE_TEST_DATABASE_URL into .vibe/test.env. Debian bookworm has no pgvector
# binary package, so the extension is built from pgvector's Debian source
# package of the trixie suite (deb-src entry added only for that) against
# postgresql-server-dev-15. Idempotent: quick when everything is in place.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p .vibe

PGVER=15
DB=vibe_test
SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
log() { echo "postgres.sh: $*" >&2; }

apt_updated=""
apt_install() {
	if [ -z "$apt_updated" ]; then $SUDO apt-get update -qq >/dev/null; apt_updated=1; fi
	$SUDO apt-get install -y -qq "$@" >/dev/null
}

# 1. Server and headers.
if [ ! -x /usr/lib/postgresql/$PGVER/bin/postgres ]; then
	log "installing postgresql-$PGVER"
	apt_install postgresql-$PGVER
fi

# 2. Running.
if ! pg_lsclusters -h 2>/dev/null | awk -v v=$PGVER '$1==v && $2=="main" && $4=="online"' | grep -q .; then
	log "starting cluster $PGVER/main"
	$SUDO pg_ctlcluster --skip-systemctl-redirect $PGVER main start
fi
PORT=$(pg_lsclusters -h | awk -v v=$PGVER '$1==v && $2=="main" {print $3}')

psql_admin() { $SUDO -u postgres psql -p "$PORT" -v ON_ERROR_STOP=1 -qAt "$@"; }
[ "$(id -u)" = 0 ] && psql_admin() { su postgres -c "psql -p $PORT -v ON_ERROR_STOP=1 -qAt $(printf '%q ' "$@")"; }

# 3. The vector extension.
if [ ! -f /usr/share/postgresql/$PGVER/extension/vector.control ]; then
	log "building pgvector from the trixie source package"
	command -v pg_config >/dev/null 2>&1 && [ -x /usr/lib/postgresql/$PGVER/bin/pg_config ] || true
	apt_install postgresql-server-dev-$PGVER build-essential dpkg-dev
	src=/etc/apt/sources.list.d/vibe-trixie-src.sources
	if [ ! -f $src ]; then
		$SUDO tee $src >/dev/null <<SRC
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: trixie
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
		$SUDO apt-get update -qq >/dev/null
	fi
	work=$(mktemp -d)
	(
		cd "$work"
		apt-get source -qq --download-only pgvector >/dev/null
		dpkg-source -x --no-check ./pgvector_*.dsc pgvector >/dev/null
		cd pgvector
		make -s PG_CONFIG=/usr/lib/postgresql/$PGVER/bin/pg_config >/dev/null
		$SUDO make -s PG_CONFIG=/usr/lib/postgresql/$PGVER/bin/pg_config install >/dev/null
	)
	rm -rf "$work"
fi

# 4. Test database with the extension.
if [ "$(psql_admin -c "SELECT 1 FROM pg_database WHERE datname = '$DB'")" != 1 ]; then
	log "creating database $DB"
	psql_admin -c "CREATE DATABASE $DB"
fi
psql_admin -d $DB -c "SET client_min_messages = warning; CREATE EXTENSION IF NOT EXISTS vector"

URL="postgres://postgres@127.0.0.1:$PORT/$DB?sslmode=disable"
echo "VIBE_TEST_DATABASE_URL=$URL" >.vibe/test.env
log "ready: VIBE_TEST_DATABASE_URL=$URL (in .vibe/test.env)"
