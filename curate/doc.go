// Package curate gathers a theme's sources (local files, directories, globs,
// http(s) URLs and git repositories) into knowledge/<theme>/source/, keeps
// each text once (exact and near duplicates), drops sources that fail
// quality checks with the reason recorded, grades the credibility of the
// rest, and records everything in sources.lock.json.
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
//	    title: 子平真诠              # title, author, publisher, edition,
//	    publisher: 中华书局          # published: the entry's provenance
//	  - github:owner/repo@v2:docs   # a git repository (see below)
//	  - source: git+https://git.example.org/team/notes.git
//	    include: [code]             # git sources: gather code as text too
//	quality:                  # optional; zero means the vibe.yaml curate.* value
//	  min_chars: 500
//	  max_garbled_ratio: 0.1
//	  near_duplicate: 0.8
//	credibility:
//	  floor: C                # keep out sources graded below C
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
//     above 0.9; different books on one subject score below 0.1. The kept
//     sources it is compared with are found through the signatures cut
//     into bands (candidates.go), which yields every kept source whose
//     estimate reaches the threshold: the decisions are those of comparing
//     it with every kept source, at a cost that does not grow with them.
//
// Kept files are copied to source/ under their own base name (collisions get
// -2, -3, ...; a name once given stays with its origin). Files in source/ that
// no kept entry names are removed, so convert drops their output. Files a user
// put into source/ by hand are sources of their own (recorded with their
// source/ path as origin), gathered after the listed ones, never overwritten,
// and when dropped moved aside to source/.dropped/ rather than deleted; a
// theme may have no curate.yaml at all.
//
// # Git sources
//
// github:owner/repo[@ref][:path] and git+<https|http|file>://...[@ref][:path]
// name a repository, a ref (branch, tag or commit; default the default
// branch) and a directory, file or glob in it. A remote repository is
// fetched into [Options.GitCacheDir] with a pure-Go git client (go-git):
// depth 1 the first time; when the ref moves, from the cached commit on, so
// only new objects travel (a rewritten history past MaxRepoBytes falls back
// to depth 1). A git+file:// repository is read in place. The documents
// under the path (by the extensions directories gather; hidden paths,
// symlinks and submodules skipped; code with include: [code]) are checked
// out into the cache, each written only when its blob changed, and
// gathered like the files of a directory: their origin is the repository,
// a colon and the path (no ref, so names stay when the ref changes), their
// provenance the repository, path and blob. [Lock.Git] records the commit
// each listed git source was gathered from; [SourceReport.Git] says what
// was added, changed and removed since. Files whose blob did not change are
// not copied or extracted again; removed files go like files removed from a
// directory, and a repository that cannot be read (no network, a deleted
// ref) keeps its copies like a vanished source. Errors wrap [ErrGitRef],
// [ErrGitPath], [ErrGitAuth], [ErrGitUnreachable] or [ErrTooLarge] and say
// what to do. Limits: MaxRepoBytes (fetched bytes and the selected
// documents' size), MaxRepoFiles, GitTimeout, and MaxDownloadBytes per file.
//
// # Credibility
//
// Every kept source gets a [Credibility]: a grade A-D from a score that
// starts at 1 and loses for each finding, recorded as a reason.
//
//   - Provenance: the repository and commit, the URL's host (http without
//     TLS loses 0.05), what curate.yaml or a Markdown file's front matter
//     says of title, author, publisher and edition (none of them, for a
//     file that is not from a repository, loses 0.05), a file put into
//     source/ by hand (0.05).
//   - Text quality: OCR-like noise (a Latin letter or stray symbol between
//     Chinese characters, a digit inside a word; up to 0.3), garbled
//     characters, a long last line that stops mid-sentence (0.05), the
//     converter's notes ([Options.ExtractDoc]: partial 0.25, garbled 0.3,
//     needs OCR 0.15, other warnings 0.02 each).
//   - Agreement: sources of the same work (MinHash similarity at least 0.2,
//     or one file name holding the other's, unless that name is shared with
//     more than 8 other sources: book00001.md ... book01500.md, or index.md
//     in every directory, name a kind of file, not a work; the pairs are
//     found through indexes, not by going through every pair) are aligned
//     passage by passage (see align.go); differing characters are laid on the less likely
//     reading by the two texts' bigrams (up to 0.4), and a source that
//     stops where the other goes on is truncated (0.2). Near-duplicates
//     dropped for a kept source are compared too.
//   - A model ([Options.Judge], optional): its grade and reason; the score
//     becomes 3/4 measured, 1/4 judged. Without one, Unjudged says why.
//
// A at 0.85 and above, B at 0.70, C at 0.50, D below. Agreements and
// judgements are cached by the texts' sha256. With [Options.CredibilityFloor]
// (curate.yaml credibility.floor) a source graded below the floor is dropped
// with its grade and reasons; a near-duplicate dropped for it takes its
// place when it passes the floor. Copies into source/ are made after the
// grading, so a source kept out is never copied.
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
// media_type, gathered_at, status (kept or dropped), reason, notes, failed,
// provenance ([Provenance]: repository, path, blob, URL, the search query
// and date for searched sources, title, author, publisher, edition) and
// credibility; and per git source its commit ([GitSource]).
// gathered_at is kept for unchanged entries and the lock is only rewritten
// when its content changes, so a re-run with nothing changed writes nothing
// ([Result.Changed] false).
//
// The package never prints and does not import convert: text extraction is
// injected as [Options.Extract].
package curate
