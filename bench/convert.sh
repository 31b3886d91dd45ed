#!/bin/sh
# bench/convert.sh: convert ../shared/corpus with vibe and with the reference
# tools (pdftotext for PDF, pandoc for EPUB/DOCX, the expected main content for
# HTML) and print token F1 and the time ratio (vibe / reference) per file and
# per format. Also measures the go-pdfium WebAssembly engine on every PDF.
#
#   bench/convert.sh [CORPUS_DIR]        (default: ../shared/corpus)
#   VIBE_BIN=path/to/vibe bench/convert.sh   convert through `vibe convert FILE -o DIR`
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
corpus=${1:-$root/../shared/corpus}
for tool in pdftotext pandoc; do
	command -v "$tool" >/dev/null 2>&1 || echo "note: $tool not installed; its format is reported as a reference error (make test-deps installs it)" >&2
done
cd "$root"
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
go build -o "$bin/convertbench" ./bench/convertbench
set -- -pdfium
if [ -n "${VIBE_BIN:-}" ]; then
	set -- "$@" -vibe "$VIBE_BIN"
fi
"$bin/convertbench" "$@" "$corpus"
