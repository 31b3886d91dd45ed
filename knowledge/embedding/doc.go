// Package embedding turns chunk texts into dense vectors for the knowledge
// store.
//
// It defines the [Embedder] contract and two implementations: [Local], a
// deterministic offline lexical embedder (hashed n-gram features, labelled
// "local-ngram-v2"), and an OpenAI-compatible remote embedder with batching,
// bounded concurrency, retries and a persistent cache.
package embedding
