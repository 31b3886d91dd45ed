// Package curate gathers a theme's sources (local files, directories, globs
// and http(s) URLs) into knowledge/<theme>/source/, keeps each text once
// (exact and near duplicates), drops sources that fail quality checks with the
// reason recorded, and records everything in sources.lock.json.
package curate
