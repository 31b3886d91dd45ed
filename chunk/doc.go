// Package chunk splits converted Markdown documents into token-bounded chunks
// along their heading structure.
//
// It consumes converted files (see package convert) and produces [Chunk]s that
// carry their heading path, the document they came from, exact character
// offsets into the converted file and their token count.
package chunk
