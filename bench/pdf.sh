#!/usr/bin/env bash
# bench/pdf.sh: one `vibe convert` of a folder of PDFs against pdftotext run
# once per file, whole processes on both sides (start-up included), in one
# run: CPU (user+sys), wall, max RSS and the load average, for vibe with a
# cold pdfium compilation cache (the first process on a machine), then with
# the warm cache (every later process), against pdftotext; the same with
# convert.pdf_page_instances 2 (pages of a long PDF also read on an idle
# second pdfium instance; the default is 1); and `vibe --version`, the floor any vibe process starts from (its max RSS is mostly
# the binary's own pages, which the kernel maps in large folios).
#
#   bench/pdf.sh [PDF_OR_DIR...]     (default: ../shared/corpus/pdf and the
#                                     PDF manuals of Debian's libtasn1-doc and
#                                     shared-mime-info when installed)
#   VIBE_PDF_RUNS=N                  warm runs of each side (default 5; the
#                                     median is reported)
#   VIBE_BIN=path/to/vibe            use this binary instead of building one
#
# Needs pdftotext (poppler-utils; make test-deps installs it) and GNU time
# (/usr/bin/time; installed from Debian when missing, like poppler-utils).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
runs=${VIBE_PDF_RUNS:-5}

missing=()
command -v pdftotext >/dev/null 2>&1 || missing+=(poppler-utils)
[ -x /usr/bin/time ] || missing+=(time)
if [ ${#missing[@]} -gt 0 ]; then
	echo "bench/pdf.sh: installing ${missing[*]} (Debian)" >&2
	{ apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}"; } >&2
fi

work=$(mktemp -d /tmp/vibe-pdfbench.XXXXXX)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/pdfs"
srcs=("$@")
if [ ${#srcs[@]} -eq 0 ]; then
	srcs=("$root/../shared/corpus/pdf")
	for f in /usr/share/doc/libtasn1-doc/libtasn1.pdf /usr/share/doc/shared-mime-info/shared-mime-info-spec.pdf; do
		[ -f "$f" ] && srcs+=("$f")
	done
fi
for s in "${srcs[@]}"; do
	if [ -d "$s" ]; then
		find "$s" -maxdepth 1 -type f -iname '*.pdf' -exec cp {} "$work/pdfs/" \;
	elif [ -f "$s" ]; then
		cp "$s" "$work/pdfs/"
	else
		echo "bench/pdf.sh: $s: no such file or directory" >&2
		exit 2
	fi
done
n=$(find "$work/pdfs" -type f | wc -l)
if [ "$n" -eq 0 ]; then
	echo "bench/pdf.sh: no PDFs in ${srcs[*]}" >&2
	exit 2
fi
pages=0
for f in "$work/pdfs"/*; do
	p=$(pdfinfo "$f" 2>/dev/null | awk '/^Pages:/ { print $2 }' || true)
	pages=$((pages + ${p:-0}))
done
bytes=$(du -cb "$work/pdfs"/* | tail -1 | cut -f1)

vibe=${VIBE_BIN:-}
if [ -z "$vibe" ]; then
	vibe="$work/bin/vibe"
	mkdir -p "$work/bin"
	go build -o "$vibe" ./cmd/vibe
fi
# The pdfium compilation cache lives in the bench's own directory, so the
# cold run really compiles and nothing outside is touched.
export XDG_CACHE_HOME="$work/cache"
# vibe refuses the repository as its workspace: run it from the bench's
# directory.
cd "$work"

# measure NAME CMD...: one run under GNU time; appends
# "user sys wall maxrss_kb" to $work/NAME.
measure() {
	local name=$1
	shift
	/usr/bin/time -q -f '%U %S %e %M' -o "$work/time" "$@" >/dev/null 2>"$work/stderr.$name" || true
	cat "$work/time" >>"$work/t.$name"
}
vibe_cmd=("$vibe" convert "$work/pdfs" -o "$work/out" --force)
pdftotext_cmd=(sh -c 'for f in "$0"/*; do pdftotext -enc UTF-8 "$f" - >/dev/null 2>&1; done' "$work/pdfs")

load0=$(cut -d' ' -f1-3 /proc/loadavg)
rm -rf "$work/out" "$XDG_CACHE_HOME"
measure vibe-cold "${vibe_cmd[@]}"
converted=$(find "$work/out" -name '*.md' 2>/dev/null | wc -l || true)
if [ "$converted" -eq 0 ]; then
	echo "bench/pdf.sh: vibe convert converted nothing:" >&2
	cat "$work/stderr.vibe-cold" >&2
	exit 1
fi
ok=0
for f in "$work/pdfs"/*; do pdftotext -enc UTF-8 "$f" - >/dev/null 2>&1 && ok=$((ok + 1)); done
# Warm runs, the two sides alternating so that a change of load hits both.
for _ in $(seq "$runs"); do
	rm -rf "$work/out"
	measure vibe "${vibe_cmd[@]}"
	measure pdftotext "${pdftotext_cmd[@]}"
	rm -rf "$work/out"
	measure vibe-pages2 env VIBE_CONVERT_PDF_PAGE_INSTANCES=2 "${vibe_cmd[@]}"
	measure vibe-version "$vibe" --version
done
load1=$(cut -d' ' -f1-3 /proc/loadavg)

# median FILE: the run whose CPU (user+sys) is the median, as
# "cpu user sys wall maxrss_kb".
median() {
	awk '{ printf "%.2f %s %s %s %s\n", $1 + $2, $1, $2, $3, $4 }' "$1" | sort -n | awk '{ a[NR] = $0 } END { print a[int((NR + 1) / 2)] }'
}
read -r vc_cpu vc_user vc_sys vc_wall vc_rss < <(median "$work/t.vibe-cold")
read -r v_cpu v_user v_sys v_wall v_rss < <(median "$work/t.vibe")
read -r v2_cpu v2_user v2_sys v2_wall v2_rss < <(median "$work/t.vibe-pages2")
read -r p_cpu p_user p_sys p_wall p_rss < <(median "$work/t.pdftotext")
read -r b_cpu b_user b_sys b_wall b_rss < <(median "$work/t.vibe-version")
mib() { awk -v k="$1" 'BEGIN { printf "%.1f", k / 1024 }'; }
maxrss() { awk 'BEGIN { m = 0 } $4 > m { m = $4 } END { printf "%.1f", m / 1024 }' "$1"; }

echo "PDFs: $n files, $pages pages, $((bytes / 1024)) KiB ($(printf '%s ' "${srcs[@]}"))"
echo "vibe convert: $converted converted (the rest refused with an error); pdftotext: $ok of $n succeed"
echo "load average: $load0 before, $load1 after; $(nproc) CPUs; median of $runs warm runs (CPU = user+sys)"
echo
echo "| process | CPU s | user s | sys s | wall s | max RSS MiB (median run) | max RSS MiB (worst run) |"
echo "|---|---|---|---|---|---|---|"
printf '| vibe convert, cold cache (compiles pdfium) | %s | %s | %s | %s | %s | %s |\n' "$vc_cpu" "$vc_user" "$vc_sys" "$vc_wall" "$(mib "$vc_rss")" "$(maxrss "$work/t.vibe-cold")"
printf '| vibe convert, warm cache | %s | %s | %s | %s | %s | %s |\n' "$v_cpu" "$v_user" "$v_sys" "$v_wall" "$(mib "$v_rss")" "$(maxrss "$work/t.vibe")"
printf '| vibe convert, warm cache, pdf_page_instances 2 | %s | %s | %s | %s | %s | %s |\n' "$v2_cpu" "$v2_user" "$v2_sys" "$v2_wall" "$(mib "$v2_rss")" "$(maxrss "$work/t.vibe-pages2")"
printf '| pdftotext, once per file | %s | %s | %s | %s | %s | %s |\n' "$p_cpu" "$p_user" "$p_sys" "$p_wall" "$(mib "$p_rss")" "$(maxrss "$work/t.pdftotext")"
printf '| vibe --version (the binary alone: its start-up and pages) | %s | %s | %s | %s | %s | %s |\n' "$b_cpu" "$b_user" "$b_sys" "$b_wall" "$(mib "$b_rss")" "$(maxrss "$work/t.vibe-version")"
echo
awk -v v="$v_cpu" -v p="$p_cpu" -v vw="$v_wall" -v pw="$p_wall" -v vr="$(maxrss "$work/t.vibe")" 'BEGIN {
	printf "vibe / pdftotext: CPU %.2fx, wall %.2fx (warm cache; target: CPU <= 2x and max RSS < 120 MiB; worst warm run %s MiB)\n", v / p, vw / pw, vr
}'
