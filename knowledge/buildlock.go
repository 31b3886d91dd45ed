package knowledge

import (
	"context"
	"errors"
)

// ErrBuildLocked is returned by [BuildLocker.LockBuild] when another build
// of the theme holds the store's lock.
var ErrBuildLocked = errors.New("knowledge: theme is being built by another vibe on this store")

// ErrThemeOwned is returned by [BuildLocker.LockBuild] when the theme in the
// store was built from another workspace: its document ids are paths
// relative to that workspace, so a build from here would overwrite them.
var ErrThemeOwned = errors.New("knowledge: theme was built from another workspace")

// ErrStoreWrite marks an ingest failure of the store itself (a lost
// connection, a deadlock, a full disk), as opposed to a bad document: the
// build stops instead of going on with the documents that did land.
var ErrStoreWrite = errors.New("knowledge: store write failed")

// BuildLocker is a store that keeps two builds of one theme apart, across
// processes and machines sharing it, and records which workspace a theme
// belongs to.
type BuildLocker interface {
	// LockBuild takes the theme's build lock without waiting (ErrBuildLocked,
	// naming the holder, when taken) and checks that the theme belongs to
	// workspace (ErrThemeOwned, naming the owner, when it was built from
	// another one, unless takeOver); it then records workspace as the
	// owner. release gives the lock back.
	LockBuild(ctx context.Context, theme, workspace string, takeOver bool) (release func(), err error)
}
