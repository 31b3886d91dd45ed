// Package knowledge is vibe's domain root: the expert knowledge model
// (sop.yaml, patterns.yaml, rules.yaml, every item citing its evidence) and
// the [Store] contract for the chunked, embedded sources it cites.
//
// It consumes chunks (package chunk) and is consumed by extract, integrate and
// runtime. It has no third-party dependencies; the store implementations live
// in knowledge/sqlite (embedded, the default) and knowledge/pgvector
// (PostgreSQL), and both pass the suite in knowledge/storetest.
package knowledge
