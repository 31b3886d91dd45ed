#!/usr/bin/env bash
# Restores the eval data that is never committed (../data beside the repository, or $VIBE_DATA):
# the structure-test books (docs/books.md), the blind themes' sources (eval/blind/*/SOURCES.md),
# the public QA sets, tuning and held out (docs/retrieval.md), and the CC-CEDICT copy
# (docs/glossary.md). Every file is copied byte for byte with `git show <commit>:<path>` from a
# snapshot of its public repository and checked against the hash the docs give; the script fails
# on any mismatch and writes RESTORED.txt when all match.
#
# The snapshots are looked for in $VIBE_MIRROR (default /work/.mirror), as the search tool's
# `fetch github:<owner>/<name>` leaves them (<owner>+<name>/repo, bare or with a .git inside);
# a missing one is named, with the fetch to run, and the script stops. The travel-leave set also
# needs pandoc and chromium (`apt-get install pandoc chromium poppler-utils`, Debian bookworm).
#
# It never opens the files it restores beyond hashing them (the held-out sets stay blind).
set -euo pipefail
cd "$(dirname "$0")/.."
REPO=$PWD
DATA=${VIBE_DATA:-$REPO/../data}
MIRROR=${VIBE_MIRROR:-/work/.mirror}
log() { echo "restore-data.sh: $*" >&2; }

# The git directory of a fetched snapshot: fetch leaves either a bare repo or a checkout.
gitdir() {
	local d="$MIRROR/${1/\//+}/repo"
	if [ ! -d "$d" ]; then
		log "missing snapshot of $1: run the search tool's fetch github:$1 (or clone it to $d)"
		exit 1
	fi
	git -C "$d" rev-parse --absolute-git-dir
}
# show OWNER/NAME COMMIT PATH > file
show() { git --git-dir "$(gitdir "$1")" show "$2:$3"; }

