package lexical

import "strings"

// Query words carry the asking, not the subject: a reader's "用神应当从哪里
// 求取" or "how does the engine stop a script" shares its subject with the
// passage but not its question words. Left in, they match text by accident
// (and in a classical corpus a modern word like 什么 is rare, so BM25 gives
// it a high weight). They are removed from queries only; the index keeps
// every token, so a query made of nothing else still finds text.

// zhQueryWords are modern Chinese question words and fillers, removed as
// whole words (longest first) before the CJK run is cut into n-grams.
var zhQueryWords = []string{
	"可不可以", "怎么样", "为什么", "是不是", "有没有", "能不能", "会不会",
	"什么", "甚么", "怎么", "怎样", "如何", "为何", "哪里", "哪儿", "哪个", "哪些",
	"是否", "可以", "应该", "应当", "需要", "一下", "一个", "一些", "这个", "那个",
	"这些", "那些", "时候", "情况", "请问", "关于", "以及", "还是", "或者", "就是",
	"比较", "多少",
}

// zhQueryChars are single function characters of modern Chinese removed
// from queries. Characters that carry meaning in the classical texts (时 the
// hour pillar, 下, 有, 无, 之) are not among them.
const zhQueryChars = "的了吗呢吧啊呀么是和与及或在把被对给让就都也很还又再才这那它他她我你们个些"

// enStopWords are English function words removed from queries.
var enStopWords = toSet(`a an the of to in on for with by at from and or but nor is are was were be been
being am do does did doing how what why when where which who whom whose that this these those it its
his her hers their theirs them they he she we you i me my our ours your yours can could should would
may might must will shall as if than then so not no into about after before over under up down out
all any some such only own same there here also very just has have had having s t`)

func toSet(s string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(s) {
		m[w] = true
	}
	return m
}

// IsStopWord reports whether a lower-cased Latin token is an English
// function word.
func IsStopWord(tok string) bool { return enStopWords[tok] }

// IsStopWordBytes is [IsStopWord] of a token's UTF-8 bytes (the lookup
// allocates nothing).
func IsStopWordBytes(tok []byte) bool { return enStopWords[string(tok)] }

// StripQuestionWords replaces the Chinese question words and fillers
// (什么, 如何, 为什么, 应当...) in text with spaces, so that the CJK runs
// around them are cut there and no n-gram spans them.
func StripQuestionWords(text string) string {
	for _, w := range zhQueryWords {
		if strings.Contains(text, w) {
			text = strings.ReplaceAll(text, w, " ")
		}
	}
	return text
}

// StripQueryWords is [StripQuestionWords] followed by the removal of the
// Chinese function characters (的, 了, 是...).
func StripQueryWords(text string) string {
	return strings.Map(func(r rune) rune {
		if strings.ContainsRune(zhQueryChars, r) {
			return ' '
		}
		return r
	}, StripQuestionWords(text))
}
