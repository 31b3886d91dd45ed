package runtime

import (
	"strings"
	"unicode"
)

// Languages of a question and of a skill's sources, as far as search and
// the bridge need to know: Chinese (Han script), or one of the Latin-script
// languages latinLanguage tells apart. English stands for any Latin-script
// text no other profile claims.
const (
	langZH = "zh"
	langEN = "en"
	langES = "es"
	langFR = "fr"
	langDE = "de"
	langPT = "pt"
	langIT = "it"
)

// languageNames names each language in English.
var languageNames = map[string]string{
	langZH: "Chinese",
	langEN: "English",
	langES: "Spanish",
	langFR: "French",
	langDE: "German",
	langPT: "Portuguese",
	langIT: "Italian",
}

// LanguageName names a language of [QueryLanguage] in English ("Chinese",
// "English", "Spanish" …); English for an unknown code.
func LanguageName(l string) string {
	if n, ok := languageNames[l]; ok {
		return n
	}
	return "English"
}

// latinProfiles are the function words of each Latin-script language that
// tell it from the others: short, frequent, and (except English's) not
// English words, so an English question citing one foreign word ("per
// diem", "de minimis") stays English. A word may be in several profiles
// (que: Spanish, French, Portuguese); it counts for each.
var latinProfiles = map[string]map[string]bool{}

func init() {
	for l, words := range map[string]string{
		langEN: "the of and to in is are was were for on that with as it this what how when where why which who whom " +
			"my your our their his her its can does do did should would could will shall must may might have has had " +
			"be been being an if or not from by at about than there these those they we you i any many much",
		langES: "el la los las del que y en por para con una unos unas es está están esta este estos estas " +
			"qué cómo cuándo cuánto cuántos cuántas cuál cuáles dónde quién porque pero muy más ya también " +
			"puedo puede pueden debo debe deben tengo tiene tienen hay ser sido fue mi mis su sus yo tú usted " +
			"se lo le les nos al sobre entre hasta desde durante cuando como si sí",
		langFR: "le la les des du de et en est sont que qui quoi pour avec une un dans sur pas ne ce cette ces " +
			"quel quelle quels quelles comment pourquoi où quand je tu il elle nous vous ils elles mon ma mes " +
			"sa ses leur leurs peut puis dois doit avez avons être été au aux ou mais très aussi",
		langDE: "der die das und ist sind ein eine einen einem einer nicht mit von zu den dem des für auf im " +
			"wie wann warum wo wer welche welcher ich du er sie wir ihr mein meine kann können muss müssen " +
			"habe hat haben wird werden bei oder aber auch sehr nach über",
		langPT: "os da dos das que em na nos nas por para com um uma é são está estão " +
			"não como quando onde porque qual quais quanto quantos quantas posso pode podem devo deve tenho tem " +
			"meu minha meus minhas seu sua ao aos pelo pela mas muito também",
		langIT: "il lo la gli le dei degli delle del della che è sono con un una non quando dove " +
			"perché quale quali quanto quanti quante posso può devo deve ho ha hanno mio mia miei mie suo sua " +
			"al alla ai nel nella ma molto anche",
	} {
		set := map[string]bool{}
		for _, w := range strings.Fields(words) {
			set[w] = true
		}
		latinProfiles[l] = set
	}
}

// latinMarks are letters (and Spanish's opening marks) only one or two of
// the profiled languages write: a word holding one counts for them.
var latinMarks = map[rune][]string{
	'ñ': {langES}, '¿': {langES}, '¡': {langES},
	'ã': {langPT}, 'õ': {langPT},
	'ß': {langDE}, 'ä': {langDE}, 'ö': {langDE}, 'ü': {langDE},
	'ç': {langFR, langPT}, 'œ': {langFR}, 'ê': {langFR, langPT}, 'î': {langFR}, 'û': {langFR}, 'ë': {langFR},
	'è': {langFR, langIT}, 'ù': {langFR, langIT}, 'ì': {langIT}, 'ò': {langIT},
}

// latinLanguage returns the language of a Latin-script text by its
// function words (latinProfiles) and the letters only some languages write
// (latinMarks): a language other than English needs two such signs and
// more of them than English has words, or one with no English word at all
// and a letter of its own ("¿Cuántos días?"); else the text is English.
// Short texts with no sign either way are English.
func latinLanguage(text string) string {
	score := map[string]int{}
	marked := map[string]bool{}
	words := strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && r != '¿' && r != '¡'
	})
	for _, w := range words {
		seen := map[string]bool{}
		for _, r := range w {
			for _, l := range latinMarks[r] {
				if !seen[l] {
					seen[l] = true
					score[l]++
					marked[l] = true
				}
			}
		}
		w = strings.Trim(w, "¿¡")
		for l, set := range latinProfiles {
			if set[w] && !seen[l] {
				score[l]++
			}
		}
	}
	best, bestScore := "", 0
	for _, l := range []string{langES, langFR, langDE, langPT, langIT} {
		if score[l] > bestScore {
			best, bestScore = l, score[l]
		}
	}
	en := score[langEN]
	switch {
	case best == "":
		return langEN
	case bestScore >= 2 && bestScore > en:
		return best
	case en == 0 && marked[best]:
		return best
	}
	return langEN
}