failed=0
matched=()
# check FILE SIZE SHA256-PREFIX
check() {
	local size sum
	size=$(stat -c%s "$1")
	sum=$(sha256sum "$1" | cut -c1-${#3})
	if [ "$size" = "$2" ] && [ "$sum" = "$3" ]; then
		matched+=("$sum  $size  ${1#"$DATA"/}")
	else
		log "MISMATCH $1: $size bytes sha256 $sum, want $2 bytes $3"
		failed=1
	fi
}

# 1. Books (docs/books.md).
B=$DATA/books
mkdir -p "$B"
L=Leeky1017/LucidSelf; LC=e2e8bc1674038d3800296de41a8c8981e96c3eb9
show $L $LC 典籍/中文典籍/紫微斗数全书/原文/紫微斗数全书.md >"$B/ziwei-doushu-quanshu.md"
show $L $LC 典籍/中文典籍/梦林玄解/原文/梦林玄解.md >"$B/menglin-xuanjie.md"
show $L $LC 典籍/中文典籍/周易/原文/周易.md >"$B/zhouyi-wangbi.md"
for i in 0 1 2 3 4 5 6 7; do
	show kanripo/KR3d0003 49ccbd81f9275877a492b3960aab9e8f99178f7c KR3d0003_00$i.txt
done >"$B/nongsang-jiyao.kanripo.txt"
show oscarsun72/chtxt a8469ffeb36cfd9ef425a99ac90c5d20c4ba6108 z.其他/文心雕龍.txt >"$B/wenxin-diaolong.txt"
show Liangwe/word-frequency-count ea2ec1d562e6cdc22511c996f9dbeef9baa55260 水浒传.txt >"$B/shuihuzhuan.gbk.txt"
show yangpaimeng/RAG4LegalQA c85b3ffcca54ee207ef295e19e6b6879e2a2c467 中华人民共和国民法典.txt >"$B/civil-code.txt"
show GITenberg/The-Complete-Angler-1653_9198 3e96ba0d8cc824b4aaf81f9e8d08dd904996df2b 9198-8.txt >"$B/complete-angler.latin1.txt"
show GITenberg/Infantry-Drill-Regulations-United-States-Army-1911Corrected-to-April-15-1917--Changes-Nos.-1-__20866 \
	6df14b0a44c0051ff0427ca68e8fd70efefd74e0 20866-8.txt >"$B/infantry-drill-1911.latin1.txt"
show GITenberg/The-Art-of-War_132 20f54ddcd9792348e59b3e87e1e694f76e19fb53 132.txt >"$B/art-of-war.txt"
show GITenberg/Meditations_2680 f586bf5b5ac4ace02faf101904ad43d11170fdeb 2680.txt >"$B/meditations.txt"
show wellcometrust/text-duplicates ef7243b0f33733d9a9a3ec9a0a2ce330efab309b books/b21939743_djvu.txt >"$B/syphilitic-diseases.ocr.txt"
check "$B/ziwei-doushu-quanshu.md" 319451 900113f451e7505b
check "$B/menglin-xuanjie.md" 1713848 1d2b2a9f327238ad
check "$B/zhouyi-wangbi.md" 251353 85cfa5a4cb83b19e
check "$B/nongsang-jiyao.kanripo.txt" 215362 daec48c6e31a653e
check "$B/wenxin-diaolong.txt" 147127 095638506326ac69
check "$B/shuihuzhuan.gbk.txt" 1716675 03686c8f068eb2c1
check "$B/civil-code.txt" 358453 b66f396c879f3977
check "$B/complete-angler.latin1.txt" 241824 3778f7b215466852
check "$B/infantry-drill-1911.latin1.txt" 478402 dcf7e5d65274c7f9
check "$B/art-of-war.txt" 343688 7d97b653a5e458d3
check "$B/meditations.txt" 425173 fdc0199742a940fd
check "$B/syphilitic-diseases.ocr.txt" 467850 f87b66aef5b8b9d0

# 2. Blind themes' sources (eval/blind/*/SOURCES.md; bazi fetches nothing).
S=$DATA/blind/shanghan/source
mkdir -p "$S"
for f in 伤寒论.txt 499-金匮要略方论.txt 526-温病条辨.txt; do
	show Lowryyyy/Named-Entity-Recognition a392000b7359e0229b6862431f80ff91b7db6476 "$f" >"$S/$f"
done
check "$S/伤寒论.txt" 125706 f8c5bb0147f6c970
check "$S/499-金匮要略方论.txt" 83502 617250f7522da171
check "$S/526-温病条辨.txt" 241350 a5117824bd6f1efa

S=$DATA/blind/chess/source
mkdir -p "$S"
show Candersen27/chess-coach f142319870adb503b5e5773a31d4fd84f7293dec data/books/chess_fundamentals_capablanca.txt \
	>"$S/chess_fundamentals_capablanca.txt"
show GITenberg/Chess-Strategy_5614 be9e88eaa34d765785bfcf54213adb18abc650a5 5614.txt >"$S/5614.txt"
check "$S/chess_fundamentals_capablanca.txt" 262985 74d8ccd058638156
check "$S/5614.txt" 570899 87f589732f0b246d

S=$DATA/blind/travel-leave/source
mkdir -p "$S"
SOURCE_DATE_EPOCH=1795805803 python3 eval/blind/travel-leave/prepare.py "$(gitdir 18F/handbook)" "$S" >/dev/null
sed -i -b "s/(D:[0-9]\{14\}+00'00')/(D:20261127185658+00'00')/g" "$S/overtime-and-comp-time.pdf"
check "$S/TTS-Travel-Handbook.docx" 25114 0a36ea8796b2d24d
check "$S/leave.md" 20946 7c4b7857fcbc9fd0
check "$S/overtime-and-comp-time.pdf" 72107 09fd7a811fce2be4
check "$S/paid-parental-leave.txt" 4413 de3bb3c0d584b2fb
check "$S/travel-faq.html" 56624 940cb563cae6d31e

cat >"$DATA/blind/CHOSEN.txt" <<'EOF'
# Works chosen for the blind test themes (eval/blind/*/SOURCES.md); no one picks them as other test books.
shanghan	伤寒论 (张仲景)	Lowryyyy/Named-Entity-Recognition 伤寒论.txt
shanghan	金匮要略方论 (张仲景)	Lowryyyy/Named-Entity-Recognition 499-金匮要略方论.txt
shanghan	温病条辨 (吴鞠通)	Lowryyyy/Named-Entity-Recognition 526-温病条辨.txt
chess	Chess Fundamentals (Capablanca), PG #33870	Candersen27/chess-coach data/books/chess_fundamentals_capablanca.txt
chess	Chess Strategy (Edward Lasker), PG #5614	GITenberg/Chess-Strategy_5614 5614.txt
travel-leave	TTS handbook, pages/travel-and-leave/ (leave, overtime, paid-parental-leave, travel-and-leave-policies/*)	18F/handbook
bazi	no new work: the five books of ../shared/corpus/bazi (only the questions are held out)
EOF

# 3. Public QA sets (docs/retrieval.md): tuning in qa/, held out in heldout/qa/.
Q=$DATA/qa
H=$DATA/heldout/qa
mkdir -p "$Q" "$H"
show ymcui/cmrc2018 c0eb1b6ba219847457e6af3180da722bbeb656af squad-style-data/cmrc2018_dev.json >"$Q/cmrc2018_dev.json"
show chrischute/squad 85623adeb9e6639f145081fea9cae2d8f3a26379 data/dev-v2.0.json >"$Q/dev-v2.0.json"
show chrischute/squad 85623adeb9e6639f145081fea9cae2d8f3a26379 data/test-v2.0.json >"$Q/test-v2.0.json"
show google-deepmind/xquad 7d30520c717524000f0d9d2f9c10a069acd9d285 xquad.en.json >"$Q/xquad.en.json"
show google-deepmind/xquad 7d30520c717524000f0d9d2f9c10a069acd9d285 xquad.zh.json >"$H/xquad.zh.json"
show DRCKnowledgeTeam/DRCD b944790de5af02c5fbb7cd9cb1473d27d169eebf DRCD_dev.json >"$H/DRCD_dev.json"
show DRCKnowledgeTeam/DRCD b944790de5af02c5fbb7cd9cb1473d27d169eebf DRCD_test.json >"$H/DRCD_test.json"
show deepset-ai/COVID-QA fb2eb5e249618457e5359806601086c635c8eb8f data/question-answering/200423_covidQA.json >"$H/COVID-QA.json"
check "$Q/cmrc2018_dev.json" 3299139 e9ff74231f05c230
check "$Q/dev-v2.0.json" 2185577 e67e5969b6dc6c16
check "$Q/test-v2.0.json" 1174033 236eb1109ecfa619
check "$Q/xquad.en.json" 609383 e4c57d1c9143aaa1
check "$H/xquad.zh.json" 808652 691d0b3359bc6b8f
check "$H/DRCD_dev.json" 2184379 e236df03861ba241
check "$H/DRCD_test.json" 2125600 d9de0b4d247a8391
check "$H/COVID-QA.json" 2697757 ab310b4e39f726e0
cat >"$H/README.md" <<'EOF'
# Held-out public QA sets (never committed; never opened or scored while tuning)

Restored by scripts/restore-data.sh as docs/retrieval.md says: xquad.zh.json (google-deepmind/xquad),
DRCD_dev.json and DRCD_test.json (DRCKnowledgeTeam/DRCD), COVID-QA.json (deepset-ai/COVID-QA,
data/question-answering/200423_covidQA.json). xquad-en-over-zh pairs XQuAD's English questions with
xquad.zh.json's contexts (-set NAME=xquad.zh.json@xquad.en.json). Score them only after the
constants are fixed on the tuning sets in ../../qa.
EOF

# 4. CC-CEDICT, 2020-09-27 release (docs/glossary.md).
mkdir -p "$DATA/cedict"
show zfrxhg/pinyin-go b36058ca414e5c7a09120696f47bb966c17ae06e cedict_1_0_ts_utf-8_mdbg.txt.gz | gunzip >"$DATA/cedict/cedict_ts.u8"
check "$DATA/cedict/cedict_ts.u8" 9225348 96c12af2b94efb0b220ec4359aa9a972353684e4610462efe100005d55bb3914

if [ "$failed" != 0 ]; then
	log "some hashes did not match (above); RESTORED.txt not written"
	exit 1
fi
{
	echo "Restored $(date -u '+%Y-%m-%d %H:%M UTC') by scripts/restore-data.sh (vibe $(git rev-parse --short HEAD))."
	echo "All ${#matched[@]} files match the size and sha256 their docs give (sha256 prefix, bytes, file):"
	printf '%s\n' "${matched[@]}"
} >"$DATA/RESTORED.txt"
log "all ${#matched[@]} files match; wrote $DATA/RESTORED.txt"
