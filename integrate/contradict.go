package integrate

import (
	"strings"
	"unicode"
)

// readerWords name the reader, the writer or someone unnamed: a condition
// of nothing else ("the student", "(The student", "you will") says no
// situation, so two rules sharing it share no condition, and opposite
// wording in their conclusions is no contradiction ("The student should
// work this out for himself" vs "(The student should work this out.) He
// cannot win by 1 P-Kt5").
var readerWords = map[string]bool{
	"you": true, "we": true, "i": true, "one": true, "he": true, "she": true, "it": true, "they": true,
	"student": true, "students": true, "reader": true, "readers": true, "beginner": true, "beginners": true,
	"learner": true, "pupil": true, "author": true, "writer": true, "whoever": true, "anyone": true,
	"will": true, "would": true, "shall": true, "should": true, "can": true, "could": true, "may": true,
	"might": true, "must": true, "need": true, "needs": true, "do": true, "does": true,
	"this": true, "that": true, "these": true, "those": true, "there": true, "here": true,
}

// statesSituation reports whether a rule's condition says anything a
// situation could be recognised by: a Han character, or an English word
// that is no function word and does not name the reader.
func statesSituation(cond string) bool {
	for _, w := range strings.FieldsFunc(strings.ToLower(cond), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '\'' && r != '’'
	}) {
		for _, r := range w {
			if unicode.Is(unicode.Han, r) {
				return true
			}
		}
		if len(w) > 2 && !readerWords[w] && !stopEN[w] {
			return true
		}
	}
	return false
}

// stopEN are English function words.
var stopEN = map[string]bool{"the": true, "and": true, "for": true, "with": true, "his": true, "her": true, "their": true, "your": true, "our": true, "its": true, "has": true, "have": true, "had": true, "are": true, "was": true, "were": true, "not": true, "but": true, "from": true, "into": true, "then": true, "than": true, "when": true, "once": true, "unless": true, "also": true, "himself": true, "herself": true, "yourself": true, "themselves": true}
