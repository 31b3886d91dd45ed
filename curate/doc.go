// Package curate gathers a theme's sources (local files, directories, globs
// and http(s) URLs) into knowledge/<theme>/source/, keeps each text once
// (exact and near duplicates), drops sources that fail quality checks with the
// reason recorded, and records everything in sources.lock.json.
//
// # curate.yaml
//
// knowledge/<theme>/curate.yaml says what to gather ([File], read with
// [LoadFile]; unknown keys are errors naming the line):
//
//	language: zh              # optional: zh, en (any Latin script), ja, ko, ru
//	sources:
//	  - books/                # a directory, searched recursively
//	  - 'scans/**/*.pdf'      # a glob; ** matches any number of directories
//	  - source: https://example.org/ziping.html
//	    notes: the online edition   # kept in the lock entry
//	quality:                  # optional; zero means the vibe.yaml curate.* value
//	  min_chars: 500
//	  max_garbled_ratio: 0.1
//	  near_duplicate: 0.8
//
// Relative paths are relative to the workspace. Directories and globs yield
// only convertible files (.pdf .epub .docx .html .htm .xhtml .txt .text .md
// .markdown), skip hidden files and directories, and are gathered in lexical
// order; the first of several duplicates is the one kept, so list the
// preferred edition first. [AppendSources] adds `--from` sources to the file,
// keeping the user's entries and comments.
//
// # Gathering and checks
//
// [Run] judges every candidate in order:
//
//   - unreadable or failed download (missing file, HTTP error, more than
//     MaxRedirects redirects, over MaxDownloadBytes, over DownloadTimeout):
//     dropped with Failed set;
//   - unsupported type: the type is sniffed from the bytes (%PDF, the zip
//     entries of EPUB and DOCX, an HTML prologue, a UTF-16 BOM, text without
//     NUL bytes), never trusted from a header or extension, and decides the
//     stored file's extension;
//   - duplicate of X: same sha256 as an earlier candidate;
//   - too little text: fewer than MinChars non-space characters in the text
//     returned by [Options.Extract];
//   - garbled: more than MaxGarbledRatio of those characters are U+FFFD,
//     control or private-use characters;
//   - wrong language (detected zh, wanted en): the dominant script (Han,
//     kana, Hangul, Latin, Cyrillic) does not fit language:;
//   - near-duplicate of X: the MinHash estimate (128 hashes) of the Jaccard
//     similarity of the two texts' 5-character shingles, after keeping only
//     lowercased letters and digits, is at least NearDuplicate
//     ([DefaultNearDuplicate] 0.8). The same book as PDF and EPUB scores well
//     above 0.9; different books on one subject score below 0.1.
//
// Kept files are copied to source/ under their own base name (collisions get
// -2, -3, ...; a name once given stays with its origin). Files in source/ that
// no kept entry names are removed, so convert drops their output. Files a user
// put into source/ by hand are sources of their own (recorded with their
// source/ path as origin), gathered after the listed ones, never overwritten,
// and when dropped moved aside to source/.dropped/ rather than deleted; a
// theme may have no curate.yaml at all.
//
// # Sources that fail, links, unsupported files
//
// A listed source that gives nothing as a whole (missing, unreadable, a
// failed download, or a directory or glob without one gathered file: an
// unmounted disk looks like an empty directory) never deletes the copies
// earlier runs made of it: their lock entries are kept as they were and
// [Result.Sources] reports the failure ([SourceReport.Err]) and what was kept
// ([SourceReport.Carried]). The copies go only when the source is no longer
// listed. Symlinks inside a directory or glob (and in source/ itself) that
// leave it are skipped and reported ([SourceReport.Links],
// [Result.HandLinks]); links inside it are followed. Files of other types
// are counted in [SourceReport.Unsupported].
//
// # Crash safety
//
// Copies are written atomically (a hidden temporary file renamed into place)
// and journaled in source/.curate-journal.json before they are made; the
// journal goes once the lock names them. A run killed between a copy and the
// lock leaves the journal, and the next run treats the files it names as its
// own copies; a leftover copy without a journal entry is adopted when it
// holds exactly the bytes of the origin curate would store under its name
// ([Result.Adopted]). Either way the next run gives the source/ and lock of
// an uninterrupted run: no *-2 copies, nothing moved to .dropped/. A copy
// edited by hand is put back from its unchanged origin and reported in
// [Result.Restored].
//
// # sources.lock.json
//
// [Lock] holds one [Entry] per candidate: origin, file, sha256, size,
// media_type, gathered_at, status (kept or dropped), reason, notes, failed.
// gathered_at is kept for unchanged entries and the lock is only rewritten
// when its content changes, so a re-run with nothing changed writes nothing
// ([Result.Changed] false).
//
// The package never prints and does not import convert: text extraction is
// injected as [Options.Extract].
package curate
